"""Words as SQLite's FTS5 reads them, for PostgreSQL's full text: the same tokens, so BM25 can be
computed the same way on both engines.

PostgreSQL's own parser and dictionaries cut text differently from FTS5's ``unicode61``
tokenizer (compound words, URLs, file paths and version numbers stay whole; ``english`` drops
stop words and stems by Snowball's English rules, not Porter's), and ``ts_rank`` knows nothing of
document frequencies. So the text is cut here by FTS5 itself, in an in-memory SQLite table with
the same tokenizer as the SQLite graph's index (``unicode61 remove_diacritics 2``, with ``porter``
in front for the stemmed index), and for every row this module gives what PostgreSQL stores:

* a ``tsvector`` literal of those tokens as lexemes, each position weighted by its column
  (title A, aliases or heading path B, ancestors' titles C, text D), columns one position apart
  so that a phrase never spans two of them; it answers which rows match (a GIN index), phrases
  included;
* the BM25 term frequency of every token: FTS5's, the sum over its occurrences of its column's
  weight (a JSON object, exact however long the row: a tsvector keeps at most 256 positions of a
  word and none past 16,383);
* the row's length in tokens, all columns together, as FTS5's ``bm25()`` takes it.

A query's words go through the same tokenizer (``query_tokens``), so ``"don't"`` is the phrase
``don t`` here as there.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

# PostgreSQL's limits: a position above 16,383 is stored as 16,383; a lexeme at most 2,047 bytes
# (so at most 500 characters of up to 4 bytes each).
MAX_POSITION = 16383
MAX_LEXEME_CHARS = 500
# A tsvector is at most 1 MB: past this many characters of literal, positions are left out (the
# row still matches its single words; term frequencies are kept in full either way).
MAX_LITERAL = 900_000


@dataclass(frozen=True)
class Index:
    """One full-text index: its FTS5 tokenizer, and per column its tsvector weight class and
    its BM25 weight (SQLite's ``bm25()`` arguments for the same index)."""

    name: str
    tokenize: str
    letters: tuple[str, ...]
    weights: tuple[int, ...]

    def weight_of(self) -> dict[str, int]:
        return dict(zip(self.letters, self.weights, strict=True))


# nodes_fts (title, aliases, body), bm25(10, 5, 1): ctx.store.reads.search
NODES = Index("nodes", "unicode61 remove_diacritics 2", ("A", "B", "D"), (10, 5, 1))
# passages_fts / passages_exact (title, context, heading, text): ctx.store.passage_reads
STEMMED = Index("stemmed", "porter unicode61 remove_diacritics 2", ("A", "C", "B", "D"), (2, 1, 2, 1))
EXACT = Index("exact", "unicode61 remove_diacritics 2", ("A", "C", "B", "D"), (10, 5, 2, 1))


@dataclass(frozen=True)
class Indexed:
    vector: str  # a tsvector literal
    tf: str  # a JSON object: token -> weighted frequency
    length: int  # tokens in all columns


_EMPTY = Indexed("", "{}", 0)


class _Tokenizer:
    """One in-memory SQLite connection with an FTS5 table per index, shared by the process
    (its use is serialised: cutting text is CPU work either way)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.conn = sqlite3.connect(":memory:", check_same_thread=False)
        self.made: set[tuple[str, int]] = set()

    def _table(self, index: Index, columns: int) -> str:
        name = f"{index.name}_{columns}"
        if (index.name, columns) not in self.made:
            cols = ", ".join(f"c{i}" for i in range(columns))
            self.conn.execute(f"CREATE VIRTUAL TABLE {name} USING fts5({cols}, tokenize='{index.tokenize}')")
            self.conn.execute(f"CREATE VIRTUAL TABLE {name}_v USING fts5vocab({name}, 'instance')")
            self.made.add((index.name, columns))
        return name

    def index(self, index: Index, rows: Sequence[Sequence[str | None]]) -> list[Indexed]:
        if not rows:
            return []
        columns = len(index.letters)
        with self.lock:
            table = self._table(index, columns)
            conn = self.conn
            conn.execute(f"DELETE FROM {table}")
            placeholders = ", ".join("?" * columns)
            conn.executemany(
                f"INSERT INTO {table} (rowid, {', '.join(f'c{i}' for i in range(columns))}) VALUES (?, {placeholders})",
                ((n, *row) for n, row in enumerate(rows)),
            )
            letter = " ".join(f"WHEN 'c{i}' THEN '{x}'" for i, x in enumerate(index.letters))
            weight = " ".join(f"WHEN 'c{i}' THEN {w}" for i, w in enumerate(index.weights))
            # Columns one position apart (a phrase never spans two), positions from 1 as
            # PostgreSQL counts them, capped at its largest. Where each column starts is kept in
            # a keyed table: joined to a view of the vocabulary it would be read once per token.
            conn.execute("DROP TABLE IF EXISTS temp.ctx_columns")
            conn.execute(
                "CREATE TEMP TABLE ctx_columns (doc INTEGER, col TEXT, start INTEGER, n INTEGER,"
                " PRIMARY KEY (doc, col)) WITHOUT ROWID"
            )
            conn.execute(
                f"""
                INSERT INTO temp.ctx_columns (doc, col, start, n)
                SELECT doc, col, COALESCE(sum(n + 1) OVER (PARTITION BY doc ORDER BY col
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0), n
                FROM (SELECT doc, col, max("offset") + 1 AS n FROM {table}_v GROUP BY doc, col)
                """
            )
            lengths = dict(conn.execute("SELECT doc, sum(n) FROM temp.ctx_columns GROUP BY doc").fetchall())
            found = conn.execute(
                f"""
                WITH per AS (
                    SELECT v.doc, substr(v.term, 1, {MAX_LEXEME_CHARS}) AS word, sum(CASE v.col {weight} END) AS tf,
                           group_concat(min(v."offset" + b.start + 1, {MAX_POSITION}) || CASE v.col {letter} END, ',')
                               AS positions
                    FROM {table}_v v JOIN temp.ctx_columns b ON b.doc = v.doc AND b.col = v.col
                    GROUP BY v.doc, substr(v.term, 1, {MAX_LEXEME_CHARS})
                )
                SELECT doc,
                       group_concat('''' || replace(replace(word, '\\', '\\\\'), '''', '''''') || ''':' || positions, ' '),
                       group_concat('''' || replace(replace(word, '\\', '\\\\'), '''', ''''''), ' '),
                       json_group_object(word, tf)
                FROM per GROUP BY doc
                """
            ).fetchall()
            conn.execute(f"DELETE FROM {table}")
        out = [_EMPTY] * len(rows)
        for doc, vector, bare, tf in found:
            if len(vector) > MAX_LITERAL:
                vector = bare if len(bare) <= MAX_LITERAL else ""
            out[doc] = Indexed(vector, tf, int(lengths[doc]))
        return out

    def snippets(self, index: Index, rows: Sequence[Sequence[str | None]], match: str, column: int) -> list[str]:
        with self.lock:
            table = self._table(index, len(index.letters))
            conn = self.conn
            conn.execute(f"DELETE FROM {table}")
            columns = len(index.letters)
            conn.executemany(
                f"INSERT INTO {table} (rowid, {', '.join(f'c{i}' for i in range(columns))})"
                f" VALUES (?, {', '.join('?' * columns)})",
                ((n, *row) for n, row in enumerate(rows)),
            )
            try:
                found = dict(conn.execute(
                    f"SELECT rowid, snippet({table}, {column}, '[', ']', '…', 12) FROM {table} WHERE {table} MATCH ?",
                    (match,),
                ).fetchall())
            except sqlite3.OperationalError:
                found = {}
            conn.execute(f"DELETE FROM {table}")
        return [found.get(n, "") for n in range(len(rows))]

    def query(self, index: Index, word: str) -> list[str]:
        with self.lock:
            table = self._table(index, 1)
            self.conn.execute(f"INSERT INTO {table} (rowid, c0) VALUES (1, ?)", (word,))
            tokens = [r[0] for r in self.conn.execute(f'SELECT term FROM {table}_v ORDER BY "offset"')]
            self.conn.execute(f"DELETE FROM {table}")
        return [lexeme(t) for t in tokens]


def lexeme(token: str) -> str:
    """A token as PostgreSQL can store it: at most MAX_LEXEME_CHARS characters (a lexeme is at
    most 2,047 bytes; a real word is never near it, a blob of hex digits can be)."""
    return token[:MAX_LEXEME_CHARS]


_TOKENIZER: _Tokenizer | None = None
_MADE = threading.Lock()


def _tokenizer() -> _Tokenizer:
    global _TOKENIZER
    with _MADE:
        if _TOKENIZER is None:
            _TOKENIZER = _Tokenizer()
        return _TOKENIZER


def index_rows(index: Index, rows: Sequence[Sequence[str | None]]) -> list[Indexed]:
    """What PostgreSQL stores for each row (its columns in the index's order)."""
    return _tokenizer().index(index, rows)


def snippets(index: Index, rows: Sequence[Sequence[str | None]], match: str, column: int) -> list[str]:
    """FTS5's ``snippet()`` of ``column`` of each row for the FTS5 query ``match`` (as SQLite's
    search gives it: '[' and ']' around hits, '…', 12 tokens): it reads only the row and the
    query, so it is the same on both engines."""
    return _tokenizer().snippets(index, rows, match, column)


def query_tokens(index: Index, word: str) -> list[str]:
    """The tokens of one query word, in order (several: a phrase; none: it matches nothing)."""
    return _tokenizer().query(index, word)
