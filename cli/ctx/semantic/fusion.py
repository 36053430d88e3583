"""Reciprocal rank fusion: merge rankings from different retrievers without calibrating scores.

BM25 scores and cosine similarities live on unrelated scales; RRF (Cormack et al., 2009) uses only
each item's rank in each list, ``sum(weight / (k + rank))``, which is robust and needs no tuning
beyond ``k`` (60 in the paper: it damps the difference between rank 1 and rank 2).

A vector ranking cannot see what has no current vector: a note edited or added since the last
``ctx embed``. Left out of that ranking, such an item would lose to everything the vectors rank at
all, however well full text ranks it, and an embedded graph would hide exactly the notes that just
changed. So an item a ranking could not see (``unseen``) but another ranking found counts as first
in the ranking that missed it: the one rank that never puts it below an item the other rankings
place below it, i.e. never below where the graph without vectors would put it.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import TypeVar

T = TypeVar("T", str, int)

RRF_K = 60
# How deep each ranking goes before fusion: deep enough that an item ranked well by one retriever
# and poorly by the other still surfaces, shallow enough to stay cheap.
POOL = 50


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[T]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
    unseen: Sequence[Container[T] | None] | None = None,
) -> list[tuple[T, float]]:
    """Items of all ``rankings`` (each best first) with their fused score, best first, ties by id.

    ``unseen[i]``, when given, holds items ranking ``i`` could not rank (no current vector): each
    of them that another ranking found scores as if ranking ``i`` had put it first.
    """
    weights = weights if weights is not None else [1.0] * len(rankings)
    scores: dict[T, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    for i, blind in enumerate(unseen or ()):
        if not blind:
            continue
        ranked = set(rankings[i])
        for item in scores:
            if item in blind and item not in ranked:
                scores[item] += weights[i] / (k + 1)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
