"""Ranking passages by meaning on a graph whose first stage is done but whose model has not yet
embedded every passage (``ctx embed``'s static stage: ``ctx.semantic.first_stage``).

A question's candidates are the static model's nearest ``STATIC_K`` passages and full-text
search's top ``LEXICAL_B``; only they are ranked, by the model's own vectors. Candidates without
one are embedded now and stored by content hash (best effort, like the query cache), so a later
question sharing them pays nothing and ``ctx embed`` skips them. Which passages are ranked depends
only on the graph's passages and the question, never on which earlier questions filled the store;
asked again, a question gets the same bytes (its candidates' vectors are then read, not computed).
A vector computed in another question's batch may differ in its last bits (bfloat16 sums), which
can only reorder exact near-ties.

Measured (``bench/bench_two_stage.py``, docs/embedding.md "Two stages"): static 200 + full text 50
gave fact recall 0.866 against 0.856 for the model over every passage, embedding a median of 219
texts for a question none of whose candidates had vectors; static 100 + 50 gave 0.847.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ctx.semantic import first_stage as stage
from ctx.semantic.node_text import MAX_CHARS

if TYPE_CHECKING:
    from ctx.semantic.passage_index import PassageIndex
    from ctx.semantic.topic import TopicVector
    from ctx.store.protocols import GraphReader

STATIC_K = 200
LEXICAL_B = 50
# Up to this many texts to embed, the numpy encoder (no torch import: ~0.3 s to load, ~3 texts per
# CPU-second with one BLAS thread on the Obsidian help vault's passages); more, and importing torch
# (~2.5 s of CPU) pays for its speed (~40-60 texts per CPU-second in bfloat16). Measured on this
# project's 2-core machine.
NUMPY_UP_TO = 8

# What the last cold question cost: bench/ and ``ctx build --explain`` read it.
LAST: dict[str, Any] = {}


def first_stage_of(graph: "GraphReader") -> str | None:
    """The first stage's model name when builds must rank candidates, else None."""
    return graph.setting(stage.SETTING) or None


def dense(
    graph: "GraphReader", topic: "TopicVector", text: str, lexical: list[int], pool: int, statics: "PassageIndex",
) -> dict[int, str]:
    """Passage id -> node id of the ``pool`` candidates nearest the topic by the model's own
    vectors, best first (ties by id); ``lexical`` is full-text search's ranking of passages,
    ``statics`` the first stage's vectors of every passage."""
    assert topic.vector is not None and topic.model is not None
    model = topic.model
    candidates: dict[int, None] = {}
    table = _static_encoder(model) if len(statics) else None
    if table is not None:
        query = table.encode([text])[0]
        hits = statics.nearest(query, STATIC_K + graph.hidden_passages_total())
        nodes = statics.nodes_of([pid for pid, _ in hits])
        visible = graph.visible_ids(sorted(set(nodes.values())))
        candidates.update(dict.fromkeys([pid for pid, _ in hits if nodes[pid] in visible][:STATIC_K]))
    candidates.update(dict.fromkeys(lexical[:LEXICAL_B]))
    rows = graph.candidate_passages(model, sorted(candidates))
    vectors = _fill(graph, model, rows)
    scored = sorted(
        ((-float(np.dot(vectors[h], topic.vector)), pid, node_id) for pid, node_id, h, _, _ in rows if h in vectors),
    )
    return {pid: node_id for _, pid, node_id in scored[:pool]}


def _fill(graph: "GraphReader", model: str, rows: list[tuple[int, str, str, str, np.ndarray | None]]) -> dict[str, np.ndarray]:
    """Each candidate text's vector of ``model``: stored, or embedded now and stored."""
    have = {h: v for _, _, h, _, v in rows if v is not None}
    missing = {h: t[:MAX_CHARS] for _, _, h, t, v in rows if v is None and h not in have}
    LAST.clear()
    LAST.update(candidates=len({r[2] for r in rows}), embedded=len(missing), seconds=0.0, cpu=0.0, encoder=None)
    if not missing:
        return have
    started, cpu = time.perf_counter(), time.process_time()
    hashes = sorted(missing)
    encoded, how = _encode(model, [missing[h] for h in hashes])
    fresh = dict(zip(hashes, encoded, strict=True))
    graph.remember_passage_vectors(model, sorted(fresh.items()))
    LAST.update(seconds=time.perf_counter() - started, cpu=time.process_time() - cpu, encoder=how)
    return have | fresh


def _encode(model_name: str, texts: list[str]) -> tuple[np.ndarray, str]:
    """The texts' vectors of the model, by the cheaper encoder for this many (``NUMPY_UP_TO``):
    the numpy encoder, else its forward pass in torch (``ctx.semantic.torch_bert``: torch alone
    imported), else sentence-transformers (a model numpy cannot run, or read through a window)."""
    from ctx.semantic import numpy_bert
    from ctx.semantic.models import resolve_model

    model = resolve_model(model_name, stored=True)
    if model.path is not None and not model.window:
        try:
            numpy_encoder = numpy_bert.load(str(model.path))
        except (numpy_bert.UnsupportedModel, OSError, KeyError, ValueError):
            pass
        else:
            if len(texts) > NUMPY_UP_TO:
                try:
                    from ctx.semantic import torch_bert

                    encoder = torch_bert.load(str(model.path))
                except ImportError:  # no torch: numpy, however many
                    pass
                else:
                    return encoder.encode(texts), f"torch {encoder.precision}"
            with _one_blas_thread():
                out = numpy_encoder.encode(texts)
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12), "numpy"
    from ctx.semantic.encoder import DocumentEncoder

    document_encoder = DocumentEncoder(model)
    return np.asarray(document_encoder.encode(texts), dtype=np.float32), f"sentence-transformers {document_encoder.precision}"


class _one_blas_thread:
    """One math-library thread while the numpy encoder runs: on a shared 2-core machine extra BLAS
    threads only wait for each other (docs/embedding.md). A no-op without threadpoolctl."""

    def __enter__(self) -> None:
        self._limit: Any = None
        if os.environ.get("CTX_EMBED_THREADS"):
            return
        try:
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
        except ImportError:
            return
        self._limit = threadpool_limits(1)

    def __exit__(self, *exc: object) -> None:
        if self._limit is not None:
            self._limit.restore_original_limits()


def _static_encoder(model_name: str) -> Any:
    """The first stage's static model, distilled now if this machine lacks it (a graph embedded
    elsewhere); None when it cannot be (no torch): full text alone proposes candidates then."""
    from ctx import long_waits
    from ctx.semantic import static
    from ctx.semantic.embedding import DISTILLING
    from ctx.semantic.encoder import EmbedExtraMissing
    from ctx.semantic.models import resolve_model

    try:
        model = resolve_model(model_name, stored=True)
        # Seconds, once per machine: whoever runs the build may show it (ctx.long_waits).
        progress = None if stage.ready(model) is not None else long_waits.reporter(DISTILLING)
        if progress is not None:
            progress(0, 1)  # named while torch loads, before the first count
        return static.load(str(stage.ensure(model, progress)))
    except (EmbedExtraMissing, ImportError, OSError, ValueError):
        return None
