"""Seeds for a free-text topic from full-text and vector search together.

Called by ``ctx.assemble.resolve`` for topics that are neither an id nor an exact title. Kept free
of module-level numpy imports: a graph without embeddings answers ``None`` (use full-text search
alone) after one SQL query, without loading anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader

RETRIEVAL_METHODS = ("hybrid", "fts", "vector")


def search_seeds(
    graph: GraphReader,
    text: str,
    *,
    method: str = "hybrid",
    max_seeds: int = 3,
    cutoff: float = 0.6,
) -> tuple[tuple[str, ...], tuple[float, ...]] | None:
    """(seed ids, relevance in (0, 1] per seed), best first; None when vectors cannot take part.

    ``hybrid`` fuses BM25 and vector ranks (RRF); ``vector`` uses similarity alone; ``fts`` is not
    handled here (the caller's BM25 path). A hit becomes a seed when its fused score is at least
    ``cutoff`` of the best: with RRF a hit first in one list only scores half of one first in both,
    so the default 0.6 asks the two retrievers to agree unless one of them has nothing better.
    """
    if method not in ("hybrid", "vector") or not graph.has_vectors():
        return None
    from ctx.semantic.hybrid import fused_ranking
    from ctx.semantic.topic import from_text
    from ctx.stopwords import content_words

    topic = from_text(graph, [text])
    if topic.vector is None:
        return None
    pool = max(50, max_seeds * 5)
    hits = fused_ranking(graph, content_words(text), topic, pool=pool, mode=method)
    if method == "vector":
        ranked = [(h.id, h.similarity or 0.0) for h in hits]
    else:
        ranked = [(h.id, h.score) for h in hits]
    if not ranked:
        return (), ()
    best = ranked[0][1]
    if best <= 0:
        chosen = ranked[:max_seeds]
        return tuple(i for i, _ in chosen), tuple(1.0 for _ in chosen)
    chosen = [(i, s) for i, s in ranked if s >= best * cutoff][:max_seeds]
    return tuple(i for i, _ in chosen), tuple(round(s / best, 6) for _, s in chosen)
