"""A warm process ranks a plain index's words itself (``ctx.store.bm25``): every row and every
score must be FTS5's own ``-bm25()`` ranking, bit for bit, ties by rowid, on real graphs (the
corpora and generated notes with short, long and very long rows), for common, rare, absent and
repeated words, every limit and weights; and it must give way to SQLite wherever it cannot know
the tokens (a stemmer, a word FTS5 would split or fold differently, weights whose sums could round)
and follow the graph when another connection or its own changes it."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import bm25, connect, fts

from conftest import corpus_path, read_only_graph

pytestmark = pytest.mark.usefixtures("ctx_home")

WORDS = "apollo launch rocket budget orbit crater lander module pilot engine fuel plan".split()
WEIGHTS = {"passages_exact": "10.0, 5.0, 2.0, 1.0", "nodes_fts": "10.0, 5.0, 1.0"}


@pytest.fixture(autouse=True)
def ranking_here():
    bm25.enable()
    try:
        yield
    finally:
        bm25.enable(False)
        bm25.forget()


def sql_ranking(conn: sqlite3.Connection, index: str, columns: str, phrases: list[str], limit: int) -> list[tuple]:
    return conn.execute(
        f"SELECT rowid, -bm25({index}, {columns}) AS score FROM {index}"
        f" WHERE {index} MATCH ? ORDER BY score DESC, rowid LIMIT ?",
        (" OR ".join(phrases), limit),
    ).fetchall()


def vocabulary(conn: sqlite3.Connection, index: str) -> list[tuple[str, int]]:
    """The index's plain ASCII words and how many rows hold each."""
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.t_{index} USING fts5vocab(main, {index}, row)")
    return [(t, n) for t, n in conn.execute(f"SELECT term, doc FROM temp.t_{index}") if t.isascii() and t.isalnum()]


def compare_everywhere(conn: sqlite3.Connection, seed: int, questions: int) -> int:
    """Random questions over each plain index's words, ranked both ways; how many compared."""
    rng = random.Random(seed)
    compared = 0
    for index, columns in WEIGHTS.items():
        words = vocabulary(conn, index)
        assert words
        by_rows = sorted(words, key=lambda w: -w[1])
        common = [w for w, _ in by_rows[:30]]
        every = [w for w, _ in words]
        for n in range(questions):
            pick = [rng.choice(common if rng.random() < 0.4 else every) for _ in range(rng.randint(1, 7))]
            if n % 5 == 0:
                pick.append("zzqxnotaword")  # no row holds it: its IDF counts, its score adds 0
            if n % 7 == 0:
                pick.append(pick[0])  # a phrase twice: FTS5 scores it twice
            if n % 3 == 0:
                pick = [w.capitalize() for w in pick]  # FTS5 lowercases the query's words
            phrases = [f'"{w}"' for w in pick]
            for limit in (1, 5, 37, 200, 100_000):
                for weights in (columns, "1.0", "3, 0, 7", ""):
                    got = bm25.ranked(conn, index, weights, phrases, limit)
                    assert got is not None, (index, phrases)
                    assert got == sql_ranking(conn, index, weights or "1.0", phrases, limit), (index, phrases, limit, weights)
                    compared += 1
    return compared


@pytest.mark.parametrize("corpus", ["foam-docs", "logseq-docs", "dendron-site"])
def test_the_corpora_rank_as_fts5(tmp_path_factory: pytest.TempPathFactory, corpus: str) -> None:
    db = read_only_graph(tmp_path_factory, corpus_path(corpus))
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert compare_everywhere(conn, seed=len(corpus), questions=40) == 2 * 40 * 5 * 4
        # rows past 127 tokens (lengths of two varint bytes) were among those ranked
        assert conn.execute("SELECT COUNT(*) FROM passages_exact_docsize WHERE length(sz) > 4").fetchone()[0] > 0
    finally:
        conn.close()


@pytest.fixture
def generated(tmp_path: Path) -> Path:
    """Generated notes: short ones, ~300-word ones, and one of ~20,000 words (a column length of
    three varint bytes)."""
    rng = random.Random(5)
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(300):
        words = rng.choices(WORDS, k=rng.choice([3, 12, 300]))
        (vault / f"N{n:03d}.md").write_text(f"# {' '.join(rng.sample(WORDS, 2))} {n}\n\n{' '.join(words)}.\n")
    (vault / "Long.md").write_text("# Long launch\n\n" + " ".join(rng.choices(WORDS, k=20_000)) + ".\n")
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.close()
    return db


def test_generated_rows_short_and_very_long(generated: Path) -> None:
    conn = sqlite3.connect(f"file:{generated}?mode=ro", uri=True)
    try:
        sizes = Counter(length for (length,) in conn.execute("SELECT length(sz) FROM nodes_fts_docsize"))
        assert max(sizes) >= 5  # three bytes for the long body, one each for title and aliases
        assert compare_everywhere(conn, seed=11, questions=30) == 2 * 30 * 5 * 4
    finally:
        conn.close()


def test_other_indexes_and_words_are_left_to_sqlite(generated: Path) -> None:
    conn = sqlite3.connect(f"file:{generated}?mode=ro", uri=True)
    try:
        assert bm25.ranked(conn, "passages_exact", WEIGHTS["passages_exact"], ['"launch"'], 10) is not None
        assert bm25.ranked(conn, "passages_fts", "2.0, 1.0, 2.0, 1.0", ['"launch"'], 10) is None  # a stemmer
        for phrases in (['"launch orbit"'], ['"café"'], ['"launch_plan"'], ['launch'], ['"lau*"'], []):
            assert bm25.ranked(conn, "passages_exact", WEIGHTS["passages_exact"], phrases, 10) is None, phrases
        assert bm25.ranked(conn, "passages_exact", "10.5, 5.0", ['"launch"'], 10) is None  # sums could round
        assert bm25.ranked(conn, "no_such_index", "1.0", ['"launch"'], 10) is None
        bm25.enable(False)
        assert bm25.ranked(conn, "passages_exact", WEIGHTS["passages_exact"], ['"launch"'], 10) is None
    finally:
        conn.close()


def test_best_matches_takes_it_in_a_warm_process(generated: Path) -> None:
    conn = sqlite3.connect(f"file:{generated}?mode=ro", uri=True)
    asked: list[str] = []
    conn.set_trace_callback(lambda sql: asked.append(sql) if "bm25(" in sql else None)
    try:
        phrases = ['"launch"', '"orbit"', '"pilot"']
        warm = fts.best_matches(conn, "nodes_fts", WEIGHTS["nodes_fts"], phrases, 20, lambda c: 1)
        assert not asked
        bm25.enable(False)
        assert fts.best_matches(conn, "nodes_fts", WEIGHTS["nodes_fts"], phrases, 20, lambda c: 1) == warm
        assert len(asked) == 1
    finally:
        conn.close()


def test_it_follows_the_graph_when_it_changes(generated: Path, tmp_path: Path) -> None:
    reader = sqlite3.connect(f"file:{generated}?mode=ro", uri=True)
    phrases = ['"launch"', '"crater"', '"zebra"']
    try:
        before = bm25.ranked(reader, "passages_exact", WEIGHTS["passages_exact"], phrases, 50)
        assert before == sql_ranking(reader, "passages_exact", WEIGHTS["passages_exact"], phrases, 50)
        # Another connection imports notes holding a new word and more of the old ones.
        vault = tmp_path / "more"
        vault.mkdir()
        for n in range(40):
            (vault / f"Z{n}.md").write_text(f"# Zebra {n}\n\nzebra crater launch zebra.\n")
        writer = connect(generated)
        import_path(writer, vault)
        writer.close()
        after = bm25.ranked(reader, "passages_exact", WEIGHTS["passages_exact"], phrases, 50)
        assert after != before
        assert after == sql_ranking(reader, "passages_exact", WEIGHTS["passages_exact"], phrases, 50)
    finally:
        reader.close()


def test_kept_postings_are_bounded(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25, "MAX_POSTINGS", 400)
    conn = sqlite3.connect(f"file:{generated}?mode=ro", uri=True)
    try:
        for word in WORDS * 2:
            phrases = [f'"{word}"', '"launch"']
            got = bm25.ranked(conn, "passages_exact", WEIGHTS["passages_exact"], phrases, 30)
            assert got == sql_ranking(conn, "passages_exact", WEIGHTS["passages_exact"], phrases, 30)
        held = bm25._connections[id(conn)].indexes["passages_exact"][1]
        assert held is not None
        assert held.kept == sum(rows.size for rows, _ in held.words.values())
        assert held.kept <= 400 or len(held.words) == 1
        assert len(held.words) < len(WORDS)
    finally:
        conn.close()
