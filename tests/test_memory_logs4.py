"""The memory benchmark's fourth generator (bench/memory_logs4.py, assistant chat exports: sets 130
up) is sound: the same seed writes the same bytes, every conversation is turns under ``#### User`` /
``#### Assistant`` headings dated by ``created:`` with a zone, every evidence paragraph is said by
the user in the conversation it names and in no other file, ``multi`` spans conversations, and ctx
dates each conversation by the day written in it."""

from __future__ import annotations

import json
import re

from conftest import bench_module, tree_bytes

memory_logs4 = bench_module("memory_logs4")


def test_same_seed_same_bytes_other_seed_other_export(tmp_path):
    memory_logs4.generate(150, tmp_path / "a")
    memory_logs4.generate(150, tmp_path / "b")
    memory_logs4.generate(151, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_conversations_are_turns_and_evidence_is_the_users_and_unique(tmp_path):
    summary = memory_logs4.generate(150, tmp_path)
    root = tmp_path / "notes"
    notes = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.md")}
    assert summary["notes"] == len(notes) >= 26
    created = {}
    for rel, text in notes.items():
        head = re.match(r'---\ntitle: "([^"]+)"\ncreated: (\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}\+01:00\n', text)
        assert head, rel
        created[rel] = head.group(2)
        assert head.group(2) not in text[head.end():]  # the day is in the frontmatter only
        turns = re.findall(r"^#### (User|Assistant)$", text, re.M)
        assert turns[0] == "User" and turns == ["User", "Assistant"] * (len(turns) // 2)
    questions = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    assert {q["kind"] for q in questions} == {"single", "when", "multi", "open", "latest"}
    for q in questions:
        for text, rel, date in zip(q["evidence"], q["files"], q["dates"], strict=True):
            assert [r for r, body in notes.items() if text in body] == [rel]
            assert created[rel] == date
            body = notes[rel]
            assert f"\n\n{text}\n" in body  # a paragraph of its own
            turn = body[:body.index(text)].rsplit("#### ", 1)[1]
            assert turn.startswith("User\n")  # said by the user, not the assistant
        if q["kind"] == "multi":
            assert len(set(q["files"])) >= 2


def test_ctx_dates_each_conversation_by_the_day_written(tmp_path):
    import datetime as dt

    from ctx.importers.engine import import_path
    from ctx.store import connect

    memory_logs4.generate(150, tmp_path / "set")
    chats = sorted((tmp_path / "set" / "notes" / "chats").glob("*.md"))
    conn = connect(tmp_path / "graph.db", create=True)
    try:
        import_path(conn, tmp_path / "set" / "notes")
        rows = conn.execute("SELECT source_path, created FROM nodes WHERE type = 'note'").fetchall()
    finally:
        conn.close()
    days = {path: dt.datetime.fromtimestamp(created, dt.timezone.utc).date().isoformat() for path, created in rows}
    written = {f"chats/{p.name}": re.search(r"^created: (\d{4}-\d{2}-\d{2})", p.read_text(), re.M).group(1)
               for p in chats}
    assert {p: days.get(p) for p in written} == written
