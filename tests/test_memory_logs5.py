"""The memory benchmark's fifth generator (bench/memory_logs5.py, daily notes: sets 160 up) is
sound: the same seed writes the same bytes, the notes are ``memory_logs.py``'s for that seed renamed
for their day with no frontmatter, every evidence paragraph is in the note it names and no other,
and ctx dates each note by the day in its name, and gives long ones paragraph vectors."""

from __future__ import annotations

import datetime as dt
import json
import re

from conftest import bench_module, tree_bytes

memory_logs = bench_module("memory_logs")
memory_logs5 = bench_module("memory_logs5")


def test_same_seed_same_bytes_other_seed_other_vault(tmp_path):
    memory_logs5.generate(170, tmp_path / "a")
    memory_logs5.generate(170, tmp_path / "b")
    memory_logs5.generate(171, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_daily_notes_are_the_logs_renamed_for_their_day(tmp_path):
    summary = memory_logs5.generate(170, tmp_path / "daily")
    memory_logs.generate(170, tmp_path / "logs", memory_logs.MUSIQUE if memory_logs.MUSIQUE.exists() else None)
    daily = {p.relative_to(tmp_path / "daily" / "notes").as_posix(): p.read_text()
             for p in (tmp_path / "daily" / "notes").rglob("*.md")}
    logs = {p.relative_to(tmp_path / "logs" / "notes").as_posix(): p.read_text()
            for p in (tmp_path / "logs" / "notes").rglob("*.md")}
    assert summary["notes"] == len(daily) == len(logs)
    bodies = {}
    for rel, text in logs.items():
        head = re.match(r'---\ntitle: "?(.*?)"?\ndate: (\d{4}-\d{2}-\d{2})\n---\n\n', text)
        assert head, rel
        bodies[memory_logs5.daily_name(rel.split("/")[0], head.group(1), head.group(2))] = text[head.end():]
    assert bodies == daily  # the same text, under its day's name, without frontmatter
    for rel in daily:
        assert re.fullmatch(r"[a-z]+-1/\d{4}-\d{2}-\d{2}( [A-Z][\w ]+ \d+)?\.md", rel), rel
    questions = [json.loads(line) for line in (tmp_path / "daily" / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    for q in questions:
        for text, rel, day in zip(q["evidence"], q["files"], q["dates"], strict=True):
            assert [r for r, body in daily.items() if text in body] == [rel]
            assert rel.split("/")[1].startswith(day)


def test_ctx_dates_each_daily_note_by_its_name(tmp_path):
    from ctx.assemble import paragraph_vectors
    from ctx.importers.engine import import_path
    from ctx.store import as_store, connect

    memory_logs5.generate(170, tmp_path / "set")
    notes = tmp_path / "set" / "notes"
    files = sorted(p.relative_to(notes).as_posix() for p in notes.rglob("*.md"))
    conn = connect(tmp_path / "graph.db", create=True)
    try:
        import_path(conn, notes)
        rows = dict(conn.execute("SELECT source_path, created FROM nodes WHERE type = 'note'").fetchall())
        owners = {p for p, _, _ in paragraph_vectors.wanted(as_store(conn).reader(include_private=True))}
        logs = set(conn.execute(f"SELECT DISTINCT n.source_path FROM passages p JOIN nodes n ON n.id = p.node_id"
                                f" WHERE p.hash IN ({','.join('?' * len(owners))})", sorted(owners)).fetchall())
    finally:
        conn.close()
    days = {path: dt.datetime.fromtimestamp(created, dt.timezone.utc).date().isoformat() for path, created in rows.items()}
    assert days == {rel: rel.split("/")[1][:10] for rel in files}
    assert logs  # long multi-topic days are dated logs: their paragraphs get vectors


def test_an_export_named_for_a_day_does_not_make_its_pages_daily_notes(tmp_path):
    """Only a Markdown file is one note: a JSON export named ``2024-05-28-export.json`` made every
    long page in it a daily note, given paragraph vectors by the file's name (probe58). The same
    day's text as ``2024-05-28.md`` is one."""
    import json

    from ctx.assemble import paragraph_vectors
    from ctx.importers.engine import import_path
    from ctx.store import as_store, connect

    memory_logs5.generate(170, tmp_path / "set")
    day = max((tmp_path / "set" / "notes").rglob("*.md"), key=lambda p: len(p.read_text(encoding="utf-8")))
    body = day.read_text(encoding="utf-8")
    sources = {"vault": (f"{day.stem}.md", body),
               "export": (f"{day.stem[:10]}-export.json",
                          json.dumps({"nodes": [{"id": "garden-page", "title": "Garden and budget", "body": body}]}))}
    wanted = {}
    for name, (file_name, text) in sources.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / file_name).write_text(text, encoding="utf-8")
        conn = connect(tmp_path / f"{name}.db", create=True)
        try:
            import_path(conn, tmp_path / name / file_name if name == "export" else tmp_path / name)
            wanted[name] = len(paragraph_vectors.wanted(as_store(conn).reader(include_private=True)))
        finally:
            conn.close()
    assert wanted["vault"] > 0 and wanted["export"] == 0, wanted
