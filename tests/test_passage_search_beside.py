"""A warm process ranks a question's exact passage index on a second, read-only connection while
its own connection ranks the stemmed one (``passage_reads._all_best``): the hits are the ones the
single connection gives, hit for hit and score for score, with and without private access; the
second connection really ranks (its statements are seen); inside a transaction of the first,
whose rows it cannot see, it ranks nothing; and only a pool's connection (a family's) opens one,
closed with its store."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURES

from ctx import Graph
from ctx.importers.engine import import_path
from ctx.store import connect, passage_reads
from ctx.store.db import open_beside

WORDS = ["apollo", "launch", "orbit", "fuel", "crew", "pad", "delay", "budget", "launches", "orbiting"]
QUESTIONS = [
    ["apollo"], ["launch", "delay"], ["orbit", "crew", "budget"], ["launches", "fuel", "pad"],
    ["orbiting", "apollo", "launch", "delay"], ["nothing-matches-this"], ["crew", "crew"],
]


def _write(root: Path) -> Path:
    """Notes of a few paragraphs each (passages), many alike (ties), a ninth of them private."""
    rng = random.Random(21)
    records = []
    for i in range(240):
        paragraphs = ["## Part %d\n\n" % k + " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 160)))
                      for k in range(rng.randrange(1, 6))]
        records.append({"id": f"n{rng.randrange(10**6):06d}-{i}", "title": f"{WORDS[i % len(WORDS)]} entry {i}",
                        "body": "\n\n".join(paragraphs), "tags": ["private"] if i % 9 == 0 else []})
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
    import_path(db, _write(tmp_path), format="json")
    assert db.execute("SELECT COUNT(*) FROM passages").fetchone()[0] > 240
    assert db.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] > 0
    return db


def _traced(other: sqlite3.Connection) -> list[str]:
    seen: list[str] = []
    other.set_trace_callback(seen.append)
    return seen


@pytest.mark.parametrize("include_private", [False, True])
def test_the_same_hits_with_a_second_connection(conn: sqlite3.Connection, include_private: bool) -> None:
    other = open_beside(conn)
    assert other is not None
    seen = _traced(other)
    for terms in QUESTIONS:
        for limit in (1, 7, 200):
            alone = passage_reads.search(conn, terms, limit=limit, include_private=include_private)
            beside = passage_reads.search(conn, terms, limit=limit, include_private=include_private, beside=other)
            assert beside == alone, (terms, limit)
            assert [type(h.score) for h in beside] == [type(h.score) for h in alone]
    # The exact indexes were ranked there, never the stemmed ones.
    ranked = [s for s in seen if "bm25(" in s]
    assert ranked and all("passages_exact" in s for s in ranked)
    assert any("passages_exact_private" in s for s in ranked) == include_private


def test_inside_a_transaction_everything_is_ranked_on_the_first(conn: sqlite3.Connection) -> None:
    """A row the first connection indexed and has not committed is found: the second connection
    cannot see it, so it must rank nothing."""
    other = open_beside(conn)
    assert other is not None
    seen = _traced(other)
    pid = conn.execute(
        "SELECT MIN(p.id) FROM passages p JOIN nodes n ON n.id = p.node_id WHERE n.private = 0"
    ).fetchone()[0]
    conn.execute("BEGIN")
    try:
        conn.execute(
            "INSERT INTO passages_exact (rowid, title, context, heading, text) VALUES (?, '', '', '', 'zeppelin zeppelin')",
            (pid,),
        )
        alone = passage_reads.search(conn, ["zeppelin"], limit=10, include_private=False)
        beside = passage_reads.search(conn, ["zeppelin"], limit=10, include_private=False, beside=other)
    finally:
        conn.execute("ROLLBACK")
    assert [h.id for h in alone] == [pid]
    assert beside == alone
    assert not [s for s in seen if "bm25(" in s]
    # Committed rows are what both connections read.
    assert passage_reads.search(conn, ["zeppelin"], limit=10, include_private=False, beside=other) == []


def test_the_second_connection_only_reads(conn: sqlite3.Connection) -> None:
    other = open_beside(conn)
    assert other is not None
    assert other.row_factory is conn.row_factory
    with pytest.raises(sqlite3.OperationalError):
        other.execute("DELETE FROM passages")
    assert open_beside(sqlite3.connect(":memory:")) is None


def test_only_a_family_connection_opens_one_and_its_store_closes_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    graph = Graph.open(tmp_path / "g.db", create=True)
    graph.import_path(vault)
    view = graph.reader
    assert view._beside() is None and view.marks.beside is None  # a one-off build opens nothing
    graph.store.share_warm_state(object())
    view = graph.reader
    other = view._beside()
    assert isinstance(other, sqlite3.Connection)
    assert view._beside() is other  # kept for the connection's next calls
    alone = passage_reads.search(view.conn, ["launch", "blocking"], limit=50, include_private=False)
    assert alone and view.search_passages(["launch", "blocking"], limit=50) == alone
    graph.close()
    with pytest.raises(sqlite3.ProgrammingError):
        other.execute("SELECT 1")
