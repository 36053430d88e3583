"""Full-text rankings read from the index alone (``reads._ranked``, ``passage_reads._ranked``) give
exactly the rows of the queries that join every match with its node before sorting: the same
ids, scores and order, ties included, for readers with and without private access, and in a
graph whose public index still holds private rows (from before migration 10), where the joined
query is used. The graph is built so that ties are everywhere: hundreds of notes of the same
length matching a word once score the same, and the notes' ids sort in another order than
their rows (imported in a shuffled order), so a tie broken by row instead of id would show."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, passage_reads, reads
from ctx.store.fts import searched_indexes

NOTES = 360


def write_graph(root: Path) -> Path:
    rng = random.Random(5)
    words = ["apollo", "launch", "orbit", "fuel", "crew", "pad", "delay", "budget"]
    records = []
    for i in range(NOTES):
        # Most notes alike in length and wording (ties); some longer, some titled by a word.
        body = " ".join(rng.choice(words) for _ in range(6 if i % 7 else 14))
        records.append({
            "id": f"n{rng.randrange(10**6):06d}-{i}",
            "title": f"{words[i % len(words)]} note" if i % 11 == 0 else f"Entry {i}",
            "body": body,
            "tags": ["private"] if i % 9 == 0 else [],
        })
    rng.shuffle(records)
    path = root / "graph.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture()
def conn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> sqlite3.Connection:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(home)
    db = connect(tmp_path / "g.db", create=True)
    import_path(db, write_graph(tmp_path), format="json")
    assert db.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] == NOTES // 9 + 1
    return db


def joined_node_hits(conn: sqlite3.Connection, text: str, limit: int, include_private: bool) -> list[tuple]:
    """The joined query over every index the reader searches, merged as ``reads.search`` does."""
    query = reads.fts_query(text, "or")
    visible = "1" if include_private else "n.private = 0"
    rows: list[tuple] = []
    for index in searched_indexes(conn, "nodes_fts", include_private):
        rows += [tuple(r) for r in conn.execute(
            f"SELECT n.id, n.title, n.type, n.source_path, -bm25({index}, 10.0, 5.0, 1.0) AS score"
            f" FROM {index} JOIN nodes n ON n.rowid = {index}.rowid WHERE {index} MATCH ? AND {visible}"
            " ORDER BY score DESC, n.id LIMIT ?", (query, limit))]
    rows.sort(key=lambda r: (-r[4], r[0]))
    return rows[:limit]


def joined_passage_hits(
    conn: sqlite3.Connection, table: str, weights: tuple[float, ...], query: str, limit: int, include_private: bool,
) -> list[tuple]:
    columns = ", ".join(str(w) for w in weights)
    visible = "" if include_private else " AND n.private = 0"
    return [tuple(r) for r in conn.execute(
        f"SELECT p.id, p.node_id, -bm25({table}, {columns}) AS score FROM {table}"
        f" JOIN passages p ON p.id = {table}.rowid JOIN nodes n ON n.id = p.node_id"
        f" WHERE {table} MATCH ?{visible} ORDER BY score DESC, p.id LIMIT ?", (query, limit))]


LIMITS = (1, 3, 20, 57, 200, 299, 1000)


@pytest.mark.parametrize("include_private", [False, True])
def test_node_ranking_without_snippets_is_the_joined_one(conn: sqlite3.Connection, include_private: bool) -> None:
    tied = 0
    for text in ("apollo", "fuel budget", "crew pad delay", "note", "zzz"):
        for limit in LIMITS:
            expected = joined_node_hits(conn, text, limit, include_private)
            got = reads.search(conn, text, limit=limit, mode="or", include_private=include_private, snippets=False)
            assert [(h.id, h.title, h.type, h.source_path, h.score) for h in got] == expected, (text, limit)
            assert all(h.snippet == "" for h in got)
            with_snippets = reads.search(conn, text, limit=limit, mode="or", include_private=include_private)
            assert [(h.id, h.score) for h in with_snippets] == [(h.id, h.score) for h in got]
            if len(expected) == limit and any(r[4] == expected[-1][4] for r in expected[:-1]):
                tied += 1
    assert tied >= 5  # the graph does tie at the cut, which is what the tie handling is for


@pytest.mark.parametrize("include_private", [False, True])
def test_search_with_snippets_is_the_joined_one_and_snips_only_what_it_shows(
    conn: sqlite3.Connection, include_private: bool
) -> None:
    """`ctx search` shows snippets: the hits, scores, order and snippets are the joined query's
    (which makes a snippet for every match before it sorts: ~1.2 s for a common word at 1M
    nodes), in both modes of ``auto``, yet snippets are made only for the rows kept."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    compared = 0
    try:
        for text in ("apollo", "fuel budget", "crew pad delay", "note", "apollo orbitxyz", "zzz"):
            for limit in LIMITS:
                got = reads.search(conn, text, limit=limit, include_private=include_private)
                for mode in ("and", "or"):
                    query = reads.fts_query(text, mode)
                    expected = sorted(
                        (r for index in searched_indexes(conn, "nodes_fts", include_private)
                         for r in reads._with_snippets(conn, index, query, limit, include_private)),
                        key=lambda r: (-r[4], r[0]),
                    )[:limit]
                    if expected:
                        break
                assert [(h.id, h.title, h.type, h.source_path, h.score, h.snippet) for h in got] == expected
                compared += bool(expected)
    finally:
        conn.set_trace_callback(None)
    assert compared > 20
    ranked_snippets = [s for s in statements if "snippet(" in s and "n.rowid" not in s]
    assert ranked_snippets and all("rowid IN (" in s for s in ranked_snippets)


@pytest.mark.parametrize("include_private", [False, True])
def test_passage_ranking_is_the_joined_one(conn: sqlite3.Connection, include_private: bool) -> None:
    for terms in (["apollo"], ["fuel", "budget"], ["crew", "pad", "delay", "orbit"], ["note"], ["zzz"]):
        query = " OR ".join(f'"{t}"' for t in terms)
        for table, weights in (("passages_fts", passage_reads.STEMMED_WEIGHTS),
                               ("passages_exact", passage_reads.EXACT_WEIGHTS)):
            for limit in LIMITS:
                expected = sorted(
                    (r for index in searched_indexes(conn, table, include_private)
                     for r in joined_passage_hits(conn, index, weights, query, limit, include_private)),
                    key=lambda r: (-r[2], r[0]),
                )
                got = sorted(
                    (r for index in searched_indexes(conn, table, include_private)
                     for r in passage_reads._bm25(
                         conn, index, weights, query, limit, include_private, [f'"{t}"' for t in terms])),
                    key=lambda r: (-r[2], r[0]),
                )
                assert got == expected, (terms, table, limit)
            # The whole search: both indexes' hits, each as a share of its best, added.
            for limit in LIMITS:
                combined: dict[int, float] = {}
                for table, weights in (("passages_fts", passage_reads.STEMMED_WEIGHTS),
                                       ("passages_exact", passage_reads.EXACT_WEIGHTS)):
                    hits = sorted(
                        (r for index in searched_indexes(conn, table, include_private)
                         for r in joined_passage_hits(conn, index, weights, query, limit, include_private)),
                        key=lambda r: (-r[2], r[0]),
                    )[:limit]
                    top = max((r[2] for r in hits), default=1.0) or 1.0
                    for pid, _, score in hits:
                        combined[pid] = combined.get(pid, 0.0) + max(score, 0.0) / top
                whole = sorted(combined, key=lambda pid: (-combined[pid], pid))[:limit]
                found = passage_reads.search(conn, terms, limit=limit, include_private=include_private)
                assert [(h.id, h.score) for h in found] == [(pid, combined[pid]) for pid in whole], (terms, limit)


def test_an_index_holding_private_rows_is_filtered_by_the_join(conn: sqlite3.Connection) -> None:
    """A graph from before the private indexes: the public index holds every row, so rows are
    filtered by joining the nodes (the index alone would show private notes)."""
    private = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 1")}
    for index in ("nodes_fts", "passages_fts", "passages_exact"):
        source = "nodes" if index == "nodes_fts" else "passage_texts"
        columns = "title, aliases, body" if index == "nodes_fts" else "title, context, heading, text"
        key = "rowid" if index == "nodes_fts" else "id"
        conn.execute(
            f"INSERT INTO {index} (rowid, {columns}) SELECT {key}, {columns} FROM {source}"
            f" WHERE {key} IN (SELECT {key} FROM {source} WHERE {'private = 1' if index == 'nodes_fts' else 'node_id IN (SELECT id FROM nodes WHERE private = 1)'})"
        )
        conn.execute(f"DROP TABLE {index}_private")
    hits = reads.search(conn, "apollo", limit=1000, mode="or", snippets=False)
    assert hits and not {h.id for h in hits} & private
    assert [(h.id, h.score) for h in hits] == [(r[0], r[4]) for r in joined_node_hits(conn, "apollo", 1000, False)]
    found = passage_reads.search(conn, ["apollo"], limit=1000, include_private=False)
    assert found and not {h.node_id for h in found} & private
