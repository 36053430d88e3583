"""The topic's vector, found as cheaply as possible, and its similarity to nodes.

In order of cost: the seed nodes' own stored vectors (an ID or exact-title topic: no model at all);
a free-text topic's vector cached in the graph from an earlier build; embedding the text with the
numpy encoder (tenths of a second cold, no torch); sentence-transformers only for models numpy cannot run.
Every answer says how it was obtained, and when there is none, why: the context reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader



@dataclass(frozen=True)
class TopicVector:
    model: str | None
    vector: np.ndarray | None  # L2-normalised; None when no similarity can be computed
    method: str  # seed-vectors | query-cache | numpy | static | sentence-transformers | none (diagnostics)
    note: str | None = None  # set when something fell back: goes into the context's metadata

    @property
    def source(self) -> str:
        """Where the vector came from, for the output. Stable across runs: a cache hit and a fresh
        embedding give the same vector, so they must not make the context differ."""
        kinds = []
        if "seed-vectors" in self.method:
            kinds.append("topic nodes' own vectors")
        if any(m in self.method for m in ("query-cache", "numpy", "static", "sentence-transformers")):
            kinds.append("topic text embedded")
        return " + ".join(kinds) or "none"


def _normalised_mean(vectors: list[np.ndarray]) -> np.ndarray:
    mean = np.mean(np.stack(vectors), axis=0)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


def graph_model(graph: GraphReader) -> tuple[str | None, str | None]:
    """The active model if the graph has fresh vectors, else None and the reason why not."""
    model = graph.active_model()
    if model is None:
        return None, "no embeddings in this graph (run `ctx embed`)"
    from ctx.semantic.models import MODEL_REFUSED, model_folder_refusal

    refused = model_folder_refusal(graph, model)
    if refused is not None:
        return None, MODEL_REFUSED + refused
    state = graph.embedding_status(model)
    if state.fresh == 0 and not graph.setting("embedding_first_stage"):
        # (A graph at ``ctx embed``'s first stage has no node vectors yet, only passages' static
        # ones: its questions are ranked by candidates, ``ctx.semantic.two_stage``.)
        return None, "embeddings are all stale (run `ctx embed`)"
    return model, None


def from_seeds(graph: GraphReader, seed_ids: list[str]) -> TopicVector:
    """The mean of the seeds' stored vectors: what an ID or exact-title topic is about."""
    model, reason = graph_model(graph)
    if model is None:
        return TopicVector(None, None, "none", reason)
    found = graph.node_vectors(model, seed_ids)
    if not found:
        return TopicVector(
            model, None, "none", "the topic's nodes have no up-to-date embedding (run `ctx embed`)"
        )
    note = None
    if len(found) < len(seed_ids):
        note = f"{len(seed_ids) - len(found)} of {len(seed_ids)} topic nodes have no up-to-date embedding"
    return TopicVector(model, _normalised_mean([found[i] for i in seed_ids if i in found]), "seed-vectors", note)


def from_text(graph: GraphReader, texts: list[str]) -> TopicVector:
    """The mean vector of free-text topics: from the query cache, else embedded now (and cached)."""
    model, reason = graph_model(graph)
    if model is None:
        return TopicVector(None, None, "none", reason)
    found: list[np.ndarray] = []
    methods: set[str] = set()
    encode = None
    for text in texts:
        cached = graph.query_vector(model, text)
        if cached is not None:
            found.append(cached)
            methods.add("query-cache")
            continue
        if encode is None:
            from ctx.semantic.encoder import query_encoder
            from ctx.semantic.models import resolve_model

            try:
                encode, method = query_encoder(resolve_model(model, stored=True))
            except Exception as exc:  # noqa: BLE001 - any failure here means "no similarity"
                return TopicVector(
                    model, None, "none",
                    f"could not embed the topic with {model} ({exc}); similarity left out",
                )
        vector = encode(text)
        graph.remember_query_vector(model, text, vector)
        found.append(vector)
        methods.add(method)
    return TopicVector(model, _normalised_mean(found), "+".join(sorted(methods)))


def combine(parts: list[TopicVector]) -> TopicVector:
    """One vector for several topics (``ctx build "Apollo" "who owns the budget?"``)."""
    usable = [p for p in parts if p.vector is not None]
    notes = "; ".join(p.note for p in parts if p.note) or None
    if not usable:
        return TopicVector(None, None, "none", notes or "no topic to embed")
    if len(usable) == 1 and len(parts) == 1:
        return usable[0]
    return TopicVector(
        usable[0].model,
        _normalised_mean([p.vector for p in usable]),  # type: ignore[misc]
        "+".join(p.method for p in usable),
        notes,
    )


def similarities(
    graph: GraphReader, topic: TopicVector, node_ids: list[str]
) -> tuple[dict[str, float], list[str]]:
    """Cosine similarity (clipped at 0) of each node to the topic, and the nodes without a vector."""
    if topic.vector is None or topic.model is None:
        return {}, list(node_ids)
    found = graph.node_vectors(topic.model, node_ids)
    values = {
        node_id: max(0.0, float(np.dot(vector, topic.vector))) for node_id, vector in found.items()
    }
    missing = [node_id for node_id in node_ids if node_id not in found]
    return values, missing
