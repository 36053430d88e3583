"""Hybrid retrieval: BM25 over FTS5 and nearest vectors, fused by rank.

Words catch names and rare terms; vectors catch a question that shares no word with its answer.
Neither alone is reliable on real questions, and RRF needs no score calibration between them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ctx.semantic.fusion import reciprocal_rank_fusion
from ctx.semantic.search import VectorIndex, load_index
from ctx.semantic.topic import TopicVector
from ctx.stopwords import content_words
from ctx.store.reads import search as fts_search

# How deep each list goes before fusion: deep enough that an item ranked well by one retriever
# and poorly by the other still surfaces, shallow enough to stay cheap.
POOL = 50


@dataclass
class HybridHit:
    id: str
    score: float  # fused RRF score
    bm25_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None


def vector_search(
    conn: sqlite3.Connection, topic: TopicVector, k: int, index: VectorIndex | None = None
) -> list[tuple[str, float]]:
    if topic.vector is None or topic.model is None:
        return []
    index = index if index is not None else load_index(conn, topic.model)
    return index.nearest(topic.vector, k)


def hybrid_search(
    conn: sqlite3.Connection,
    text: str,
    topic: TopicVector,
    *,
    limit: int = 10,
    pool: int = POOL,
    mode: str = "hybrid",
    include_private: bool = False,
) -> list[HybridHit]:
    """The best ``limit`` nodes for ``text``: ``hybrid`` (RRF of both), ``fts`` or ``vector`` only.

    Full-text search matches any word (OR): a question's words rarely all occur in one note.
    Vector hits are not filtered for privacy here (the index holds every node): callers do it.
    """
    bm25 = (
        [
            h.id
            for h in fts_search(
                conn, content_words(text), limit=pool, mode="or", include_private=include_private
            )
        ]
        if mode != "vector"
        else []
    )
    dense = vector_search(conn, topic, pool) if mode != "fts" else []
    sims = dict(dense)
    dense_ids = [node_id for node_id, _ in dense]
    rankings = [r for r in (bm25, dense_ids) if r]
    fused = reciprocal_rank_fusion(rankings)[:limit]
    bm25_rank = {node_id: i for i, node_id in enumerate(bm25, start=1)}
    vector_rank = {node_id: i for i, node_id in enumerate(dense_ids, start=1)}
    return [
        HybridHit(
            node_id,
            score,
            bm25_rank.get(node_id),
            vector_rank.get(node_id),
            sims.get(node_id),
        )
        for node_id, score in fused
    ]
