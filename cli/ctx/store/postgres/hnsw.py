"""Nearest node vectors from pgvector's HNSW index, for graphs too large to rank every vector.

Below ``MIN_VECTORS`` vectors of a model (or with ``CTX_EXACT_VECTORS=1``) ctx ranks every
vector exactly, as on SQLite, and both engines give the same answers. From there on, ``ctx
embed`` builds an HNSW index over the model's vectors once they are loaded (building it first
and adding rows to it costs ~10x), and readers ask it for the nearest nodes: approximate
(bench/bench_team.py hnsw measures recall@10 against exact search), each candidate's similarity
recomputed exactly from its vector, ties by id, as the exact search orders them.

The index is partial (one model) on an expression of fixed dimension (HNSW needs one), so its
name, model and dimension are in the SQL text as literals: a generic plan with parameters could
not prove that the partial index applies.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import psycopg

# Below this many vectors of a model, exact search (one matrix product) is fast and exact.
MIN_VECTORS = int(os.environ.get("CTX_HNSW_MIN_VECTORS", "20000") or 20000)
# Candidates the index is asked for beyond k (ties at the cut, stale or private rows dropped).
EXTRA = 16
# The index's search breadth: on 20,000 clustered synthetic vectors of 384 dimensions, recall@10
# against exact search was 0.54 at pgvector's default (40), 0.77 at 100, 0.94 at 200 and 0.997 at
# 400, each ~12-17 ms a query at load ~13 (bench_team.py hnsw measures it at 100,000).
EF_SEARCH = int(os.environ.get("CTX_HNSW_EF_SEARCH", "400") or 400)


def index_name(model: str, dim: int) -> str:
    return "embeddings_hnsw_" + hashlib.blake2b(f"{model}\0{dim}".encode(), digest_size=6).hexdigest()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def build(conn: "psycopg.Connection[Any]", model: str) -> bool:
    """The HNSW index of ``model``'s vectors, made when there are at least MIN_VECTORS of them
    and it does not exist yet (inside the caller's write transaction)."""
    row = conn.execute("SELECT count(*), max(dim), min(dim) FROM embeddings WHERE model = %s", (model,)).fetchone()
    if row is None or int(row[0]) < MIN_VECTORS or row[1] != row[2]:
        return existing(conn, model) is not None
    dim = int(row[1])
    name = index_name(model, dim)
    conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON embeddings USING hnsw ((vector::vector({dim})) vector_cosine_ops)"
        f" WHERE model = {_literal(model)}"
    )
    # Statistics of the table as loaded: without them the planner reckons a handful of vectors
    # and sorts them all rather than ask the index.
    conn.execute("ANALYZE embeddings")
    return True


def existing(conn: "psycopg.Connection[Any]", model: str) -> tuple[str, int] | None:
    """(index name, dimension) of the model's HNSW index, if there is one."""
    row = conn.execute("SELECT max(dim) FROM embeddings WHERE model = %s", (model,)).fetchone()
    if row is None or row[0] is None:
        return None
    dim = int(row[0])
    name = index_name(model, dim)
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    return (name, dim) if found and found[0] else None


class IndexedNodes:
    """``NearestNodes`` answered by the HNSW index of one model."""

    def __init__(self, conn: "psycopg.Connection[Any]", model: str, dim: int) -> None:
        self.conn, self.model, self.dim = conn, model, dim

    def _rows(self, query: np.ndarray, wanted: int) -> list[tuple[Any, ...]]:
        from ctx.store.postgres.vector_text import vector_text

        return self.conn.execute(
            f"SELECT x.node_id, x.vector, s.stale FROM (SELECT e.node_id, e.vector, e.content_hash FROM embeddings e"
            f"  WHERE e.model = {_literal(self.model)}"
            f"  ORDER BY e.vector::vector({self.dim}) <=> %s::vector({self.dim}) LIMIT %s) x"
            " CROSS JOIN LATERAL (SELECT NOT EXISTS (SELECT 1 FROM nodes n"
            "  WHERE n.id = x.node_id AND n.content_hash = x.content_hash) AS stale) s",
            (vector_text(query), wanted),
        ).fetchall()

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        from ctx.store.postgres.vector_text import _vector

        if k <= 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        wanted = k + EXTRA
        while True:
            # The index answers the inner query alone (joined, the planner misjudges the join's
            # size and sorts every vector); vectors of edited nodes are dropped after it, and the
            # index asked again for more when that left fewer than wanted.
            # SET LOCAL, in a transaction of its own: a pooled connection (PgBouncer) keeps no
            # setting of ours for the next client.
            with self.conn.transaction():
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {min(1000, max(EF_SEARCH, wanted))}")
                rows = self._rows(query, wanted)
            fresh = [r for r in rows if not r[2]]
            if len(fresh) >= k + EXTRA or len(rows) < wanted or wanted >= 1000:
                break
            wanted *= 4
        if not fresh:
            return []
        sims = np.vstack([_vector(r[1]) for r in fresh]) @ query
        ranked = sorted((-float(s), r[0]) for s, r in zip(sims, fresh, strict=True))[:k]
        return [(node_id, -neg) for neg, node_id in ranked]


def search_for(conn: "psycopg.Connection[Any]", model: str) -> IndexedNodes | None:
    if os.environ.get("CTX_EXACT_VECTORS", "") not in ("", "0"):
        return None
    found = existing(conn, model)
    return IndexedNodes(conn, model, found[1]) if found else None
