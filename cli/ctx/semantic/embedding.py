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

from ctx.semantic import store
from ctx.semantic.models import ModelRef
from ctx.semantic.node_text import node_text

# Progress callback: (nodes done, nodes to do).
Progress = Callable[[int, int], None]


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
    previous = store.active_model(conn)
    pending = store.pending_node_ids(conn, model.name)
    total = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    pruned = store.prune_orphans(conn)
    if previous != model.name:
        store.set_active_model(conn, model.name)
    dim = 0
    embedded = 0
    if pending:
        # Only now pay for sentence-transformers: an up-to-date graph never imports torch.
        if encoder_factory is None:
            from ctx.semantic.encoder import DocumentEncoder

            encoder_factory = DocumentEncoder
        encoder = encoder_factory(model)
        dim = int(getattr(encoder, "dim", 0))
        if progress:
            progress(0, len(pending))
        # Several batches per call: the encoder sorts a call's texts by length, so less padding;
        # and one commit per call keeps an interrupted run's work.
        for rows in store.iter_node_texts(conn, pending, chunk=batch_size * 8):
            texts = [node_text(title, body) for _, title, body, _ in rows]
            vectors = encoder.encode(texts, batch_size=batch_size)  # type: ignore[attr-defined]
            dim = int(vectors.shape[1])
            store.write_vectors(
                conn, model.name, [(r[0], r[3], v) for r, v in zip(rows, vectors, strict=True)]
            )
            embedded += len(rows)
            if progress:
                progress(embedded, len(pending))
    if not dim:
        row = conn.execute("SELECT dim FROM embeddings WHERE model = ? LIMIT 1", (model.name,)).fetchone()
        dim = int(row[0]) if row else 0
    return EmbedReport(
        model=model.name,
        dim=dim,
        embedded=embedded,
        unchanged=total - len(pending),
        pruned=pruned,
        seconds=time.perf_counter() - started,
        switched_from=previous if previous not in (None, model.name) else None,
    )
