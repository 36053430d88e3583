"""A question's passage ranking without vectors is made once per build: the resolver asks whether a
word is known (full text), then ranks for seeds (its lens's retrieval), and the collector ranks for
the candidates' pieces (hybrid, with no vector): three asks, one ranking, the same one a build
outside any scope makes each time. On a real graph, a note vault imported into SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx.assemble import build_context, BuildRequest
from ctx.assemble.build_memo import build_scope
from ctx.assemble.passage_rank import rank_passages
from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.sqlite_store import SqliteStore

QUESTIONS = ("apollo launch plan", "what fuel does the rocket budget allow, and who signed the launch plan?")


pytestmark = pytest.mark.usefixtures("ctx_home")


@pytest.fixture
def graph(tmp_path: Path) -> sqlite3.Connection:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Plan.md").write_text("# Plan\n\nThe launch plan for apollo.\n\nSigned by Ada.\n\nThe fuel budget is set.\n")
    (vault / "Rocket.md").write_text("# Rocket\n\nFuel, budget and the apollo launch.\n\n## Later\n\nThe rocket plan.\n")
    (vault / "Diary.md").write_text("# Diary\n\nA day.\n\nAnother day, the launch.\n\nThe budget again.\n")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    return conn


def fields(ranking) -> tuple:
    return (ranking.passages, ranking.node_of, ranking.nodes, ranking.method, ranking.terms, ranking.lexical,
            ranking.floors, ranking.found_blocks)


@pytest.mark.parametrize("question", QUESTIONS)
def test_one_ranking_a_build_without_vectors(graph: sqlite3.Connection, question: str) -> None:
    reader = SqliteStore(graph).reader()
    alone = rank_passages(reader, question, None, mode="fts")
    assert alone.passages and alone.method == "bm25"
    # Outside a build each ask ranks again; the same values.
    assert rank_passages(reader, question, None, mode="fts") is not alone
    assert fields(rank_passages(reader, question, None)) == fields(alone)
    with build_scope():
        asks = [rank_passages(reader, question, None, mode="fts"), rank_passages(reader, question, None),
                rank_passages(reader, question, None, mode="hybrid")]
        assert all(r is asks[0] for r in asks)
        assert fields(asks[0]) == fields(alone)
        # Ranking by vectors alone is another ranking (none here: the graph has no vectors).
        assert rank_passages(reader, question, None, mode="vector") is not asks[0]
        assert rank_passages(reader, question, None, mode="vector").method == "none"
        # Another question, or another pool, is its own.
        assert rank_passages(reader, question + " diary", None) is not asks[0]
        assert rank_passages(reader, question, None, pool=5) is not asks[0]


def test_a_build_answers_as_before(graph: sqlite3.Connection) -> None:
    # The build reads the one ranking where it read three equal ones: the same context twice.
    for question in QUESTIONS:
        first = build_context(graph, BuildRequest(topics=(question,), max_tokens=600))
        again = build_context(graph, BuildRequest(topics=(question,), max_tokens=600))
        assert first.found and first.text == again.text
        assert "Plan" in first.text or "Rocket" in first.text
