"""The memory benchmark's third generator (bench/memory_logs3.py, Logseq journals: sets 10 and up)
is sound: the same seed writes the same bytes, it is a Logseq graph whose day pages carry no date
but their file name, every evidence block is in the day it names and in no other file, ``multi``
spans days, and ctx imports each day as a dated journal page of blocks."""

from __future__ import annotations

import json
import re

from conftest import bench_module, tree_bytes

memory_logs3 = bench_module("memory_logs3")


def test_same_seed_same_bytes_other_seed_other_journal(tmp_path):
    memory_logs3.generate(12, tmp_path / "a")
    memory_logs3.generate(12, tmp_path / "b")
    memory_logs3.generate(13, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_day_pages_are_outlines_dated_by_name_and_evidence_is_unique(tmp_path):
    summary = memory_logs3.generate(12, tmp_path)
    root = tmp_path / "notes"
    assert (root / "logseq" / "config.edn").is_file()
    notes = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.md")}
    assert summary["notes"] == len(notes)
    days = {rel: text for rel, text in notes.items() if rel.startswith("journals/")}
    assert len(days) >= 30
    for rel, text in days.items():
        assert re.fullmatch(r"journals/\d{4}_\d{2}_\d{2}\.md", rel)
        assert not re.search(r"\d{4}-\d{2}-\d{2}", text)  # the day is the file name, nowhere else
        assert "\n\n" not in text and all(re.match(r"\t*- ", line) for line in text.splitlines())
    questions = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    assert {q["kind"] for q in questions} == {"single", "when", "multi", "open", "latest"}
    for q in questions:
        for text, rel, date in zip(q["evidence"], q["files"], q["dates"], strict=True):
            assert [r for r, body in notes.items() if text in body] == [rel]
            assert rel == f"journals/{date.replace('-', '_')}.md"
            assert f"\t- {text}\n" in notes[rel]  # one child block under its page's bullet
        if q["kind"] == "multi":
            assert len(set(q["files"])) >= 2


def test_ctx_reads_each_day_as_a_dated_journal_of_blocks(tmp_path):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    memory_logs3.generate(12, tmp_path / "set")
    days = sorted((tmp_path / "set" / "notes" / "journals").glob("*.md"))
    conn = connect(tmp_path / "graph.db", create=True)
    try:
        import_path(conn, tmp_path / "set" / "notes")
        journals = conn.execute("SELECT COUNT(*) FROM nodes WHERE type = 'journal'").fetchone()[0]
        assert journals == len(days)
        # Every bullet line of the day pages is a block node.
        bullets = sum(len(p.read_text().splitlines()) for p in days)
        in_days = conn.execute(
            "SELECT COUNT(*) FROM nodes WHERE type = 'block' AND source_path LIKE 'journals/%'").fetchone()[0]
        assert in_days == bullets
    finally:
        conn.close()
