"""Embedding the graph: vectors for every passage and node whose text changed since it was last
embedded.

Incremental by content hash: a second run embeds nothing, editing one note embeds that note's
passages. Choosing a different model than the graph's makes every vector stale, so all are redone
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
from ctx.semantic.node_text import MAX_CHARS, node_text

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
    passages: int = 0  # passage texts embedded (each distinct text once)

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
            "passages_embedded": self.passages,
        }


def embed_graph(
    conn: sqlite3.Connection,
    model: ModelRef,
    *,
    batch_size: int = 32,
    progress: Progress | None = None,
    encoder_factory: Callable[[ModelRef], object] | None = None,
) -> EmbedReport:
    """Bring every passage's and node's vector up to date for ``model``. Commits after each chunk
    of batches, so an interrupted run keeps what it finished and the next run resumes from there.

    A node's own vector (its title and opening: what the note is about) ranks nodes by meaning;
    its passages' vectors find the parts of a long note the node's vector cannot see past its
    first ~256 word pieces. Each distinct passage text is embedded once.
    """
    started = time.perf_counter()
    previous = vectors.active_model(conn)
    pending_passages = vectors.pending_passages(conn, model.name)
    pending = vectors.pending_node_ids(conn, model.name)
    total = node_count(conn)
    pruned = vectors.prune_orphans(conn, model.name)
    if previous != model.name:
        vectors.set_active_model(conn, model.name)
    dim = 0
    embedded = 0
    work = len(pending_passages) + len(pending)
    done = 0
    encoder = None
    if work:
        # Only now pay for sentence-transformers: an up-to-date graph never imports torch.
        if encoder_factory is None:
            from ctx.semantic.encoder import DocumentEncoder

            encoder_factory = DocumentEncoder
        if progress:
            progress(LOADING, 0, 1)
        encoder = encoder_factory(model)
        dim = int(getattr(encoder, "dim", 0))
        if progress:
            progress(EMBEDDING, 0, work)

    def encode(texts: list[str]) -> list[np.ndarray]:
        """Vectors for ``texts`` (in their order), longest first within the chunk so each batch
        holds texts of about one length (little padding); progress moves after every batch."""
        nonlocal dim, done
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            encoded = encoder.encode([texts[i] for i in batch], batch_size=batch_size)  # type: ignore[attr-defined]
            dim = int(encoded.shape[1])
            for i, vector in zip(batch, encoded, strict=True):
                out[i] = vector
            done += len(batch)
            if progress:
                progress(EMBEDDING, done, work)
        return out

    # One commit per chunk of several batches keeps an interrupted run's work.
    chunk = batch_size * 8
    for start in range(0, len(pending_passages), chunk):
        part = pending_passages[start : start + chunk]
        encoded = encode([text[:MAX_CHARS] for _, text in part])
        vectors.write_passage_vectors(conn, model.name, [(h, v) for (h, _), v in zip(part, encoded, strict=True)])
    for rows in vectors.iter_node_texts(conn, pending, chunk=chunk):
        encoded = encode([node_text(title, body) for _, title, body, _ in rows])
        vectors.write_vectors(conn, model.name, [(r[0], r[3], v) for r, v in zip(rows, encoded, strict=True)])
        embedded += len(rows)
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
        passages=len(pending_passages),
    )
