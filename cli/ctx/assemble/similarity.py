"""Similarity slot: how close each candidate is to the topic, from embeddings (ctx.semantic).

The topic's vector is found as cheaply as possible: an ID or exact-title topic uses its nodes' own
stored vectors (no model at all); a free-text topic is embedded by the numpy encoder (no torch) and
cached in the graph, so a repeated question costs one SQL lookup. Without usable embeddings,
scoring falls back to distance + recency with the lens's fallback weights; the note returned here
is shown in the output so a reader knows which ranking was used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctx.semantic.topic import TopicVector
    from ctx.store.protocols import GraphReader

NO_EMBEDDINGS_NOTE = "no embeddings (run `ctx embed`)"


def topic_vector(graph: "GraphReader", topics: tuple[str, ...]) -> "TopicVector":
    """The mean vector of the request's topics: stored vectors for exact topics, text otherwise."""
    from ctx.semantic.topic import combine, from_seeds, from_text

    exact: list[str] = []
    free_text: list[str] = []
    for topic in (t.strip() for t in topics):
        if not topic:
            continue
        if graph.node_exists(topic):
            exact.append(topic)
            continue
        names = graph.find_by_name(topic)
        if names:
            exact.append(names[0])
        else:
            free_text.append(topic)
    parts: list[TopicVector] = []
    if exact:
        parts.append(from_seeds(graph, exact))
    if free_text:
        parts.append(from_text(graph, free_text))
    return combine(parts)


NO_VECTORS_IN_GRAPH_NOTE = "no embeddings in this graph (run `ctx embed`)"


def topic_for(graph: "GraphReader", topics: tuple[str, ...]) -> "TopicVector | None":
    """The topic's vector, found once per build; None when the graph has no vectors at all.

    Decided with one SQL probe first, so a graph without vectors never pays for importing numpy.
    """
    if not graph.has_vectors():
        return None
    return topic_vector(graph, topics)


def text_vector(graph: "GraphReader", text: str) -> "TopicVector | None":
    """A free-text topic's own vector, or None when the graph has no vectors."""
    if not graph.has_vectors():
        return None
    from ctx.semantic.topic import from_text

    return from_text(graph, [text])


def compute_similarity(
    graph: "GraphReader",
    topic: "TopicVector | None",
    candidate_ids: list[str],
) -> tuple[dict[str, float] | None, str]:
    """Similarity in [0, 1] of each candidate to the topic, or (None, why not).

    Values for every candidate id (0.0 where a node has no up-to-date vector), and a short note
    naming the model, how the topic vector was found, and any fallback.
    """
    if topic is None:
        return None, NO_VECTORS_IN_GRAPH_NOTE
    from ctx.semantic.topic import similarities

    if topic.vector is None:
        return None, topic.note or NO_EMBEDDINGS_NOTE
    values, missing = similarities(graph, topic, candidate_ids)
    note = f"{topic.model}, {topic.source}"
    if topic.note:
        note += f"; {topic.note}"
    if missing:
        note += f"; {len(missing)} of {len(candidate_ids)} candidates have no up-to-date embedding (similarity 0; run `ctx embed`)"
    return {node_id: values.get(node_id, 0.0) for node_id in candidate_ids}, note


def semantic_extras(
    graph: "GraphReader",
    topic: "TopicVector | None",
    seeds: list[str],
    reached_ids: set[str],
    top_k: int,
    min_similarity: float,
) -> list[tuple[str, float]]:
    """Nodes similar to the topic that the walk did not reach: (id, similarity), best first.

    Feeds lens sections with ``select: {semantic: true}``. Empty without embeddings.
    """
    if top_k <= 0 or topic is None or topic.vector is None or topic.model is None:
        return []
    from ctx.semantic.search import load_index  # numpy: only once there are vectors to search

    index = load_index(graph, topic.model)
    skip = set(reached_ids) | set(seeds)
    # Over-fetch: some of the nearest are already in the walk or private.
    hits = index.nearest(topic.vector, top_k + len(skip) + 16 + graph.hidden_total())
    fresh = [(i, s) for i, s in hits if i not in skip and s >= min_similarity]
    allowed = graph.visible_ids([i for i, _ in fresh])
    return [(i, s) for i, s in fresh if i in allowed][:top_k]
