"""A passage search told every node its reader may see (a warm process's complete node details)
reads its hits' nodes from the passages alone, and a reader's view asks the schema once per name.
Both must give exactly the hits the plain search gives: on a real graph with private notes, with
and without private access, and with an index out of step with its table (a node deleted behind
the passages' trigger), where only the visible set can tell that a hit's node is gone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx.assemble import warm
from ctx.assemble.passage_rank import query_terms
from ctx.importers.engine import import_path
from ctx.store import connect, passage_reads
from ctx.store.fts import schema_has
from ctx.store.sqlite_store import SqliteStore

QUESTIONS = ("apollo launch plan", "zorblat diary", "apollo", "entry plan zorblat", "rocket fuel budget")


def write_vault(root: Path) -> Path:
    vault = root / "vault"
    vault.mkdir()
    (vault / "Public.md").write_text("# Public\n\nThe launch plan for apollo.\n\nA second paragraph on the plan.\n")
    (vault / "Secret.md").write_text("---\ntags: [private]\n---\n# Secret\n\nThe apollo zorblat.\n")
    (vault / "Journal.md").write_text("# Journal\n\nApollo diary entry.\n\n## Later\n\nThe zorblat plan.\n")
    (vault / "Rocket.md").write_text("# Rocket\n\nFuel, budget and the apollo launch.\n")
    return vault


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def graph(tmp_path: Path) -> sqlite3.Connection:
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path))
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] >= 1
    return conn


def visible_ids(conn: sqlite3.Connection, include_private: bool) -> set[str]:
    where = "" if include_private else " WHERE private = 0"
    return {r[0] for r in conn.execute("SELECT id FROM nodes" + where)}


def hits(conn: sqlite3.Connection, question: str, include_private: bool, visible: set[str] | None) -> list[tuple]:
    found = passage_reads.search(conn, query_terms(question), limit=50, include_private=include_private, visible=visible)
    return [(h.id, h.node_id, h.score) for h in found]


@pytest.mark.parametrize("include_private", [False, True])
def test_the_same_hits_with_the_visible_nodes(graph: sqlite3.Connection, include_private: bool) -> None:
    visible = visible_ids(graph, include_private)
    answered = 0
    for question in QUESTIONS:
        plain = hits(graph, question, include_private, None)
        assert hits(graph, question, include_private, visible) == plain
        answered += bool(plain)
    assert answered >= 4


def test_a_hit_whose_node_is_gone_is_left_out_as_the_join_leaves_it(graph: sqlite3.Connection) -> None:
    # The node goes without its passages (the trigger that deletes them set aside): the passage
    # indexes still hold its passages, the joined query finds no node for them.
    node = graph.execute("SELECT id FROM nodes WHERE title = 'Public'").fetchone()[0]
    graph.execute("DROP TRIGGER nodes_passages_bd")
    graph.execute("DELETE FROM nodes WHERE id = ?", (node,))
    assert graph.execute("SELECT COUNT(*) FROM passages WHERE node_id = ?", (node,)).fetchone()[0] >= 1
    visible = visible_ids(graph, False)
    plain = hits(graph, "apollo launch plan", False, None)
    assert plain and node not in {h[1] for h in plain}
    assert hits(graph, "apollo launch plan", False, visible) == plain
    # Told a set that still holds the node, the search would show it: the set is what decides.
    assert node in {h[1] for h in hits(graph, "apollo launch plan", False, visible | {node})}


def test_a_view_asks_the_schema_once_per_name_and_a_new_view_asks_again(graph: sqlite3.Connection) -> None:
    store = SqliteStore(graph)
    asked: list[str] = []
    graph.set_trace_callback(lambda sql: asked.append(sql) if "sqlite_master" in sql else None)
    view = store.reader()
    first = [
        (view.notes_matching(q, at_most=50), [(h.id, h.score) for h in view.search_passages(query_terms(q), limit=20)],
         [(h.id, h.score) for h in view.search(q, limit=10, snippets=False)])
        for q in QUESTIONS
    ]
    view.passages_of([r[0] for r in graph.execute("SELECT id FROM nodes")])
    assert 1 <= len(asked) <= 4  # the three indexes' private twins and the text view, once each
    graph.set_trace_callback(None)
    # The same answers as the store's own functions, which ask every time.
    from ctx.store import reads

    for q, (count, passages, nodes) in zip(QUESTIONS, first):
        assert count == reads.count_matches(graph, q, at_most=50)
        assert passages == [(h.id, h.score) for h in passage_reads.search(graph, query_terms(q), limit=20, include_private=False)]
        assert nodes == [(h.id, h.score) for h in reads.search(graph, q, limit=10, snippets=False)]
    # What a view learned is its own: a graph whose public index lost its private twin (as one
    # from before the split) is read as such by the next view.
    assert schema_has(graph, "table", "passages_fts_private", view._schema)
    graph.execute("DROP TABLE passages_fts_private")
    assert schema_has(graph, "table", "passages_fts_private", view._schema)  # kept for its build
    assert not schema_has(graph, "table", "passages_fts_private", store.reader()._schema)


def test_the_warm_visible_nodes_are_kept_under_the_graph_state(graph: sqlite3.Connection, tmp_path: Path, warm_process) -> None:
    store = SqliteStore(graph)
    reader = store.reader()
    assert warm.visible_nodes(reader) is None  # nothing preloaded yet
    assert warm.preload(reader)
    kept = warm.visible_nodes(store.reader())
    assert kept is not None and set(kept) == visible_ids(graph, False)
    assert warm.visible_nodes(store.reader(include_private=True)) is None  # another reader's visibility
    # An import that adds a note moves the graph's state: what was kept is not served for it.
    (tmp_path / "vault" / "New.md").write_text("# New\n\nAn apollo note written later.\n")
    import_path(graph, tmp_path / "vault")
    assert graph.execute("SELECT COUNT(*) FROM nodes WHERE title = 'New'").fetchone()[0] == 1
    assert warm.visible_nodes(store.reader()) is None
    assert warm.preload(store.reader())
    again = warm.visible_nodes(store.reader())
    assert again is not None and set(again) == visible_ids(graph, False)
