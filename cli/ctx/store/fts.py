"""Full-text indexing of many new rows at once.

FTS5 tables here are kept up to date by triggers, one row at a time. Inside an import that writes
thousands of rows, indexing them with one ``INSERT ... SELECT`` per index instead costs several
times less (10,400 notes: the passages' two indexes took ~5 s of CPU by trigger, ~1 s in bulk),
so the insert trigger is set aside for the batch and put back after it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def indexed_in_bulk(conn: sqlite3.Connection, trigger: str, table: str, key: str, fill: tuple[str, ...]) -> Iterator[None]:
    """Rows inserted into ``table`` inside the block are indexed at its end by the ``fill``
    statements, each taking the rows whose ``key`` is above the largest one before the block.

    Only inside a transaction: dropping the trigger is then undone by a rollback with the rows it
    would have indexed, and no other connection ever sees the table without its trigger. Outside
    one, the trigger indexes row by row as usual.
    """
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    if found is None or not conn.in_transaction:
        yield
        return
    before = conn.execute(f"SELECT COALESCE(MAX({key}), 0) FROM {table}").fetchone()[0]
    conn.execute(f"DROP TRIGGER {trigger}")
    try:
        yield
    finally:
        # Also after a failed statement: the rows it did insert are indexed, so a caller that
        # goes on in the same transaction still has an index equal to its table.
        fill_after(conn, fill, before)
        conn.execute(found[0])


# What FTS5 holds in memory before it writes a segment (its default is 1 MB). A fill statement
# writes a segment each time its pending terms reach this size, and FTS5 then merges the
# segments; with 1 MB a 100k-note fill wrote hundreds of segments and rewrote each term list
# several times while merging them. The pending terms of one statement are all written at its
# end, so this bounds the memory of one fill, not of the import.
FILL_PENDING_BYTES = 64 * 1024 * 1024
_DEFAULT_PENDING_BYTES = 1024 * 1024


def fill_after(conn: sqlite3.Connection, fill: tuple[str, ...], before: int) -> None:
    """Run the ``fill`` statements (each an ``INSERT INTO <index> ... WHERE <key> > ?``) for the
    rows above ``before``, each index taking up to ``FILL_PENDING_BYTES`` of terms at a time."""
    for statement in fill:
        index = statement.split()[2]
        _pending_bytes(conn, index, FILL_PENDING_BYTES)
        try:
            conn.execute(statement, (before,))
        finally:
            _pending_bytes(conn, index, _DEFAULT_PENDING_BYTES)


def _pending_bytes(conn: sqlite3.Connection, index: str, size: int) -> None:
    try:
        conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('hashsize', ?)", (size,))
    except sqlite3.OperationalError:
        pass  # an SQLite whose FTS5 has no 'hashsize' setting: its default holds


@contextmanager
def deferred_while_empty(
    conn: sqlite3.Connection, table: str, triggers: tuple[str, ...], fill: tuple[str, ...]
) -> Iterator[None]:
    """While ``table`` starts empty inside a transaction (a first import), its full-text indexes
    are filled once at the end of the block, from the rows then in the table, instead of a batch
    (or a row) at a time: the triggers that keep them up to date are set aside for the block. An
    index filled once is written as one run of segments, not merged again after every batch.
    Otherwise the block runs with the triggers as they are. A block that raises must be followed
    by a rollback of the transaction."""
    found = [
        conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)).fetchone()
        for name in triggers
    ]
    empty = conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
    if not conn.in_transaction or not empty or any(row is None for row in found):
        yield
        return
    for name in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    # No ``finally``: a block that fails leaves the rows unindexed and the triggers dropped, for
    # the rollback of its transaction to undo with the rows (an import always rolls back on an
    # error). Filling then would write to an index after that rollback, outside any transaction.
    yield
    fill_after(conn, fill, 0)
    for row in found:
        conn.execute(row[0])


# Private nodes' rows are in indexes of their own (migration 10): a search without access to
# them reads only the public index, whose BM25 statistics are those of the public notes alone.
PRIVATE_SUFFIX = "_private"


def schema_has(conn: sqlite3.Connection, kind: str, name: str, known: dict[tuple[str, str], bool] | None = None) -> bool:
    """Whether the graph's schema holds the ``kind`` (table, view) ``name``. ``known``: answers
    already read on this connection by one reader (a ``GraphView``, which lives for one build),
    kept there: a new 100k question asked ~21 of them (the public indexes' private twins, the
    passages' text view), each a scan of ``sqlite_master`` (~25 us), for two or three names."""
    if known is not None:
        found = known.get((kind, name))
        if found is not None:
            return found
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)).fetchone() is not None
    if known is not None:
        known[(kind, name)] = found
    return found


def searched_indexes(
    conn: sqlite3.Connection, index: str, include_private: bool, known: dict[tuple[str, str], bool] | None = None,
) -> list[str]:
    """The full-text indexes a search over ``index`` (nodes_fts, passages_fts, passages_exact)
    reads: the public one, and the private one too for a reader who may see private nodes (in a
    read-only graph from before the split, the one index holds both; callers still filter rows).
    ``known``: see ``schema_has``."""
    if not include_private:
        return [index]
    private = index + PRIVATE_SUFFIX
    return [index, private] if schema_has(conn, "table", private, known) else [index]


def rows_all_visible(
    conn: sqlite3.Connection, index: str, include_private: bool, known: dict[tuple[str, str], bool] | None = None,
) -> bool:
    """Whether every row of ``index`` (one that ``searched_indexes`` returned) is a row the reader
    may see, so that a ranking over it needs no join with the nodes to leave rows out: a reader
    with private access sees them all; without it, the public index of a split graph holds
    public rows alone (in a graph from before the split it holds both). ``known``: see
    ``schema_has``."""
    if include_private:
        return True
    return schema_has(conn, "table", index + PRIVATE_SUFFIX, known)


def _split(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nodes_fts_private'").fetchone() is not None


def node_fill_statements(conn: sqlite3.Connection) -> tuple[str, ...]:
    """Index the nodes inserted after rowid ``?``, each in its public or private index."""
    if not _split(conn):  # a schema from before migration 10 (only while migrating)
        return ("INSERT INTO nodes_fts (rowid, title, aliases, body) SELECT rowid, title, aliases, body FROM nodes WHERE rowid > ?",)
    return (
        "INSERT INTO nodes_fts (rowid, title, aliases, body)"
        " SELECT rowid, title, aliases, body FROM nodes WHERE rowid > ? AND private = 0",
        "INSERT INTO nodes_fts_private (rowid, title, aliases, body)"
        " SELECT rowid, title, aliases, body FROM nodes WHERE rowid > ? AND private != 0",
    )


def passage_fill_statements(conn: sqlite3.Connection) -> tuple[str, ...]:
    """Index the passages inserted after id ``?``, each in its node's public or private indexes."""
    if not _split(conn):
        return tuple(
            f"INSERT INTO {table} (rowid, title, context, heading, text)"
            " SELECT id, title, context, heading, text FROM passage_texts WHERE id > ?"
            for table in ("passages_fts", "passages_exact")
        )
    return tuple(
        f"INSERT INTO {table}{suffix} (rowid, title, context, heading, text)"
        " SELECT t.id, t.title, t.context, t.heading, t.text FROM passage_texts t JOIN nodes n ON n.id = t.node_id"
        f" WHERE t.id > ? AND n.private {'=' if not suffix else '!='} 0"
        for suffix in ("", PRIVATE_SUFFIX)
        for table in ("passages_fts", "passages_exact")
    )


# FTS5's BM25 (fts5_aux.c): k1 = 1.2, so a phrase adds at most its IDF * 2.2 to a row's score.
_K1 = 1.2
# A word whose rows are set aside must be at least this share of the phrases' matches (counted
# each): fewer, and scoring them costs less than finding out whether they must be.
COMMON_SHARE = 0.3
# ... and match at least this many rows. Setting a word aside pays only where the other phrases'
# best rows all beat the most the word alone can add, so that its rows are never scored; else the
# three queries cost 1.3-1.5x the single one. Measured on the generated graphs' questions (20 at
# 100k nodes, 9 at 1M; both passage indexes and the nodes' index at the builds' limits): the word's
# rows were skipped in 14 of 27 rankings at 1M, each with a word of 6,874-126,671 matches, and in
# none of 60 at 100k, whose commonest words match 2,300-8,600 rows (~4.8 ms more a ranking there).
SET_ASIDE_FROM = 10_000


def best_matches(
    conn: sqlite3.Connection,
    index: str,
    columns: str,
    phrases: list[str],
    limit: int,
    rows_at_most: Callable[[sqlite3.Connection], int],
    *,
    counts_at_most: dict[str, int] | None = None,
    counted: dict[str, int] | None = None,
) -> list[tuple[int, float]]:
    """The best ``limit`` (rowid, -BM25 score) of ``index`` matching any of ``phrases`` (each a
    quoted FTS5 phrase; ``columns`` the BM25 column weights), best first, then by rowid: what
    ``phrase OR phrase ...`` ranked by ``-bm25(index, columns)`` gives, row for row and score for
    score. ``rows_at_most``: at least as many rows as the index holds.

    BM25 is most of a search's cost (each match's phrase counts and length are read), and one
    common word brings most of the matches: at 1M nodes "parameter" is 35k of a question's 61k.
    A row holding that word alone scores at most its IDF * (k1 + 1), so where the best ``limit``
    of the other rows already beat that, its rows are never scored (tried only for a word of at
    least ``SET_ASIDE_FROM`` matches: with fewer, they rarely did). The rows are taken in three
    queries: without the word (``others NOT word``), with it and another (``word AND (others)``),
    and, only where they could enter, with the word alone (``word NOT other ...``). Each gives a
    row the score the single query gives it: FTS5 counts each phrase's IDF over the whole index,
    and adds the phrases' parts in query order, a phrase the row lacks (as one only after NOT)
    adding exactly 0; the word is the first, second or last phrase, so the order of the parts a
    row has is the same (the first two added either way give the same double).

    Whichever way is taken, the rows and scores are the same: counting only chooses the cheaper.
    ``counts_at_most``: phrase -> at least how many rows of this index match it, known from an
    index whose matches hold this one's (the stemmed passage index's counts for the exact one:
    the same rows, and a word's stem matches wherever the word does); where they show no phrase
    counted could reach the set-aside rule, the phrases are not counted again here (~0.25 ms of
    a new 100k question). ``counted``: filled with the phrases' counts this ranking made.
    """
    ranked_sql = (
        f"SELECT rowid, -bm25({index}, {columns}) AS score FROM {index}"
        f" WHERE {index} MATCH ? ORDER BY score DESC, rowid LIMIT ?"
    )
    whole = " OR ".join(phrases)
    if len(phrases) < 2 or len(set(phrases)) < len(phrases) or rows_at_most(conn) < SET_ASIDE_FROM:
        return conn.execute(ranked_sql, (whole, limit)).fetchall()  # (no word can match that many rows)
    count_sql = f"SELECT COUNT(*) FROM {index} WHERE {index} MATCH ?"
    asked = sorted({0, 1, len(phrases) - 1})
    if counts_at_most is not None and all(phrases[at] in counts_at_most for at in asked) and (
        max(counts_at_most[phrases[at]] for at in asked) < max(limit, SET_ASIDE_FROM)
    ):
        return conn.execute(ranked_sql, (whole, limit)).fetchall()  # no phrase here matches that many rows
    try:
        hits = {at: int(conn.execute(count_sql, (phrases[at],)).fetchone()[0]) for at in asked}
        if counted is not None:
            counted.update((phrases[at], n) for at, n in hits.items())
        at = max(hits, key=lambda i: (hits[i], -i))
        if hits[at] < max(limit, SET_ASIDE_FROM) or hits[at] < COMMON_SHARE * sum(hits.values()):
            return conn.execute(ranked_sql, (whole, limit)).fetchall()
        word, others = phrases[at], phrases[:at] + phrases[at + 1 :]
        either = "(" + " OR ".join(others) + ")"
        together = f"{either} AND {word}" if at == len(phrases) - 1 else f"{word} AND {either}"
        rows = conn.execute(ranked_sql, (f"{either} NOT {word}", limit)).fetchall()
        rows += conn.execute(ranked_sql, (together, limit)).fetchall()
        rows.sort(key=lambda r: (-r[1], r[0]))
        del rows[limit:]
        if len(rows) < limit or rows[-1][1] <= _most(rows_at_most(conn), hits[at]) * (1.0 + 1e-9):
            rows += conn.execute(ranked_sql, (f"{word} NOT " + " NOT ".join(others), limit)).fetchall()
            rows.sort(key=lambda r: (-r[1], r[0]))
            del rows[limit:]
    except sqlite3.OperationalError:
        return conn.execute(ranked_sql, (whole, limit)).fetchall()  # raises as it always did, or answers
    return rows


def _most(rows: int, hits: int) -> float:
    """The most a phrase matching ``hits`` of at most ``rows`` rows adds to a row's BM25: FTS5's
    IDF, ln((rows - hits + 0.5) / (hits + 0.5)) (1e-6 where that is not above 0; it only grows
    with ``rows``), times k1 + 1."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5)) if rows > hits else 0.0
    return max(idf, 1e-6) * (_K1 + 1.0)
