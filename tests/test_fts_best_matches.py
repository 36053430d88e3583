"""``ctx.store.fts.best_matches`` ranks as one ``phrase OR phrase ...`` query ranked by BM25 does,
row for row and score for score (the same doubles), whether a common word's rows are set aside
or not: on a real FTS5 index of generated text where one word is in most rows, for the common
word first, second, last and absent, prefix phrases, several column weights and limits."""

from __future__ import annotations

import random
import sqlite3

import pytest

from ctx.store import fts

WORDS = [f"w{i}" for i in range(400)]


@pytest.fixture(scope="module")
def index() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5(title, body, tokenize = 'porter unicode61')")
    rng = random.Random(4)
    rows = []
    for rowid in range(1, 4001):
        # "common" is in 70% of the rows, "usual" in 30%; the rest are rarer, some much rarer.
        title = " ".join(rng.choice(WORDS[:40]) for _ in range(rng.randint(1, 4)))
        body = [rng.choice(WORDS) for _ in range(rng.randint(3, 60))]
        if rng.random() < 0.7:
            body.insert(rng.randrange(len(body) + 1), "common")
        if rng.random() < 0.3:
            body.insert(rng.randrange(len(body) + 1), "usual")
        if rng.random() < 0.05:
            title += " common"
        rows.append((rowid * 3, title, " ".join(body)))  # gaps in the rowids
    conn.executemany("INSERT INTO docs (rowid, title, body) VALUES (?, ?, ?)", rows)
    return conn


def rows_at_most(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT MAX(rowid) FROM docs").fetchone()[0])


def single_query(conn: sqlite3.Connection, columns: str, phrases: list[str], limit: int) -> list[tuple[int, float]]:
    return conn.execute(
        f"SELECT rowid, -bm25(docs, {columns}) AS score FROM docs WHERE docs MATCH ?"
        " ORDER BY score DESC, rowid LIMIT ?",
        (" OR ".join(phrases), limit),
    ).fetchall()


QUERIES = [
    ["common", "w3"],
    ["w3", "common"],
    ["common", "w3", "w17"],
    ["w3", "common", "w17"],  # the common word second
    ["w3", "w17", "common"],
    ["w3", "w17", "w399", "common"],
    ["w3", "w17", "common", "w399"],  # third of four: not set aside
    ["common", "usual", "w5", "w250"],
    ["usual", "w5", "w6", "w7", "w8", "common"],
    ["w390", "w391"],
    ["common"],
    ["commo*", "w3"],  # a prefix phrase
    ["common", "nothing-here", "w12"],
]


@pytest.mark.parametrize("columns", ["1.0, 1.0", "10.0, 1.0", "2.0, 0.5"])
def test_the_best_matches_are_the_single_querys(index, columns, monkeypatch):
    monkeypatch.setattr(fts, "SET_ASIDE_FROM", 1)  # "common" has 2,800 rows here: set aside all the same
    alone = []
    execute = []

    class Counting:
        """The connection, counting the queries that score a word's rows alone."""

        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
            execute.append(params[0] if params else None)
            if params and isinstance(params[0], str) and " NOT " in params[0]:
                if not params[0].startswith("("):  # ``word NOT other ...``: the word's rows alone
                    alone.append(params[0])
            return self.conn.execute(sql, params)

    counting = Counting(index)
    compared = 0
    for words in QUERIES:
        phrases = [f'"{w[:-1]}"*' if w.endswith("*") else f'"{w}"' for w in words]
        for limit in (1, 10, 50, 400, 5000):
            got = fts.best_matches(counting, "docs", columns, phrases, limit, rows_at_most)  # type: ignore[arg-type]
            assert got == single_query(index, columns, phrases, limit), (words, limit)
            compared += 1
    assert compared == len(QUERIES) * 5
    # The common word's rows were set aside (never scored) for some, and scored where they could enter.
    tried = [p for p in execute if isinstance(p, str) and p.endswith('NOT "common"')]
    assert tried and alone and len(alone) < len(tried), (len(alone), len(tried))


def test_a_query_fts5_refuses_fails_as_the_single_query_does(index):
    with pytest.raises(sqlite3.OperationalError):
        single_query(index, "1.0, 1.0", ['"common"', "NEAR("], 10)
    with pytest.raises(sqlite3.OperationalError):
        fts.best_matches(index, "docs", "1.0, 1.0", ['"common"', "NEAR("], 10, rows_at_most)


def test_the_most_a_phrase_adds_bounds_every_row(index):
    """Every row holding one phrase alone scores below ``_most`` of that phrase's count."""
    hits = index.execute("SELECT COUNT(*) FROM docs WHERE docs MATCH '\"common\"'").fetchone()[0]
    best = index.execute(
        "SELECT -bm25(docs, 10.0, 1.0) AS s FROM docs WHERE docs MATCH '\"common\"' ORDER BY s DESC LIMIT 1"
    ).fetchone()[0]
    assert 0 < best < fts._most(rows_at_most(index), hits)
    assert fts._most(rows_at_most(index), hits) <= fts._most(rows_at_most(index) * 2, hits)


def test_a_word_of_fewer_matches_than_set_aside_from_is_ranked_in_the_single_query(index, monkeypatch):
    """Below ``SET_ASIDE_FROM`` matches the word is not set aside: the single query ranks the rows."""
    seen: list[str] = []

    class Recording:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
            if "ORDER BY" in sql:  # a ranking (not a count, not the index's size)
                seen.append(params[0])
            return self.conn.execute(sql, params)

    phrases = ['"w3"', '"common"', '"w17"']
    hits = index.execute("SELECT COUNT(*) FROM docs WHERE docs MATCH '\"common\"'").fetchone()[0]
    for threshold, split in ((hits + 1, False), (hits, True)):
        monkeypatch.setattr(fts, "SET_ASIDE_FROM", threshold)
        seen.clear()
        got = fts.best_matches(Recording(index), "docs", "1.0, 1.0", phrases, 50, rows_at_most)  # type: ignore[arg-type]
        assert got == single_query(index, "1.0, 1.0", phrases, 50)
        assert (seen != [" OR ".join(phrases)]) is split, (threshold, seen)
