"""FTS5's BM25 ranking of plain words, recomputed in a warm process from the index's own postings.

Most of a full-text ranking's cost in FTS5 is not the score but reading each matched row's length:
``bm25()`` asks for it row by row (a statement stepped and reset per row, ~4,900 instructions,
78% of the function's cost on the 100k graph). A warm process reads every row's length once
(``<index>_docsize``, kept under the connection's data version) and each word's postings through
``fts5vocab``, then does FTS5's arithmetic itself, in FTS5's order (``fts5_aux.c``
``fts5Bm25Function``): per phrase, in query order, ``score += idf * (f * (k1 + 1)) / (f + k1 *
(1 - b + b * D / avgdl))``, ``idf = ln((N - n + 0.5) / (n + 0.5))`` (1e-6 where not above 0), ``f``
the column weights summed over the phrase's instances in the row, ``D`` the row's tokens, ``avgdl``
the index's tokens over its rows. IEEE doubles give the same bits for the same operations in the
same order, so each row's score is FTS5's, and the rows are ordered by score, then rowid.

Taken only where the tokens are known without asking the tokenizer: an index whose tokenizer is
``unicode61`` alone (no stemmer, no options other than ``remove_diacritics``), every phrase one
ASCII word of letters and digits (``unicode61`` keeps such a word whole and lowercases it), and
integral weights (their sums are exact in any order). Anything else is None: the caller asks
SQLite as before.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# FTS5's constants (fts5_aux.c).
_K1 = 1.2
_B = 0.75
_WORD = re.compile(r'"([A-Za-z0-9]+)"')
_TOKENIZE = re.compile(r"tokenize\s*=\s*'([^']*)'", re.IGNORECASE)
_PLAIN = re.compile(r"unicode61(\s+remove_diacritics\s+[012])?")
# Postings an index keeps for later questions, in rows (16 bytes each: ~16 MB; a word holds ~500
# to ~9,000 rows at 100k nodes); the oldest words are forgotten first.
MAX_POSTINGS = 1_000_000
# Connections kept (a warm process reads through one or two).
MAX_CONNECTIONS = 4
_CHUNK = 50_000

_enabled = False
_lock = threading.Lock()


@dataclass
class _Index:
    columns: dict[str, int]
    rows: int
    tokens: int
    lengths: "np.ndarray"
    words: dict[tuple[str, tuple[float, ...]], tuple["np.ndarray", "np.ndarray"]] = field(default_factory=dict)
    kept: int = 0  # rows in ``words``


@dataclass
class _Connection:
    conn: sqlite3.Connection
    # index -> (its structure and totals records when read, what was read then)
    indexes: dict[str, tuple[tuple[bytes, bytes] | None, _Index | None]] = field(default_factory=dict)


_connections: dict[int, _Connection] = {}


def enable(on: bool = True) -> None:
    """Rank in Python where this module can (a warm process)."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled


def forget() -> None:
    with _lock:
        _connections.clear()


def ranked(
    conn: sqlite3.Connection, index: str, columns: str, phrases: list[str], limit: int,
) -> list[tuple[int, float]] | None:
    """``SELECT rowid, -bm25(index, columns) ... MATCH 'phrase OR ...' ORDER BY score DESC, rowid
    LIMIT limit``'s rows, computed here; None where this module cannot give them exactly."""
    if not _enabled or not phrases or limit <= 0 or conn.in_transaction:
        return None  # (writes of its own not yet committed: the totals may not be written yet)
    words = []
    for phrase in phrases:
        found = _WORD.fullmatch(phrase)
        if found is None:
            return None
        words.append(found.group(1).lower())
    try:
        weights = tuple(float(w) for w in columns.split(",")) if columns.strip() else ()
    except ValueError:
        return None
    if not all(w.is_integer() and abs(w) < 2**20 for w in weights):
        return None
    try:
        with _lock:
            held = _index(conn, index)
            if held is None or len(weights) > len(held.columns):
                return None
            postings = [_postings(conn, index, held, word, weights) for word in words]
    except sqlite3.Error:
        return None
    return _scored(held, postings, limit)


def preload(conn: sqlite3.Connection, include_private: bool) -> None:
    """Read the lengths of the indexes a build ranks here (a warm process's warm-up): ~0.3 s at
    100k nodes, paid once instead of by the first question."""
    from ctx.store.fts import searched_indexes

    if not _enabled:
        return
    try:
        for table in ("passages_exact", "nodes_fts"):
            for index in searched_indexes(conn, table, include_private):
                with _lock:
                    _index(conn, index)
    except sqlite3.Error:
        return


def _index(conn: sqlite3.Connection, index: str) -> _Index | None:
    """What is kept of ``index`` for this connection, read again whenever the index changed: every
    write to an FTS5 index rewrites its structure record (a new segment, a merge, a cookie
    incremented) in the same transaction as its rows' lengths and postings, so the structure and
    totals records as this connection sees them key what was read (the graph's other writes, such
    as a build's recorded manifest, leave them alone)."""
    kept = _connections.get(id(conn))
    if kept is None or kept.conn is not conn:
        kept = _Connection(conn)
        _connections.pop(id(conn), None)
        _connections[id(conn)] = kept
        while len(_connections) > MAX_CONNECTIONS:
            del _connections[next(iter(_connections))]
    state = _state(conn, index)
    held = kept.indexes.get(index)
    if held is None or held[0] != state or state is None:
        held = (state, _read_index(conn, index) if state is not None else None)
        kept.indexes[index] = held
    return held[1]


def _state(conn: sqlite3.Connection, index: str) -> tuple[bytes, bytes] | None:
    """``index``'s structure record (FTS5_STRUCTURE_ROWID, 10) and totals record (1); None where
    it has no such table (not an FTS5 index, or not this connection's)."""
    try:
        rows = dict(conn.execute(f'SELECT id, block FROM "{index}_data" WHERE id IN (1, 10)').fetchall())
    except sqlite3.OperationalError:
        return None
    if 1 not in rows or 10 not in rows:
        return None
    return bytes(rows[10]), bytes(rows[1])


def _read_index(conn: sqlite3.Connection, index: str) -> _Index | None:
    """The index's columns, totals and every row's length; None where its tokens or lengths are
    not those this module computes with."""
    import numpy as np

    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (index,)).fetchone()
    if row is None or not row[0]:
        return None
    sql = row[0]
    tokenize = _TOKENIZE.search(sql)
    if tokenize is None or not _PLAIN.fullmatch(tokenize.group(1).strip()):
        return None
    if re.search(r"\b(detail|columnsize|contentless_delete)\s*=", sql, re.IGNORECASE):
        return None
    columns = {str(r[1]): i for i, r in enumerate(conn.execute(f'PRAGMA table_info("{index}")'))}
    if not columns or len(columns) > 26:  # (a letter each in ``_postings``)
        return None
    averages = conn.execute(f'SELECT block FROM "{index}_data" WHERE id = 1').fetchone()
    if averages is None:
        return None
    totals = _varints(bytes(averages[0]))
    if len(totals) < 1 + len(columns) or totals[0] <= 0:
        return None
    most = conn.execute(f'SELECT MAX(id) FROM "{index}_docsize"').fetchone()[0]
    lengths = np.full(int(most or 0) + 1, -1, dtype=np.int32)
    start = 0
    while start <= (most or -1):
        # one row back a chunk: the ids, the blobs' sizes and the blobs in hex (~5x faster than a
        # row each)
        ids, sizes, blobs = conn.execute(
            f'SELECT group_concat(id), group_concat(coalesce(length(sz), 0)), group_concat(hex(sz), \'\')'
            f' FROM "{index}_docsize" WHERE id >= ? AND id < ?', (start, start + _CHUNK)
        ).fetchone()
        if ids:
            lengths[np.fromstring(ids, dtype=np.int64, sep=",")] = _row_lengths(
                bytes.fromhex(blobs), np.fromstring(sizes, dtype=np.int64, sep=","), len(columns))
        start += _CHUNK
    return _Index(columns, int(totals[0]), int(sum(totals[1 : 1 + len(columns)])), lengths)


def _row_lengths(blob: bytes, counts: "np.ndarray", columns: int) -> "np.ndarray":
    """Each ``sz`` blob's tokens (the blobs one after the other, ``counts`` bytes each): its
    columns' varints summed (``xColumnSize(-1)``)."""
    import numpy as np

    data = np.frombuffer(blob, dtype=np.uint8)
    owner = np.repeat(np.arange(len(counts)), counts)
    sizes = len(counts)
    if not data.size or int(data.max()) < 0x80:  # every column below 128 tokens: one byte each
        return np.bincount(owner, weights=data, minlength=sizes).astype(np.int64)
    last = np.cumsum(counts)[counts > 0] - 1
    ends = np.flatnonzero(data < 0x80)
    if (data[last] >= 0x80).any() or int(np.diff(np.concatenate(([-1], ends))).max()) > 8:
        # a blob cut inside a varint, or a nine-byte one: decoded one by one
        bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
        return np.array([sum(_varints(blob[bounds[i] : bounds[i + 1]])[:columns]) for i in range(sizes)],
                        dtype=np.int64)
    stop = data < 0x80
    varint: np.ndarray = np.cumsum(stop) - stop  # each byte's varint: the stops before it
    shift = 7 * (ends[varint] - np.arange(data.size))
    values = np.bincount(varint, weights=(data & 0x7F).astype(np.int64) << shift, minlength=ends.size)
    return np.bincount(owner[ends], weights=values, minlength=sizes).astype(np.int64)


def _varints(data: bytes) -> list[int]:
    """SQLite's varints (big-endian, seven bits a byte, the ninth byte whole)."""
    out, at = [], 0
    while at < len(data):
        value = 0
        for k in range(9):
            byte = data[at]
            at += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        out.append(value)
    return out


def _postings(
    conn: sqlite3.Connection, index: str, held: _Index, word: str, weights: tuple[float, ...],
) -> tuple["np.ndarray", "np.ndarray"]:
    """The rows holding ``word`` (ascending) and its weighted count in each (FTS5's ``aFreq``:
    each instance adds its column's weight, 1.0 past the weights given)."""
    import numpy as np

    key = (word, weights)
    found = held.words.get(key)
    if found is not None:
        return found
    vocab = f"ctx_instances_{index}"
    # One row back, not one a posting: the rows and the instances' columns as text (~2.5x faster
    # than fetching a row per instance).
    column = "CASE col " + " ".join(f"WHEN '{name}' THEN '{chr(97 + i)}'" for name, i in held.columns.items()) + " END"
    sql = f'SELECT group_concat(doc), group_concat({column}, \'\') FROM temp."{vocab}" WHERE term = ?'
    try:
        docs, columns = conn.execute(sql, (word,)).fetchone()
    except sqlite3.OperationalError:
        conn.execute(f'CREATE VIRTUAL TABLE IF NOT EXISTS temp."{vocab}" USING fts5vocab(main, "{index}", instance)')
        docs, columns = conn.execute(sql, (word,)).fetchone()
    rowids: np.ndarray
    freq: np.ndarray
    if docs:
        by_column = np.array([weights[i] if i < len(weights) else 1.0 for i in range(len(held.columns))])
        rows = np.fromstring(docs, dtype=np.int64, sep=",")
        at = np.frombuffer(columns.encode("ascii"), dtype=np.uint8) - 97
        rowids, inverse = np.unique(rows, return_inverse=True)
        freq = np.bincount(inverse, weights=by_column[at], minlength=len(rowids))
    else:
        rowids, freq = np.zeros(0, dtype=np.int64), np.zeros(0)
    found = (rowids, freq)
    held.words[key] = found
    held.kept += rowids.size
    while held.kept > MAX_POSTINGS and len(held.words) > 1:
        held.kept -= held.words.pop(next(iter(held.words)))[0].size
    return found


def _scored(
    held: _Index, postings: list[tuple["np.ndarray", "np.ndarray"]], limit: int,
) -> list[tuple[int, float]] | None:
    import numpy as np

    rowids = np.unique(np.concatenate([r for r, _ in postings]))
    if not rowids.size:
        return []
    if int(rowids[-1]) >= held.lengths.size:
        return None
    lengths = held.lengths[rowids]
    if (lengths < 0).any():  # a row the index holds without a length: FTS5 would say it is corrupt
        return None
    avgdl = float(held.tokens) / float(held.rows)
    # k1 * (1 - b + b * D / avgdl), as fts5Bm25Function groups it
    norm = _K1 * ((1 - _B) + (_B * lengths.astype(np.float64)) / avgdl)
    score = np.zeros(rowids.size)
    for rows, freq in postings:
        idf = math.log((held.rows - rows.size + 0.5) / (rows.size + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        f = np.zeros(rowids.size)
        f[np.searchsorted(rowids, rows)] = freq
        score = score + idf * ((f * (_K1 + 1.0)) / (f + norm))
    best = np.lexsort((rowids, -score))[:limit]
    return [(int(r), float(s)) for r, s in zip(rowids[best].tolist(), score[best].tolist())]
