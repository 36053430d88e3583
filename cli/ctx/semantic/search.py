"""Exact nearest-neighbour search over every fresh node vector.

Brute force is the right tool at this scale: one (n, d) @ (d,) product is ~5 ms for 100k x 384
float32, exact, and deterministic. What costs is getting the matrix; the store keeps it
(``GraphReader.vector_matrix``: the SQLite engine maps a .npy cache beside the graph file).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader, NearestNodes



@dataclass
class VectorIndex:
    ids: list[str]
    matrix: np.ndarray  # (len(ids), dim) float32, rows L2-normalised

    def __len__(self) -> int:
        return len(self.ids)

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """Cosine similarity of ``query`` to every row."""
        if not self.ids:
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ np.asarray(query, dtype=np.float32)

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar nodes, best first; ties broken by node id for determinism."""
        if k <= 0 or not self.ids:
            return []
        sims = self.similarities(query)
        k = min(k, len(sims))
        if k < len(sims):
            # Take a few extra past the cut so that equal scores at the boundary sort by id.
            top = np.argpartition(-sims, k - 1)[: min(len(sims), k + 8)]
        else:
            top = np.arange(len(sims))
        ranked = sorted(((-float(sims[i]), self.ids[i]) for i in top))[:k]
        return [(node_id, -neg) for neg, node_id in ranked]


def load_index(graph: GraphReader, model: str) -> VectorIndex | NearestNodes:
    """All fresh vectors of ``model``, or the engine's own approximate index when it has one for
    them (PostgreSQL's HNSW on a large graph: ``GraphReader.node_vector_search``)."""
    indexed = graph.node_vector_search(model)
    if indexed is not None:
        return indexed
    ids, matrix = graph.vector_matrix(model)
    return VectorIndex(ids, matrix)
