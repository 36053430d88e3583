"""Node and query vectors in the graph file (tables from migration 2).

Vectors are little-endian float32, L2-normalised, so a dot product is the cosine similarity. A
vector is *fresh* when its node still exists with the content hash it was embedded from and it was
made by the active model; anything else is stale and ignored by readers until ``ctx embed`` runs.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Iterable, Iterator

import numpy as np

from ctx.errors import CtxError
from ctx.store.batches import chunks
from ctx.store.db import content_state
from ctx.store.transaction import savepoint, transaction
from ctx.store.types import EmbeddingStatus

_ACTIVE_MODEL_KEY = "embedding_model"


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def _matrix(blobs: list[bytes]) -> np.ndarray:
    """Stored vectors as one float32 matrix. One of another size (a damaged file: ``ctx doctor``
    lists it) cannot be shaped; every build that ranked by these failed with 'internal error:
    ValueError: cannot reshape', which said neither what was wrong nor what to do."""
    # Asked of numpy rather than checked blob by blob beforehand: a sound graph pays nothing (a set
    # of 100k blob lengths cost ~8% of joining them).
    try:
        return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    except ValueError:
        raise CtxError("the graph holds vectors of the wrong size (a damaged file): `ctx doctor` lists them;"
                       " `ctx embed` embeds them again") from None


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<f4")


def active_model(conn: sqlite3.Connection) -> str | None:
    """The model the graph's vectors come from (set by the last ``ctx embed``), if any."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_ACTIVE_MODEL_KEY,)).fetchone()
    return row[0] if row else None


def set_active_model(conn: sqlite3.Connection, model: str) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_ACTIVE_MODEL_KEY, model)
    )


def status(conn: sqlite3.Connection, model: str | None = None) -> EmbeddingStatus:
    model = model or active_model(conn)
    nodes = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    if model is None:
        return EmbeddingStatus(None, nodes, 0)
    fresh = conn.execute(
        "SELECT COUNT(*) FROM embeddings e JOIN nodes n"
        " ON n.id = e.node_id AND n.content_hash = e.content_hash WHERE e.model = ?",
        (model,),
    ).fetchone()[0]
    return EmbeddingStatus(model, nodes, fresh)


def model_dim(conn: sqlite3.Connection, model: str) -> int:
    """The dimension of ``model``'s stored vectors (0 when it has none)."""
    row = conn.execute("SELECT dim FROM embeddings WHERE model = ? LIMIT 1", (model,)).fetchone()
    return int(row[0]) if row else 0


def pending_node_ids(conn: sqlite3.Connection, model: str) -> list[str]:
    """Nodes to (re-)embed for ``model``: no vector, changed content, or another model's vector."""
    return [
        r[0]
        for r in conn.execute(
            # A vector of the wrong size (a damaged file) is re-embedded, as ``ctx doctor`` advises.
            "SELECT n.id FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id"
            " WHERE e.node_id IS NULL OR e.model != ? OR e.content_hash != n.content_hash"
            " OR length(e.vector) != 4 * e.dim"
            " ORDER BY n.rowid",
            (model,),
        )
    ]


def iter_node_texts(
    conn: sqlite3.Connection, ids: list[str], chunk: int = 256
) -> Iterator[list[tuple[str, str, str, str]]]:
    """(id, title, body, content_hash) rows for ``ids``, a chunk at a time, in the given order."""
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
        marks = ",".join("?" * len(part))
        rows = {
            r[0]: (r[0], r[1], r[2], r[3])
            for r in conn.execute(
                f"SELECT id, title, body, content_hash FROM nodes WHERE id IN ({marks})", part
            )
        }
        yield [rows[i] for i in part if i in rows]


def write_vectors(
    conn: sqlite3.Connection, model: str, rows: Iterable[tuple[str, str, np.ndarray]]
) -> int:
    """Store (node_id, content_hash, vector) rows for ``model``, replacing what each node had."""
    data = [(node_id, model, int(v.shape[0]), h, to_blob(v)) for node_id, h, v in rows]
    with transaction(conn):
        # REPLACE deletes the old row and inserts a new one, so seq grows: caches see the change.
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings (node_id, model, dim, content_hash, vector)"
            " VALUES (?, ?, ?, ?, ?)",
            data,
        )
    return len(data)


def prune_orphans(conn: sqlite3.Connection, model: str | None = None, also_keep: str | None = None) -> int:
    """Drop vectors of nodes that no longer exist and, given the active ``model``, passage
    vectors no passage needs (another model's than ``model`` and ``also_keep``, the first stage's,
    or texts no passage has any more). Returns the node vectors dropped."""
    with transaction(conn):
        dropped = conn.execute("DELETE FROM embeddings WHERE node_id NOT IN (SELECT id FROM nodes)").rowcount
        if model is not None:
            conn.execute(
                "DELETE FROM passage_vectors WHERE model NOT IN (?, ?) OR hash NOT IN (SELECT hash FROM passages)",
                (model, also_keep or model),
            )
    return dropped


def prune_paragraph_vectors(conn: sqlite3.Connection, model: str, stale: list[tuple[str, str]] | None = None) -> int:
    """Drop paragraph vectors no build reads: another model's, or a passage's no longer there
    (edited or deleted), and ``stale``'s (passage hash, paragraph hash) pairs of ``model``: those
    no longer wanted though their passage is there (its note is no longer a dated log). Run by
    ``ctx embed`` after it has copied what an edited passage's unchanged paragraphs can take over,
    not with the other vectors before: pruned first, those paragraphs would be embedded again.
    Returns the rows dropped."""
    if not _has_paragraph_vectors(conn):
        return 0
    with transaction(conn):
        dropped = int(conn.execute(
            "DELETE FROM paragraph_vectors WHERE model != ? OR passage_hash NOT IN (SELECT hash FROM passages)",
            (model,),
        ).rowcount)
        for passage_hash, hash_ in stale or ():
            dropped += int(conn.execute(
                "DELETE FROM paragraph_vectors WHERE model = ? AND passage_hash = ? AND hash = ?",
                (model, passage_hash, hash_),
            ).rowcount)
    return dropped


# -- passage vectors (migration 5): one per distinct embedded text and model ---------------------


def pending_passages(conn: sqlite3.Connection, model: str) -> list[tuple[str, str]]:
    """(hash, text to embed) of every distinct passage text without a vector of ``model``,
    shortest text first (then by hash); a text several passages share is read from the first.

    The texts are cut from each body read once (``passage_reads.span_texts``): through the
    ``passage_texts`` view each passage row loaded its whole body again and ``substr`` walked it
    to the span, so a graph of long notes paid for every body once per passage it holds."""
    from ctx.store.passage_reads import embed_text, span_texts, sqlite_length

    with savepoint(conn, "pending_passages"):
        rows = conn.execute(
            'SELECT p.id, p.node_id, p.hash, p.context, p.heading, p.own_text, p.start, p."end" FROM passages p'
            " WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = ? AND v.hash = p.hash"
            " AND length(v.vector) = 4 * v.dim)",
            (model,),
        ).fetchall()
        # The node's own title (the view's is the one the indexes hold: migration 18).
        texts = span_texts(conn, [(r[0], r[1], r[5], r[6], r[7]) for r in rows])
    first: dict[str, tuple[str, str]] = {}
    for pid, _, digest, context, heading, *_ in sorted(rows, key=lambda row: row[0]):
        if pid in texts and digest not in first:
            first[digest] = (embed_text(texts[pid][0], context, heading, texts[pid][1]), texts[pid][1])
    # As the view's ``ORDER BY length(p.text), p.hash``: SQLite's length, in characters.
    order = sorted(first, key=lambda digest: (sqlite_length(first[digest][1]), digest))
    return [(digest, first[digest][0]) for digest in order]


def write_passage_vectors(conn: sqlite3.Connection, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
    with transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO passage_vectors (model, hash, dim, vector) VALUES (?, ?, ?, ?)",
            [(model, h, int(v.shape[0]), to_blob(v)) for h, v in rows],
        )


# -- paragraph vectors (migration 19): a long log passage's paragraphs, each its own vector ------


def _has_paragraph_vectors(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'paragraph_vectors'"
    ).fetchone() is not None


def nodes_with_passages(conn: sqlite3.Connection, at_least: int) -> list[str]:
    """Nodes split into ``at_least`` passages or more, by id."""
    return [r[0] for r in conn.execute(
        "SELECT node_id FROM passages GROUP BY node_id HAVING COUNT(*) >= ? ORDER BY node_id", (at_least,))]


def paragraph_vector_keys(conn: sqlite3.Connection, model: str) -> set[tuple[str, str]]:
    """(passage hash, paragraph hash) of every stored paragraph vector of ``model``."""
    if not _has_paragraph_vectors(conn):
        return set()
    return {(r[0], r[1]) for r in conn.execute(
        "SELECT passage_hash, hash FROM paragraph_vectors WHERE model = ? AND length(vector) = 4 * dim", (model,))}


def write_paragraph_vectors(conn: sqlite3.Connection, model: str, rows: list[tuple[str, str, np.ndarray]]) -> None:
    """Store (passage hash, paragraph hash, vector) rows of ``model``."""
    with transaction(conn):
        conn.executemany(
            "INSERT OR REPLACE INTO paragraph_vectors (model, passage_hash, hash, dim, vector) VALUES (?, ?, ?, ?, ?)",
            [(model, ph, h, int(v.shape[0]), to_blob(v)) for ph, h, v in rows],
        )


def copy_paragraph_vectors(conn: sqlite3.Connection, model: str, rows: list[tuple[str, str]]) -> int:
    """Give each (passage hash, paragraph hash) the vector its paragraph text already has under
    another passage (an edited passage's unchanged paragraphs): nothing is embedded again.
    Returns the rows written."""
    written = 0
    with transaction(conn):
        for passage_hash, hash_ in rows:
            written += conn.execute(
                "INSERT OR IGNORE INTO paragraph_vectors (model, passage_hash, hash, dim, vector)"
                " SELECT model, ?, hash, dim, vector FROM paragraph_vectors WHERE model = ? AND hash = ?"
                " AND length(vector) = 4 * dim LIMIT 1",
                (passage_hash, model, hash_),
            ).rowcount
    return written


def paragraph_vector_hashes(conn: sqlite3.Connection, model: str) -> set[str]:
    """Every paragraph text hash with a vector of ``model``."""
    if not _has_paragraph_vectors(conn):
        return set()
    return {r[0] for r in conn.execute(
        "SELECT DISTINCT hash FROM paragraph_vectors WHERE model = ? AND length(vector) = 4 * dim", (model,))}


def paragraph_vector_count(conn: sqlite3.Connection, model: str | None, *, include_private: bool = True) -> int:
    """Paragraph vectors of ``model`` that belong to a passage the graph has now; without
    ``include_private``, only passages of notes that are not private (a private log's paragraph
    count is its shape, which a reader without access is not shown, as ``embedding_coverage``)."""
    if model is None or not _has_paragraph_vectors(conn):
        return 0
    visible = "" if include_private else " AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.node_id AND n.private = 0)"
    return int(conn.execute(
        "SELECT COUNT(*) FROM paragraph_vectors v WHERE v.model = ?"
        " AND EXISTS (SELECT 1 FROM passages p WHERE p.hash = v.passage_hash" + visible + ")",
        (model,),
    ).fetchone()[0])


def paragraph_vector_owners(conn: sqlite3.Connection, model: str) -> set[tuple[str, str, str]]:
    """(node id, passage hash, paragraph hash) of every paragraph vector of ``model`` whose
    passage the graph has now: ``all_paragraph_vectors``' join without its vectors (and without
    DISTINCT or ORDER BY, each a temporary B-tree: 7 ms against 40 on 5,220 vectors)."""
    if not _has_paragraph_vectors(conn):
        return set()
    return {(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT p.node_id, v.passage_hash, v.hash FROM paragraph_vectors v"
        " JOIN passages p ON p.hash = v.passage_hash WHERE v.model = ?", (model,))}


def all_paragraph_vectors(
    conn: sqlite3.Connection, model: str,
) -> tuple[list[int], list[str], list[str], np.ndarray]:
    """(passage ids, their node ids, paragraph hashes, float32 matrix) of every paragraph vector of
    ``model`` whose passage the graph has now; a passage's text changed since is not among them
    (its hash moved), so a stale paragraph vector is never read."""
    rows = []
    if _has_paragraph_vectors(conn):
        rows = conn.execute(
            "SELECT p.id, p.node_id, v.hash, v.vector FROM paragraph_vectors v"
            " JOIN passages p ON p.hash = v.passage_hash WHERE v.model = ? ORDER BY p.id, v.hash",
            (model,),
        ).fetchall()
    if not rows:
        return [], [], [], np.zeros((0, 0), dtype=np.float32)
    matrix = _matrix([r[3] for r in rows])
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], matrix


def candidate_passages(
    conn: sqlite3.Connection, model: str, passage_ids: list[int]
) -> list[tuple[int, str, str, str, np.ndarray | None]]:
    """(id, node id, hash, text to embed, vector of ``model`` or None) of each of ``passage_ids``
    that exists, in id order: what a build needs to rank candidates by ``model``. The texts are
    cut from each body read once (``passage_reads.span_texts``), as ``pending_passages``'."""
    from ctx.store.passage_reads import embed_text, span_texts

    rows = []
    with savepoint(conn, "candidate_passages"):
        for part in chunks(list(passage_ids)):
            rows += conn.execute(
                'SELECT p.id, p.node_id, p.hash, p.context, p.heading, p.own_text, p.start, p."end", v.vector'
                " FROM passages p LEFT JOIN passage_vectors v ON v.model = ? AND v.hash = p.hash"
                f" WHERE p.id IN ({','.join('?' * len(part))})",
                (model, *part),
            ).fetchall()
        # The node's own title, as pending_passages reads it (the view's is the indexed one).
        texts = span_texts(conn, [(r[0], r[1], r[5], r[6], r[7]) for r in rows])
    return sorted(
        ((r[0], r[1], r[2], embed_text(texts[r[0]][0], r[3], r[4], texts[r[0]][1]), None if r[8] is None else from_blob(r[8]))
         for r in rows if r[0] in texts),
        key=lambda row: row[0],
    )


def remember_passage_vectors(conn: sqlite3.Connection, model: str, rows: list[tuple[str, np.ndarray]]) -> bool:
    """Store passage vectors a build computed; best effort, as ``cache_query_vector``: never waits
    for a lock, and a read-only or busy graph keeps nothing. True when they were stored."""
    waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        write_passage_vectors(conn, model, rows)
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")


def all_passage_vectors(conn: sqlite3.Connection, model: str) -> tuple[list[int], list[str], np.ndarray]:
    """(passage ids, their node ids, float32 matrix) of every passage with a vector of ``model``."""
    try:
        rows = conn.execute(
            "SELECT p.id, p.node_id, v.vector FROM passages p"
            " JOIN passage_vectors v ON v.model = ? AND v.hash = p.hash ORDER BY p.id",
            (model,),
        ).fetchall()
    except sqlite3.OperationalError:  # a read-only graph from before passages existed
        rows = []
    if not rows:
        return [], [], np.zeros((0, 0), dtype=np.float32)
    matrix = _matrix([r[2] for r in rows])
    return [r[0] for r in rows], [r[1] for r in rows], matrix


# The passage matrix of the last connection asked, kept between builds: a warm process (the MCP
# server) answers question after question from the same vectors, and reading them all is the
# largest read of a free-text build on an embedded graph. One slot; the connection is held, so an
# ``is`` check can never match another connection that reused a freed address.
_KEPT_PASSAGES: list[tuple[sqlite3.Connection, tuple[object, ...], tuple[list[int], list[str], np.ndarray]]] = []


def passage_vectors_state(conn: sqlite3.Connection, model: str) -> tuple[object, ...]:
    """Changes whenever ``all_passage_vectors(conn, model)`` may: any connection wrote what builds
    read (``db.content_state``), an import on this one (``graph_version``: passages are re-split and
    renumbered there), or vectors were written or removed on this one (their count and the
    highest rowid, which every INSERT OR REPLACE moves). Index steps only, no vector read."""
    try:
        passages = conn.execute("SELECT MAX(id) FROM passages").fetchone()[0]
        count, top = conn.execute(
            "SELECT COUNT(*), MAX(rowid) FROM passage_vectors WHERE model = ?", (model,)
        ).fetchone()
    except sqlite3.OperationalError:  # a graph from before passages existed
        passages = count = top = None
    version = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    return (model, content_state(conn), version[0] if version else None, passages, count, top)


def kept_passage_vectors(conn: sqlite3.Connection, model: str) -> tuple[list[int], list[str], np.ndarray]:
    """``all_passage_vectors``, read again only when ``passage_vectors_state`` moved. The lists and
    the (read-only) matrix are shared between callers: never modify them."""
    state = passage_vectors_state(conn, model)
    if _KEPT_PASSAGES and _KEPT_PASSAGES[0][0] is conn and _KEPT_PASSAGES[0][1] == state:
        return _KEPT_PASSAGES[0][2]
    found = all_passage_vectors(conn, model)
    _KEPT_PASSAGES[:] = [(conn, state, found)]
    return found


def vectors_for(conn: sqlite3.Connection, model: str, ids: list[str]) -> dict[str, np.ndarray]:
    """Fresh vectors of the given nodes (nodes without one are simply absent)."""
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for node_id, blob in conn.execute(
            "SELECT e.node_id, e.vector FROM embeddings e JOIN nodes n"
            " ON n.id = e.node_id AND n.content_hash = e.content_hash"
            f" WHERE e.model = ? AND e.node_id IN ({marks})",
            (model, *part),
        ):
            out[node_id] = from_blob(blob)
    return out


def unembedded_nodes(conn: sqlite3.Connection, model: str, ids: Iterable[str]) -> set[str]:
    """Those of ``ids`` without a fresh vector of ``model`` (edited or added since ``ctx embed``)."""
    wanted = list(dict.fromkeys(ids))
    return set(wanted) - set(vectors_for_ids(conn, model, wanted))


def vectors_for_ids(conn: sqlite3.Connection, model: str, ids: list[str]) -> list[str]:
    """Those of ``ids`` that have a fresh vector of ``model``."""
    out: list[str] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        out += [
            r[0]
            for r in conn.execute(
                "SELECT e.node_id FROM embeddings e JOIN nodes n"
                " ON n.id = e.node_id AND n.content_hash = e.content_hash"
                f" WHERE e.model = ? AND e.node_id IN ({marks})",
                (model, *part),
            )
        ]
    return out


def unembedded_passages(conn: sqlite3.Connection, model: str, passage_ids: Iterable[int]) -> set[int]:
    """Those of ``passage_ids`` whose current text has no vector of ``model``."""
    wanted = list(dict.fromkeys(passage_ids))
    out: set[int] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        out.update(
            r[0]
            for r in conn.execute(
                f"SELECT p.id FROM passages p WHERE p.id IN ({marks}) AND NOT EXISTS"
                " (SELECT 1 FROM passage_vectors v WHERE v.model = ? AND v.hash = p.hash)",
                (*part, model),
            )
        )
    return out


def vectors_state(conn: sqlite3.Connection, model: str) -> str:
    """Changes whenever the set of fresh vectors may have changed: keys caches of the matrix."""
    graph_version = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    count, max_seq = conn.execute(
        "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM embeddings WHERE model = ?", (model,)
    ).fetchone()
    return f"g{graph_version[0] if graph_version else 0}-n{count}-s{max_seq}"


def all_fresh_vectors(conn: sqlite3.Connection, model: str) -> tuple[list[str], np.ndarray]:
    """Every fresh vector as (ids, float32 matrix of shape (len(ids), dim)), ordered by node id."""
    rows = conn.execute(
        "SELECT e.node_id, e.vector FROM embeddings e JOIN nodes n"
        " ON n.id = e.node_id AND n.content_hash = e.content_hash"
        " WHERE e.model = ? ORDER BY e.node_id",
        (model,),
    ).fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    ids = [r[0] for r in rows]
    matrix = _matrix([r[1] for r in rows])
    return ids, matrix


QUERY_CACHE_ENTRIES = 1000  # free-text topics whose vectors are kept (the most recently embedded)


def _query_key(text: str) -> str:
    # Spacing does not change what the model sees (its tokenizer splits on whitespace).
    normal = " ".join(text.split())
    return hashlib.blake2b(normal.encode("utf-8"), digest_size=16).hexdigest()


def cached_query_vector(conn: sqlite3.Connection, model: str, text: str) -> np.ndarray | None:
    row = conn.execute(
        "SELECT vector FROM query_embeddings WHERE model = ? AND text_hash = ?",
        (model, _query_key(text)),
    ).fetchone()
    return from_blob(row[0]) if row else None


def cache_query_vector(conn: sqlite3.Connection, model: str, text: str, vector: np.ndarray) -> None:
    """Remember a topic's vector; a read-only or busy database just means no cache this time.

    The write does not wait for a lock: the connection waits up to 30 s for one (see store.db),
    and a build must not stall behind a running import for a cache entry.
    """
    waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute(
            "INSERT OR REPLACE INTO query_embeddings (model, text_hash, dim, vector, used_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (model, _query_key(text), int(vector.shape[0]), to_blob(vector), time.time()),
        )
        # Bounded: an agent asking a new question every call must not grow the graph file for
        # ever (1.5 kB a question). The newest entries stay; reading them is one index lookup.
        conn.execute(
            "DELETE FROM query_embeddings WHERE rowid IN"
            " (SELECT rowid FROM query_embeddings ORDER BY used_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
            (QUERY_CACHE_ENTRIES,),
        )
    except sqlite3.OperationalError:
        pass
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")
