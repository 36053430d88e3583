"""Embedding the graph: vectors for every node whose content changed since it was last embedded.

Incremental by content hash: a second run embeds nothing, editing one note embeds that note's
nodes. Choosing a different model than the graph's makes every vector stale, so all are redone
(a graph holds one model's vectors at a time; mixing models would make similarities meaningless).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ctx.store import vectors
from ctx.store.reads import node_count
from ctx.semantic.models import ModelRef
from ctx.semantic.node_text import node_text

# Progress callback: (phase, done, total). "loading model" (seconds, one step), then "embedding"
# (nodes done, nodes to do), moved after every batch.
Progress = Callable[[str, int, int], None]
LOADING, EMBEDDING = "loading model", "embedding"


@dataclass
class EmbedReport:
    model: str
    dim: int
    embedded: int
    unchanged: int
    pruned: int
    seconds: float
    switched_from: str | None = None

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "dim": self.dim,
            "embedded": self.embedded,
            "unchanged": self.unchanged,
            "pruned": self.pruned,
            "seconds": round(self.seconds, 3),
            "notes_per_second": round(self.rate, 1),
            "switched_from": self.switched_from,
        }


def embed_graph(
    conn: sqlite3.Connection,
    model: ModelRef,
    *,
    batch_size: int = 32,
    progress: Progress | None = None,
    encoder_factory: Callable[[ModelRef], object] | None = None,
) -> EmbedReport:
    """Bring every node's vector up to date for ``model``. Commits after each batch, so an
    interrupted run keeps what it finished and the next run resumes from there."""
    started = time.perf_counter()
    previous = vectors.active_model(conn)
    pending = vectors.pending_node_ids(conn, model.name)
    total = node_count(conn)
    pruned = vectors.prune_orphans(conn)
    if previous != model.name:
        vectors.set_active_model(conn, model.name)
    dim = 0
    embedded = 0
    if pending:
        # Only now pay for sentence-transformers: an up-to-date graph never imports torch.
        if encoder_factory is None:
            from ctx.semantic.encoder import DocumentEncoder

            encoder_factory = DocumentEncoder
        if progress:
            progress(LOADING, 0, 1)
        encoder = encoder_factory(model)
        dim = int(getattr(encoder, "dim", 0))
        if progress:
            progress(EMBEDDING, 0, len(pending))
        # One commit per chunk of several batches keeps an interrupted run's work; within a chunk
        # texts go longest first, so each batch holds texts of about one length (little padding,
        # as the encoder's own sort would give) and the progress moves after every batch.
        for rows in vectors.iter_node_texts(conn, pending, chunk=batch_size * 8):
            texts = [node_text(title, body) for _, title, body, _ in rows]
            order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
            row_vectors: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                encoded = encoder.encode([texts[i] for i in batch], batch_size=batch_size)  # type: ignore[attr-defined]
                dim = int(encoded.shape[1])
                for i, vector in zip(batch, encoded, strict=True):
                    row_vectors[i] = vector
                embedded += len(batch)
                if progress:
                    progress(EMBEDDING, embedded, len(pending))
            vectors.write_vectors(
                conn, model.name, [(r[0], r[3], v) for r, v in zip(rows, row_vectors, strict=True)]
            )
    if not dim:
        dim = vectors.model_dim(conn, model.name)
    return EmbedReport(
        model=model.name,
        dim=dim,
        embedded=embedded,
        unchanged=total - len(pending),
        pruned=pruned,
        seconds=time.perf_counter() - started,
        switched_from=previous if previous not in (None, model.name) else None,
    )
