"""A node whose title is only its body's own first words (Tana names a node by its text; a long
first line is cut to a title ending in "…") is indexed without that title (migration 18): its
opening words must not count again, in the column weighted most, against a paragraph that
answers the question further in. Both engines index the same words; a graph from before the
migration indexes exactly as a new one afterwards."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctx.assemble.passage_rank import rank_passages
from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.migrations import MIGRATIONS
from ctx.store.passage_reads import indexed_title
from ctx.store.view import GraphView

QUESTION = "how should a choir practise breathing?"
# Each paragraph is longer than a title may be, so Tana's importer names it by its opening
# words cut with "…". The answer holds three of the question's words, none in its opening; the
# other holds two, one of them in its opening.
PARAGRAPHS = {
    "answer": "Before the first note of any rehearsal there is a quiet minute that many leaders skip. "
              "In it the choir should practise breathing together, four counts in and four out.",
    "opening": "Breathing exercises for a choir are sold in many books, yet most of them are written "
               "for soloists and ignore how a group sings together.",
}
FILLERS = [
    f"Filler paragraph number {i} talks about the weather, the harvest, the roads and the market "
    "in town, at length and with no end in sight."
    for i in range(8)
]
INDEXES = ("passages_fts", "passages_exact", "passages_fts_private", "passages_exact_private")


def _export(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    texts = {**PARAGRAPHS, **{f"filler-{i}": text for i, text in enumerate(FILLERS)}}
    docs = [{"id": "book", "props": {"name": "Singing book", "created": 1700000000000}, "children": list(texts)}]
    docs += [{"id": key, "props": {"name": text, "_ownerId": "book", "created": 1700000000000}}
             for key, text in texts.items()]
    path = folder / "workspace.json"
    path.write_text(json.dumps({"formatVersion": 1, "docs": docs}), encoding="utf-8")
    return path


def _postings(conn: sqlite3.Connection, index: str) -> list[tuple[object, ...]]:
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{index}_terms USING fts5vocab(main, {index}, instance)")
    return [tuple(r) for r in conn.execute(f"SELECT term, doc, col, offset FROM temp.{index}_terms ORDER BY 1, 2, 3, 4")]


def test_a_paragraph_is_not_ranked_by_its_own_opening_words(tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, _export(tmp_path / "tana"), format="tana")
    titles = dict(conn.execute("SELECT id, title FROM nodes WHERE id IN ('answer', 'opening')").fetchall())
    assert all(title.endswith("…") for title in titles.values())  # named by their opening words
    # The node keeps its title; only its passages are indexed without it.
    indexed = dict(conn.execute("SELECT node_id, title FROM passage_texts WHERE node_id IN ('answer', 'opening')"))
    assert indexed == {"answer": "", "opening": ""}
    assert conn.execute("SELECT title FROM passage_texts WHERE node_id = 'book'").fetchone() is None  # no body
    ranking = rank_passages(GraphView(conn), QUESTION, None)
    assert ranking.node_order()[:2] == ["answer", "opening"]
    # The title column holds nothing of theirs, in either index.
    for index in ("passages_fts", "passages_exact"):
        assert not conn.execute(
            f"SELECT rowid FROM {index} WHERE {index} MATCH ?", ("title : breathing",)
        ).fetchall()


def _json_graph(folder: Path, records: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "graph.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# Titles and bodies at the rule's edges: whole body, opening cut with "…", an ellipsis that is
# not a cut, a real title, an opening that stops one character short, accents and a body that
# merely starts like the title.
EDGE_RECORDS = [
    {"id": "whole", "title": "Short block text", "body": "Short block text"},
    {"id": "cut", "title": "Naïve opening words of a much longer…", "body": "Naïve opening words of a much longer paragraph."},
    {"id": "real-ellipsis", "title": "Wait for it…", "body": "Something else entirely, waiting."},
    {"id": "titled", "title": "Gardening", "body": "Gardening notes: tomatoes first, then beans."},
    {"id": "short-by-one", "title": "Opening word…", "body": "Opening wor and more"},
    {"id": "empty-title-cut", "title": "…", "body": "anything at all"},
    {"id": "multi", "title": "Long first…", "body": "Long first line\n\n## Part\n\nSecond part of the note."},
]


def test_the_view_and_the_python_rule_leave_out_the_same_titles(tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, _json_graph(tmp_path / "edges", EDGE_RECORDS), format="json")
    nodes = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, title, body FROM nodes")}
    rows = conn.execute("SELECT node_id, title FROM passage_texts ORDER BY id").fetchall()
    assert {r[0] for r in rows} == {r["id"] for r in EDGE_RECORDS}
    for node_id, title in rows:
        assert title == indexed_title(*nodes[node_id]), node_id
    left_out = {node_id for node_id, title in rows if title == ""}
    assert left_out == {"whole", "cut", "empty-title-cut", "multi"}


def _as_version_17(path: Path) -> None:
    """Put a graph back as schema 17 left it: the view giving every passage its node's title and
    the indexes holding those titles."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    changed = [r[0] for r in conn.execute(
        "SELECT t.id FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.title != n.title")]
    assert changed
    marks = ",".join("?" * len(changed))
    columns = "t.id, t.title, t.context, t.heading, t.text"
    for index in INDEXES:
        private = "!=" if index.endswith("_private") else "="
        conn.execute(f"INSERT INTO {index} ({index}, rowid, title, context, heading, text) SELECT 'delete', {columns}"
                     f" FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id IN ({marks})"
                     f" AND n.private {private} 0", changed)
    conn.execute("DROP VIEW passage_texts")
    conn.execute(
        "CREATE VIEW passage_texts AS SELECT p.id, p.node_id, p.ord, n.title, p.context, p.heading,"
        ' COALESCE(p.own_text, trim(substr(n.body, p.start + 1, p."end" - p.start), char(10))) AS text,'
        " p.tokens, p.hash FROM passages p JOIN nodes n ON n.id = p.node_id"
    )
    for index in INDEXES:
        private = "!=" if index.endswith("_private") else "="
        conn.execute(f"INSERT INTO {index} (rowid, title, context, heading, text) SELECT {columns}"
                     f" FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id IN ({marks})"
                     f" AND n.private {private} 0", changed)
    conn.execute("PRAGMA user_version = 17")
    conn.execute("COMMIT")
    conn.close()


def test_a_graph_from_schema_17_indexes_as_a_new_one_after_the_migration(tmp_path):
    export = _export(tmp_path / "tana")
    new = connect(tmp_path / "new.db", create=True)
    import_path(new, export, format="tana")
    import_path(new, _json_graph(tmp_path / "edges", EDGE_RECORDS), format="json")
    # One private node: its passages are in the private indexes, which the migration must fix too.
    new.execute("UPDATE nodes SET private = 1 WHERE id = 'cut'")
    expected = {index: _postings(new, index) for index in INDEXES}
    assert any(row[2] == "title" for row in expected["passages_fts"])  # real titles stay indexed
    new.close()

    old_path = tmp_path / "old.db"
    old_path.write_bytes((tmp_path / "new.db").read_bytes())
    _as_version_17(old_path)
    old = sqlite3.connect(old_path)
    before = _postings(old, "passages_exact")
    assert before != expected["passages_exact"]  # the old index holds the opening words as titles
    old.close()

    migrated = connect(old_path)
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 18
    for index in INDEXES:
        assert _postings(migrated, index) == expected[index], index
        # The index agrees with the view it reads (FTS5 compares every row's tokens).
        migrated.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 0)")
    assert rank_passages(GraphView(migrated), QUESTION, None).node_order()[0] == "answer"
    # Later writes keep the index in step: removing and re-importing the export.
    import_path(migrated, export, format="tana")
    for index in INDEXES:
        migrated.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 0)")


@pytest.fixture
def both(tmp_path: Path, pg_url: str):
    pytest.importorskip("psycopg")
    from ctx import Graph

    graphs = []
    export = _export(tmp_path / "tana")
    edges = _json_graph(tmp_path / "edges", EDGE_RECORDS)
    for target in (tmp_path / "g.db", pg_url):
        graph = Graph.open(target, create=True)
        graph.import_path(export, format="tana")
        graph.import_path(edges, format="json")
        graphs.append(graph)
    yield graphs
    for graph in graphs:
        graph.close()


def test_postgresql_indexes_the_same_words_and_ranks_the_answer_first(both):
    lite, pg = both
    for text in (QUESTION, "opening words", "short block text gardening", "wait for it"):
        terms = [w.strip("?").lower() for w in text.split()]
        a = lite.store.reader().search_passages(terms, limit=20)
        b = pg.store.reader().search_passages(terms, limit=20)
        assert [(h.id, h.node_id) for h in a] == [(h.id, h.node_id) for h in b], text
        assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-9), text
    assert rank_passages(pg.store.reader(), QUESTION, None).node_order()[0] == "answer"


def test_postgresql_migration_splits_only_nodes_named_by_their_opening_again(both, tmp_path):
    from ctx.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS

    lite, pg = both
    assert len(PG_MIGRATIONS) == len(MIGRATIONS)
    conn = pg.store.connection
    conn.execute(PG_MIGRATIONS[17])
    again = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE split = 0")}
    nodes = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, title, body FROM nodes")}
    assert again == {node_id for node_id, (title, body) in nodes.items() if title and indexed_title(title, body) == ""}
    assert {"answer", "opening", "whole", "cut"} <= again and "titled" not in again
    # The next write splits them again, with the same words indexed as SQLite's.
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "Note.md").write_text("A later note about breathing.\n")
    for graph in both:
        graph.import_path(extra)
    assert conn.execute("SELECT count(*) FROM nodes WHERE split = 0").fetchone()[0] == 0
    terms = ["choir", "practise", "breathing"]
    assert [(h.node_id, round(h.score, 9)) for h in lite.store.reader().search_passages(terms, limit=10)] == [
        (h.node_id, round(h.score, 9)) for h in pg.store.reader().search_passages(terms, limit=10)]


def test_passages_are_embedded_with_their_node_title_whatever_the_index_holds(tmp_path):
    """What a passage's vector is computed from (and its hash keys) keeps the node's title: the
    texts ``ctx embed`` and a build's candidates embed are the ones the split hashed."""
    from ctx.store.passage_reads import embed_text, passage_hash
    from ctx.store.vectors import candidate_passages, pending_passages

    conn = connect(tmp_path / "g.db", create=True)
    # A title cut short with "…" before its 40th character: the case where leaving it out of the
    # embedded text would change that text.
    records = [*EDGE_RECORDS, {"id": "early-cut", "title": "Early cut…", "body": "Early cut of a longer line."}]
    import_path(conn, _json_graph(tmp_path / "edges", records), format="json")
    pending = dict(pending_passages(conn, "some-model"))
    ids = [r[0] for r in conn.execute("SELECT id FROM passages ORDER BY id")]
    candidates = candidate_passages(conn, "some-model", ids)
    assert len(candidates) == len(ids) == len(pending)
    for _, node_id, digest, text, vector in candidates:
        assert vector is None and pending[digest] == text and passage_hash(text) == digest, node_id
    title, body = conn.execute("SELECT title, body FROM nodes WHERE id = 'early-cut'").fetchone()
    assert embed_text(title, "", "", body) in pending.values()
