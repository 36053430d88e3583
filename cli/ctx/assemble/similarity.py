"""Similarity slot: how close each candidate is to the topic, from embeddings.

The semantic layer (issue 5) fills this in. Until then there are no embeddings to compare, and
scoring falls back to distance + recency with the lens's fallback weights; the note returned here
is shown in the output so a reader knows which ranking was used.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctx.assemble import BuildRequest

NO_EMBEDDINGS_NOTE = "no embeddings (run `ctx embed`)"


def compute_similarity(
    conn: sqlite3.Connection,
    request: "BuildRequest",
    seeds: list[str],
    candidate_ids: list[str],
) -> tuple[dict[str, float] | None, str]:
    """Similarity in [0, 1] of each candidate to the topic, or (None, why not).

    Contract for the implementation: never import torch unless a free-text topic really needs
    embedding; for id/exact-title topics use the seeds' stored vectors; return values for every
    candidate id (0.0 where a node has no vector) and a short note naming the model or fallback.
    """
    return None, NO_EMBEDDINGS_NOTE


def semantic_extras(
    conn: sqlite3.Connection,
    request: "BuildRequest",
    seeds: list[str],
    reached_ids: set[str],
    top_k: int,
    min_similarity: float,
) -> list[tuple[str, float]]:
    """Nodes similar to the topic that the walk did not reach: (id, similarity), best first.

    Feeds lens sections with ``select: {semantic: true}``. Empty until embeddings exist.
    """
    return []
