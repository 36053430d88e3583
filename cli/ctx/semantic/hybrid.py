"""Hybrid retrieval: BM25 over FTS5 and nearest vectors, fused by rank.

Words catch names and rare terms; vectors catch a question that shares no word with its answer.
Neither alone is reliable on real questions, and RRF needs no score calibration between them.
This is the one place the two node rankings are fetched and fused: free-text seeds
(``ctx.semantic.seeds``, for graphs without passages) and the fused relevance score term
(``ctx.assemble.relevance``) both call ``fused_ranking``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from ctx.semantic.fusion import POOL, RRF_K, reciprocal_rank_fusion
from ctx.semantic.search import load_index
from ctx.semantic.topic import TopicVector

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader

MODES = ("hybrid", "fts", "vector")


@dataclass
class HybridHit:
    id: str
    score: float  # fused RRF score
    bm25_rank: int | None = None
    vector_rank: int | None = None
    similarity: float | None = None


def fused_ranking(
    graph: GraphReader,
    query: str,
    topic: TopicVector,
    *,
    pool: int = POOL,
    k: int = RRF_K,
    mode: str = "hybrid",
) -> list[HybridHit]:
    """Every node in the top ``pool`` of either ranking, fused (``hybrid``), or one ranking alone.

    ``query`` goes to full-text search as it is, any word matching (OR): a question's words rarely
    all occur in one note. Private nodes leave the vector ranking before fusion (the index holds
    every node), as full-text search already leaves them out, so they never move a visible node.
    """
    bm25 = (
        [h.id for h in graph.search(query, limit=pool, mode="or", snippets=False)]
        if mode != "vector" else []
    )
    dense = _nearest_visible(graph, topic, pool) if mode != "fts" else []
    dense_ids = [node_id for node_id, _ in dense]
    unvectored: set[str] = set()
    if dense_ids and bm25:
        # A note edited or added since the last `ctx embed` is ranked by full text alone, never
        # below where it would stand without vectors (``semantic.fusion``).
        assert topic.model is not None
        listed = set(dense_ids)
        unvectored = graph.unvectored_nodes(topic.model, [i for i in bm25 if i not in listed])
    fused = reciprocal_rank_fusion(
        [r for r in (bm25, dense_ids) if r], k=k, unseen=[None, unvectored] if unvectored else None,
    )
    bm25_rank = {node_id: i for i, node_id in enumerate(bm25, start=1)}
    vector_rank = {node_id: i for i, node_id in enumerate(dense_ids, start=1)}
    sims = dict(dense)
    return [
        HybridHit(node_id, score, bm25_rank.get(node_id), vector_rank.get(node_id), sims.get(node_id))
        for node_id, score in fused
    ]


def _nearest_visible(graph: GraphReader, topic: TopicVector, pool: int) -> list[tuple[str, float]]:
    """(node id, similarity) of the ``pool`` visible nodes nearest the topic's vector, if it has one."""
    if topic.vector is None or topic.model is None:
        return []
    nearest = load_index(graph, topic.model).nearest(topic.vector, pool + graph.hidden_total())
    allowed = graph.visible_ids([i for i, _ in nearest])
    return [(i, s) for i, s in nearest if i in allowed][:pool]
