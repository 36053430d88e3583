"""The exact passage index takes its phrases' counts from its stemmed twin where those show no
phrase can reach the set-aside rule (``fts.best_matches``: a word's stem matches wherever the word
does, over the same rows), and counts them itself otherwise. Counting only chooses between two
ways to the same rows and scores: the hits are the same either way. A real graph of generated
notes, the rule's threshold lowered to its size."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from ctx.assemble.passage_rank import query_terms
from ctx.importers.engine import import_path
from ctx.store import connect, fts, passage_reads

WORDS = "apollo launch rocket budget orbit crater lander module pilot engine fuel plan".split()


pytestmark = pytest.mark.usefixtures("ctx_home")


@pytest.fixture
def graph(tmp_path: Path) -> sqlite3.Connection:
    rng = random.Random(3)
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(240):
        # "launch" in most notes, "launches"/"launched" in some (the stemmed index finds them, the
        # exact one not), the other words rarer.
        words = ["launch" if rng.random() < 0.6 else rng.choice(["launches", "launched", "note"])]
        words += rng.sample(WORDS, 3)
        (vault / f"N{n:03d}.md").write_text(f"# Note {n}\n\n{' '.join(words)}.\n\nMore {rng.choice(WORDS)} text.\n")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    return conn


def ranked(conn: sqlite3.Connection, question: str, counts_asked: list[str]) -> list[tuple]:
    conn.set_trace_callback(lambda sql: counts_asked.append(sql) if sql.startswith("SELECT COUNT(*) FROM passages") else None)
    try:
        return [(h.id, h.node_id, h.score) for h in
                passage_reads.search(conn, query_terms(question), limit=20, include_private=False)]
    finally:
        conn.set_trace_callback(None)


def test_the_exact_index_counts_only_where_its_twin_cannot_tell(graph: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    question = "launch orbit pilot"
    stemmed = {w: graph.execute("SELECT COUNT(*) FROM passages_fts WHERE passages_fts MATCH ?", (f'"{w}"',)).fetchone()[0]
               for w in ("launch", "orbit", "pilot")}
    exact = graph.execute("SELECT COUNT(*) FROM passages_exact WHERE passages_exact MATCH '\"launch\"'").fetchone()[0]
    assert stemmed["launch"] > exact > stemmed["orbit"]
    before = ranked(graph, question, [])
    assert len(before) == 20
    # Above every count: no phrase can be set aside, the stemmed index counts and its twin does not.
    monkeypatch.setattr(fts, "SET_ASIDE_FROM", stemmed["launch"] + 1)
    asked: list[str] = []
    assert ranked(graph, question, asked) == before
    assert len(asked) == 3 and all("passages_fts" in sql for sql in asked)
    # Between the two indexes' counts of "launch": the exact index must count its own (its twin's
    # count says it might reach the rule), and finds it does not.
    monkeypatch.setattr(fts, "SET_ASIDE_FROM", exact + 1)
    asked = []
    assert ranked(graph, question, asked) == before
    assert sum("passages_exact" in sql for sql in asked) == 3
    # Low enough for both to set the word aside: both count, and the hits are the same.
    monkeypatch.setattr(fts, "SET_ASIDE_FROM", 20)
    monkeypatch.setattr(fts, "COMMON_SHARE", 0.0)
    asked = []
    assert ranked(graph, question, asked) == before
    assert sum("passages_exact" in sql for sql in asked) == 3 and sum("passages_fts" in sql for sql in asked) == 3


def test_a_bound_never_changes_the_rows(graph: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fts, "SET_ASIDE_FROM", 20)
    phrases = ['"launch"', '"orbit"', '"pilot"']
    for counts_at_most in ({}, {p: 0 for p in phrases}, {p: 10_000 for p in phrases}):
        got = fts.best_matches(graph, "passages_exact", "10.0, 5.0, 2.0, 1.0", phrases, 15,
                               passage_reads._passage_rows_at_most, counts_at_most=counts_at_most)
        single = graph.execute(
            "SELECT rowid, -bm25(passages_exact, 10.0, 5.0, 2.0, 1.0) AS score FROM passages_exact"
            " WHERE passages_exact MATCH ? ORDER BY score DESC, rowid LIMIT 15", (" OR ".join(phrases),),
        ).fetchall()
        assert [tuple(r) for r in got] == [tuple(r) for r in single]
