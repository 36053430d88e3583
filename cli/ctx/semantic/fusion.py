"""Reciprocal rank fusion: merge rankings from different retrievers without calibrating scores.

BM25 scores and cosine similarities live on unrelated scales; RRF (Cormack et al., 2009) uses only
each item's rank in each list, ``sum(weight / (k + rank))``, which is robust and needs no tuning
beyond ``k`` (60 in the paper: it damps the difference between rank 1 and rank 2).
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60
# How deep each ranking goes before fusion: deep enough that an item ranked well by one retriever
# and poorly by the other still surfaces, shallow enough to stay cheap.
POOL = 50


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Items of all ``rankings`` (each best first) with their fused score, best first, ties by id."""
    weights = weights if weights is not None else [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
