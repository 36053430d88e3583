"""New files are read and written a batch at a time inside the import's one transaction: the graph
must be the same whatever the batch size, and an import stopped after some batches leaves the
previous graph."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURES

from ctx.importers import engine
from ctx.importers.engine import import_path
from ctx.importers.markdown import ObsidianImporter
from ctx.store import connect, writes

TABLES = {
    "nodes": "SELECT id, title, body, type, tags, fields, aliases, source_path, file, parent_id, position,"
    " created, updated, content_hash, tokens, private FROM nodes ORDER BY id",
    "edges": "SELECT file, src, dst, type, target, by_id, label, position FROM edges ORDER BY 1, 2, 4, 5, 8, 7",
    "node_keys": "SELECT key, node_id, kind, priority FROM node_keys ORDER BY 1, 2, 3",
    "files": "SELECT path, size, hash FROM files ORDER BY path",
    "passages": 'SELECT node_id, ord, title, context, heading, text, tokens, hash FROM passage_texts ORDER BY 1, 2',
}


def dump(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    return {name: [tuple(r) for r in conn.execute(sql)] for name, sql in TABLES.items()}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    copy = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", copy)
    # Two files claiming the same alias, in different batches: the name resolves the same way.
    (copy / "Alias A.md").write_text("---\naliases: [Shared Name]\n---\nFirst.\n")
    (copy / "Zeta/Alias B.md").parent.mkdir()
    (copy / "Zeta/Alias B.md").write_text("---\naliases: [Shared Name]\n---\nSecond, links [[Shared Name]].\n")
    return copy


def test_the_graph_does_not_depend_on_the_batch_size(vault, tmp_path, monkeypatch):
    whole = connect(tmp_path / "whole.db", create=True)
    import_path(whole, vault)
    files = len(list(vault.rglob("*.md")))
    batches: list[int] = []
    record = writes.record_files

    def counted(conn, source_id, rows):
        if rows:  # the changed files' (none in a first import), then each batch of new files
            batches.append(len(rows))
        record(conn, source_id, rows)

    monkeypatch.setattr(engine, "BATCH_FILES", 3)
    monkeypatch.setattr(writes, "record_files", counted)
    batched = connect(tmp_path / "batched.db", create=True)
    import_path(batched, vault)
    assert sum(batches) == files and max(batches) == 3 and len(batches) == -(-files // 3)
    assert dump(batched) == dump(whole)

    # A re-import with changed, deleted and new files, batched or not, ends in the same graph too.
    notes = sorted(vault.rglob("*.md"))
    notes[2].write_text(notes[2].read_text() + "\nMore about [[Alias A]].\n")
    notes[5].unlink()
    for i in range(7):
        (vault / f"New {i}.md").write_text(f"New note {i} links [[Home]] and [[New {(i + 1) % 7}]].\n")
    import_path(batched, vault)
    monkeypatch.setattr(engine, "BATCH_FILES", 1000)
    import_path(whole, vault)
    assert dump(batched) == dump(whole)


def test_a_batch_limit_in_bytes_splits_too(vault, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "BATCH_BYTES", 1)  # every file is a batch of its own
    sizes: list[int] = []
    record = writes.record_files
    monkeypatch.setattr(writes, "record_files", lambda c, s, rows: (rows and sizes.append(len(rows)), record(c, s, rows)))
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    assert sizes == [1] * len(list(vault.rglob("*.md")))


def test_an_import_stopped_after_some_batches_leaves_the_previous_graph(vault, tmp_path, monkeypatch):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, FIXTURES / "outline-logseq", format="logseq")
    before = dump(conn)
    sources = conn.execute("SELECT id, root FROM sources").fetchall()
    monkeypatch.setattr(engine, "BATCH_FILES", 3)
    record = writes.record_files
    written: list[int] = []

    def interrupted(conn, source_id, rows):
        if not rows:
            return
        if len(written) == 2:
            raise KeyboardInterrupt  # Ctrl-C while the third batch is being written
        written.append(len(rows))
        record(conn, source_id, rows)

    monkeypatch.setattr(writes, "record_files", interrupted)
    with pytest.raises(KeyboardInterrupt):
        import_path(conn, vault)
    assert written == [3, 3] and not conn.in_transaction
    assert dump(conn) == before
    assert [tuple(r) for r in conn.execute("SELECT id, root FROM sources")] == [tuple(r) for r in sources]
    monkeypatch.setattr(writes, "record_files", record)
    import_path(conn, vault)
    assert conn.execute("SELECT COUNT(*) FROM files").fetchone()[0] > len(before["files"])


def test_new_files_that_all_fail_leave_no_source_behind(tmp_path, monkeypatch):
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(4):
        (vault / f"note {i}.md").write_text(f"note {i}")
    monkeypatch.setattr(engine, "BATCH_FILES", 2)

    def refuse(*args, **kwargs):
        raise engine.ImportFormatError("unreadable on purpose")

    monkeypatch.setattr(ObsidianImporter, "parse", refuse)
    conn = connect(tmp_path / "g.db", create=True)
    with pytest.raises(engine.ImportFormatError, match="unreadable on purpose"):
        import_path(conn, vault, format="obsidian")
    assert conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0] == 0
    assert not conn.in_transaction
