"""Resolve: turn each topic the user typed into seed node ids.

Order of trust: an exact node id; an exact title or alias (case-insensitive); else the best BM25
full-text hits, keeping only hits close to the best one so a weak match never becomes a seed.
When the graph has embeddings, free-text topics are resolved by BM25 and vector search together
(reciprocal rank fusion, ``ctx.semantic.seeds``), so a question sharing no word with the right
note still finds it; the lens's ``seeds.retrieval`` can ask for one of them alone.
With ``seeds.mentions`` a free-text topic also seeds from the notes whose titles it names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx.stopwords import content_words, only_function_words, only_function_words_message

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader
    from ctx.assemble.passage_rank import PassageRanking

# Ranks the passages a graph view may see for a free-text topic: (view, text, retrieval) -> a
# ranking; None where the graph has no passages (then whole nodes are searched).
PassageSearch = Callable[["GraphReader", str, str], "PassageRanking | None"]

FTS_MAX_SEEDS = 3
# A hit must score at least this share of the best hit's BM25 to become a seed as well.
FTS_RELATIVE_CUTOFF = 0.6


@dataclass(frozen=True)
class ResolvedTopic:
    topic: str
    ids: tuple[str, ...]
    how: str  # "id", "title", "search" (BM25), "hybrid", "vector", "mention" or "none"
    relevance: tuple[float, ...] = ()  # per id: a search hit's share of the best hit's score

    def relevance_of(self, node_id: str) -> float:
        if node_id in self.ids and len(self.relevance) == len(self.ids):
            return self.relevance[self.ids.index(node_id)]
        return 1.0


def resolve_topic(
    graph: GraphReader,
    topic: str,
    max_seeds: int = FTS_MAX_SEEDS,
    cutoff: float = FTS_RELATIVE_CUTOFF,
    retrieval: str = "hybrid",
    mentions: bool = False,
    passage_search: PassageSearch | None = None,
) -> ResolvedTopic:
    found = _resolve(graph, topic, max_seeds, cutoff, retrieval, passage_search)
    if not mentions or found.how in ("id", "title"):
        return found
    # The entities a free-text topic names are seeds too, after the search hits.
    named = [i for i in graph.find_mentions(topic) if i not in found.ids]
    if not named:
        return found
    relevance = found.relevance if len(found.relevance) == len(found.ids) else (1.0,) * len(found.ids)
    how = found.how if found.ids else "mention"
    return ResolvedTopic(topic, found.ids + tuple(named), how, relevance + (1.0,) * len(named))


def _resolve(
    graph: GraphReader,
    topic: str,
    max_seeds: int,
    cutoff: float,
    retrieval: str,
    passage_search: PassageSearch | None = None,
) -> ResolvedTopic:
    text = topic.strip()
    if not text:
        return ResolvedTopic(topic, (), "none")
    if graph.node_exists(text):
        return ResolvedTopic(topic, (text,), "id")
    names = graph.find_by_name(text) or graph.find_by_path(text)
    if names:
        return ResolvedTopic(topic, (names[0],), "title")
    common = only_function_words(text)
    if common:
        # As a search of them is refused (``Graph.search``): "how do I" built a context of the
        # notes that say "do". A note named by these words was found above.
        from ctx.errors import UsageError

        raise UsageError(only_function_words_message(text, common))
    ranking = passage_search(graph, text, retrieval) if passage_search is not None else None
    if ranking is not None:
        return _by_passages(topic, ranking, max_seeds, cutoff)
    if retrieval != "fts":
        from ctx.semantic.seeds import search_seeds

        found = search_seeds(graph, text, method=retrieval, max_seeds=max_seeds, cutoff=cutoff)
        if found is not None:
            ids, relevance = found
            return ResolvedTopic(topic, ids, retrieval if ids else "none", relevance)
    return _by_full_text(graph, topic, text, max_seeds, cutoff)


def _by_passages(topic: str, ranking: PassageRanking, max_seeds: int, cutoff: float) -> ResolvedTopic:
    """The best notes by their best passages: every content word counts (OR), stemmed."""
    order = ranking.node_order()
    if not order:
        return ResolvedTopic(topic, (), "none")
    top = ranking.nodes[order[0]]
    picked = [n for n in order if ranking.nodes[n] >= top * cutoff][:max_seeds]
    how = "hybrid" if "vectors" in ranking.method else "search"
    return ResolvedTopic(topic, tuple(picked), how, tuple(round(ranking.nodes[n] / top, 6) for n in picked))


def _by_full_text(graph: GraphReader, topic: str, text: str, max_seeds: int, cutoff: float) -> ResolvedTopic:
    # Function words say nothing about which note is meant ("how does X work" is about X).
    hits = graph.search(content_words(text), limit=max_seeds * 3, snippets=False)
    if not hits:
        return ResolvedTopic(topic, (), "none")
    best = hits[0].score
    chosen = [h for h in hits if h.score >= best * cutoff][:max_seeds]
    share = [round(h.score / best, 6) if best > 0 else 1.0 for h in chosen]
    return ResolvedTopic(topic, tuple(h.id for h in chosen), "search", tuple(share))


def resolve_topics(
    graph: GraphReader,
    topics: tuple[str, ...],
    max_seeds: int = FTS_MAX_SEEDS,
    cutoff: float = FTS_RELATIVE_CUTOFF,
    retrieval: str = "hybrid",
    mentions: bool = False,
    passage_search: PassageSearch | None = None,
) -> list[ResolvedTopic]:
    return [resolve_topic(graph, t, max_seeds, cutoff, retrieval, mentions, passage_search) for t in topics]


def seed_ids(resolved: list[ResolvedTopic]) -> list[str]:
    """Every seed once, in topic order."""
    out: list[str] = []
    for r in resolved:
        for node_id in r.ids:
            if node_id not in out:
                out.append(node_id)
    return out
