"""A warm process keeps how many notes hold a word (``warm.notes_matching``: the names a new
question's seeds hold are counted again and again) under the graph's state and the reader's
visibility: on a real graph, an import that adds notes holding the word is seen by the next count,
a reader with private access counts its own, and a process not warm keeps nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx.assemble import warm
from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.sqlite_store import SqliteStore


pytestmark = pytest.mark.usefixtures("ctx_home")


def write_vault(root: Path) -> Path:
    vault = root / "vault"
    vault.mkdir()
    # "Zorblat" is in three notes, one of them private; "Quibble" in one.
    (vault / "One.md").write_text("# One\n\nZorblat met Quibble at the harbour.\n")
    (vault / "Two.md").write_text("# Two\n\nThe zorblat plan, again.\n")
    (vault / "Three.md").write_text("---\ntags: [private]\n---\n# Three\n\nA private zorblat.\n")
    (vault / "Four.md").write_text("# Four\n\nNothing of the kind.\n")
    return vault


@pytest.fixture
def graph(tmp_path: Path) -> sqlite3.Connection:
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path))
    assert conn.execute("SELECT private FROM nodes WHERE title = 'Three'").fetchone()[0] == 1
    return conn


def test_counts_are_the_readers_and_kept_until_the_graph_moves(graph: sqlite3.Connection, tmp_path: Path, warm_process) -> None:
    store = SqliteStore(graph)
    public, private = store.reader(), store.reader(include_private=True)
    assert warm.notes_matching(public, "Zorblat", at_most=50) == public.notes_matching("Zorblat", at_most=50) == 2
    assert warm.notes_matching(private, "Zorblat", at_most=50) == 3  # its own, not the public reader's
    assert warm.notes_matching(public, "Zorblat", at_most=2) == 2
    assert warm.notes_matching(public, "Quibble", at_most=50) == 1
    # Kept: the next view of the same state asks the index nothing.
    asked: list[str] = []
    graph.set_trace_callback(lambda sql: asked.append(sql) if "MATCH" in sql else None)
    assert warm.notes_matching(store.reader(), "Zorblat", at_most=50) == 2
    assert warm.notes_matching(store.reader(include_private=True), "Zorblat", at_most=50) == 3
    assert asked == []
    graph.set_trace_callback(None)
    # An import adding two notes that hold the word moves the state: the next count sees them.
    (tmp_path / "vault" / "Five.md").write_text("# Five\n\nZorblat the fifth.\n")
    (tmp_path / "vault" / "Six.md").write_text("# Six\n\nZorblat, sixth.\n")
    import_path(graph, tmp_path / "vault")
    assert warm.notes_matching(store.reader(), "Zorblat", at_most=50) == 4
    assert warm.notes_matching(store.reader(include_private=True), "Zorblat", at_most=50) == 5
    # Deleting a note moves it again.
    graph.execute("DELETE FROM nodes WHERE title = 'Five'")
    assert warm.notes_matching(store.reader(), "Zorblat", at_most=50) == 3


def test_forget_drops_the_counts_and_a_cold_process_keeps_none(graph: sqlite3.Connection) -> None:
    store = SqliteStore(graph)
    warm.enable()
    try:
        assert warm.notes_matching(store.reader(), "Zorblat", at_most=50) == 2
        assert len(warm._match_counts) == 1
        warm.forget()
        assert not warm._match_counts
    finally:
        warm.disable()
    assert warm.notes_matching(store.reader(), "Zorblat", at_most=50) == 2
    assert not warm._match_counts
