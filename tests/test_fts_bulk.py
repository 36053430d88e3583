"""Imports index new rows in bulk (store/fts.py): the indexes must hold exactly what the per-row
triggers would have written, after re-imports and deletions, and after a rolled-back import."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, passages, writes
from ctx.store.fts import indexed_in_bulk
from ctx.store.transaction import transaction

from conftest import FIXTURES

INDEXES = ("nodes_fts", "passages_fts", "passages_exact")
NODE_COLUMNS = (
    "rowid, id, title, body, type, tags, fields, aliases, source_id, source_path, file, parent_id,"
    " position, created, updated, content_hash, tokens, private, split"
)
PASSAGE_COLUMNS = 'id, node_id, ord, start, "end", context, heading, own_text, tokens, hash'


def postings(conn: sqlite3.Connection, index: str) -> list[tuple[object, ...]]:
    """Every (term, row, column, offset) the index holds: equal lists are equal indexes."""
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{index}_postings USING fts5vocab(main, {index}, instance)")
    rows = conn.execute(f"SELECT term, doc, col, offset FROM temp.{index}_postings ORDER BY 1, 2, 3, 4")
    return [tuple(r) for r in rows]


def by_triggers(graph: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    """A copy of ``graph``'s nodes and passages written a row at a time, through the triggers."""
    copy = connect(path, create=True)
    copy.execute("ATTACH DATABASE ? AS original", (str(graph.execute("PRAGMA database_list").fetchone()[2]),))
    with transaction(copy):
        copy.execute(f"INSERT INTO nodes ({NODE_COLUMNS}) SELECT {NODE_COLUMNS} FROM original.nodes ORDER BY rowid")
        # Inserting the nodes does not split them: the passages are copied as they are.
        copy.execute(f"INSERT INTO passages ({PASSAGE_COLUMNS}) SELECT {PASSAGE_COLUMNS} FROM original.passages ORDER BY id")
    copy.execute("DETACH DATABASE original")
    return copy


def assert_indexed_as_by_triggers(graph: sqlite3.Connection, tmp_path: Path, name: str) -> None:
    expected = by_triggers(graph, tmp_path / f"{name}.db")
    for index in INDEXES:
        found = postings(graph, index)
        assert found, index
        assert found == postings(expected, index), index
        # FTS5's own check of the index against its content table.
        graph.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
    expected.close()


def triggers(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}


@pytest.fixture
def vaults(tmp_path: Path) -> tuple[Path, Path]:
    markdown = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", markdown)
    outline = tmp_path / "outline"
    shutil.copytree(FIXTURES / "outline-logseq", outline)
    return markdown, outline


def test_bulk_indexes_equal_the_triggers_through_imports_and_re_imports(tmp_path, vaults):
    markdown, outline = vaults
    conn = connect(tmp_path / "g.db", create=True)
    all_triggers = triggers(conn)
    import_path(conn, markdown)
    import_path(conn, outline, format="logseq")
    assert triggers(conn) == all_triggers
    assert_indexed_as_by_triggers(conn, tmp_path, "first")

    notes = sorted(markdown.rglob("*.md"))
    notes[0].write_text(notes[0].read_text() + "\n\nA zeppelin appended later, with #newtag.\n")
    notes[1].unlink()
    (markdown / "Fresh note.md").write_text("# Fresh\n\nLinks to [[Home]] and talks of quokkas.\n")
    import_path(conn, markdown)
    assert triggers(conn) == all_triggers
    assert_indexed_as_by_triggers(conn, tmp_path, "second")
    hits = conn.execute("SELECT COUNT(*) FROM passages_exact WHERE passages_exact MATCH 'quokkas'").fetchone()[0]
    assert hits == 1


def test_a_rolled_back_import_leaves_the_indexes_and_triggers_as_they_were(tmp_path, vaults, monkeypatch):
    from ctx.store import passages

    markdown, outline = vaults
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, markdown)
    before = {index: postings(conn, index) for index in INDEXES}
    all_triggers = triggers(conn)

    def split_then_fail(conn: sqlite3.Connection, progress=None) -> int:
        done = refresh(conn)
        assert done > 0 and "passages_ai" in triggers(conn)
        raise RuntimeError("killed after splitting")

    refresh = passages.refresh
    monkeypatch.setattr(passages, "refresh", split_then_fail)
    with pytest.raises(RuntimeError, match="killed after splitting"):
        import_path(conn, outline, format="logseq")
    monkeypatch.setattr(passages, "refresh", refresh)

    assert not conn.in_transaction
    assert triggers(conn) == all_triggers
    assert {index: postings(conn, index) for index in INDEXES} == before
    assert_indexed_as_by_triggers(conn, tmp_path, "rolled-back")
    # The next import goes through, and its rows are indexed as the triggers would have.
    import_path(conn, outline, format="logseq")
    assert_indexed_as_by_triggers(conn, tmp_path, "after")


def test_rows_of_a_failed_statement_inside_the_block_are_still_indexed(tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    with transaction(conn):
        conn.execute("INSERT INTO sources (root, name, format) VALUES ('/x', 'x', 'obsidian')")
        try:
            with indexed_in_bulk(
                conn, "nodes_ai", "nodes", "rowid",
                ("INSERT INTO nodes_fts (rowid, title, aliases, body) SELECT rowid, title, aliases, body FROM nodes WHERE rowid > ?",),
            ):
                conn.execute("INSERT INTO nodes (id, title, body, source_id, content_hash) VALUES ('a', 'Alpaca', 'wool', 1, 'h')")
                conn.execute("INSERT INTO nodes (id, title, body, source_id, content_hash) VALUES ('a', 'Again', '', 1, 'h')")
        except sqlite3.IntegrityError:
            pass
        assert "nodes_ai" in triggers(conn)
    assert [tuple(r) for r in conn.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'wool'")] == [(1,)]
    conn.execute("INSERT INTO nodes_fts (nodes_fts, rank) VALUES ('integrity-check', 1)")


def test_outside_a_transaction_the_trigger_does_the_indexing(tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    conn.execute("INSERT INTO sources (root, name, format) VALUES ('/x', 'x', 'obsidian')")
    with indexed_in_bulk(conn, "nodes_ai", "nodes", "rowid", ("SELECT ?",)):
        assert "nodes_ai" in triggers(conn)
        conn.execute("INSERT INTO nodes (id, title, body, source_id, content_hash) VALUES ('a', 'Alpaca', 'wool', 1, 'h')")
    assert [tuple(r) for r in conn.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'wool'")] == [(1,)]


def indexes(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    return {(r[0], r[1]) for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}


def test_a_first_import_builds_the_readers_indexes_at_its_end(tmp_path, vaults, monkeypatch):
    """Into an empty graph an import drops the indexes only readers need and builds them once
    its rows are written; killed half-way, the graph keeps every index, and a later import
    (into a graph with nodes) never drops any."""
    markdown, outline = vaults
    conn = connect(tmp_path / "g.db", create=True)
    fresh = indexes(conn)
    dropped: list[set[tuple[str, str]]] = []
    resolve = writes.resolve_edges

    def resolve_seeing_indexes(conn: sqlite3.Connection, source_id: int, **kwargs: bool) -> None:
        dropped.append(fresh - indexes(conn))
        resolve(conn, source_id, **kwargs)

    monkeypatch.setattr(writes, "resolve_edges", resolve_seeing_indexes)
    monkeypatch.setattr(passages, "refresh", lambda conn, progress=None: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        import_path(conn, markdown)
    assert {name for name, _ in dropped[-1]} >= {"edges_in", "edges_out", "node_keys_by_node"}
    assert indexes(conn) == fresh and conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 0
    monkeypatch.undo()
    monkeypatch.setattr(writes, "resolve_edges", resolve_seeing_indexes)
    import_path(conn, markdown)
    assert dropped[-1] and indexes(conn) == fresh
    import_path(conn, outline, format="logseq")
    assert dropped[-1] == set() and indexes(conn) == fresh
    assert_indexed_as_by_triggers(conn, tmp_path, "first")


def test_a_first_import_fills_each_full_text_index_once_at_its_end(tmp_path, vaults, monkeypatch):
    """Into an empty graph, nodes and passages written a batch at a time enter each index in one
    fill at the end (not one per batch); a later import, into a graph with rows, fills per batch.
    Either way the indexes hold what the per-row triggers would have written."""
    from ctx.importers import engine
    from ctx.store import fts

    markdown, outline = vaults
    monkeypatch.setattr(engine, "BATCH_FILES", 2)
    fills: list[str] = []
    fill_after = fts.fill_after

    def counted(conn: sqlite3.Connection, fill: tuple[str, ...], before: int) -> None:
        fills.extend(statement.split()[2] for statement in fill)
        fill_after(conn, fill, before)

    monkeypatch.setattr(fts, "fill_after", counted)
    conn = connect(tmp_path / "g.db", create=True)
    all_triggers = triggers(conn)
    import_path(conn, markdown)
    files = len(list(markdown.rglob("*.md")))
    assert files > 4  # several batches
    assert sorted(fills) == sorted(INDEXES + tuple(index + fts.PRIVATE_SUFFIX for index in INDEXES))
    assert triggers(conn) == all_triggers
    assert_indexed_as_by_triggers(conn, tmp_path, "first")
    fills.clear()
    import_path(conn, outline, format="logseq")
    assert fills.count("nodes_fts") > 1  # a batch at a time into a graph with rows
    assert triggers(conn) == all_triggers
    assert_indexed_as_by_triggers(conn, tmp_path, "second")


def test_the_content_counters_triggers_wait_for_a_first_imports_last_write(tmp_path, vaults, monkeypatch):
    """A first import sets the content counter's row triggers aside (one bump says it all) until
    its last write: its privacy flags and passages, written after the readers' indexes are
    built, fired them once per row. A later import keeps them throughout, and every trigger is
    back after each."""
    markdown, outline = vaults
    conn = connect(tmp_path / "g.db", create=True)
    all_triggers = triggers(conn)
    counter_triggers = {name for name in all_triggers if name.endswith("_content")}
    assert {"nodes_update_content", "passages_insert_content"} <= counter_triggers
    seen: list[set[str]] = []
    refresh = passages.refresh

    def refresh_seeing_triggers(conn: sqlite3.Connection, progress=None) -> int:
        seen.append(triggers(conn) & counter_triggers)
        return refresh(conn, progress)

    monkeypatch.setattr(passages, "refresh", refresh_seeing_triggers)
    before = conn.execute("SELECT n FROM content_version").fetchone()[0]
    import_path(conn, markdown)
    assert seen[-1] == set()
    assert triggers(conn) == all_triggers
    # Three bumps, not one per row: the source's row and the reading it was imported at
    # (``engine.read_at``; both written before the triggers go aside) and the setting aside itself.
    assert conn.execute("SELECT n FROM content_version").fetchone()[0] == before + 3
    import_path(conn, outline, format="logseq")
    assert seen[-1] == counter_triggers and triggers(conn) == all_triggers
    assert_indexed_as_by_triggers(conn, tmp_path, "second")


def test_a_first_import_that_fails_leaves_empty_indexes_and_every_trigger(tmp_path, vaults, monkeypatch):
    """Killed after its rows are written, a first import rolls back with its deferred fills: nothing
    is indexed then or later (when the abandoned session is collected), and the next import is
    indexed as the triggers would have done."""
    import gc

    markdown, _ = vaults
    conn = connect(tmp_path / "g.db", create=True)
    all_triggers = triggers(conn)
    monkeypatch.setattr(passages, "refresh", lambda conn, progress=None: (_ for _ in ()).throw(RuntimeError("killed")))
    with pytest.raises(RuntimeError, match="killed"):
        import_path(conn, markdown)
    monkeypatch.undo()
    gc.collect()
    assert not conn.in_transaction and triggers(conn) == all_triggers
    assert conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 0
    assert all(postings(conn, index) == [] for index in INDEXES)
    import_path(conn, markdown)
    assert_indexed_as_by_triggers(conn, tmp_path, "after")
