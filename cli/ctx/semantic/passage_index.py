"""Exact nearest-passage search over every passage that has a vector of the active model.

Passage vectors are keyed by the hash of what was embedded (``store.passages.embed_text``), so a
passage is searchable by meaning exactly when a vector for its current text exists; passages
without one (added since the last ``ctx embed``) are found by full-text search alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader



@dataclass
class PassageIndex:
    ids: list[int]  # passage ids, ascending
    node_ids: list[str]
    matrix: np.ndarray  # (len(ids), dim) float32, rows L2-normalised

    def __len__(self) -> int:
        return len(self.ids)

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The ``k`` most similar passages, best first; ties broken by passage id."""
        if k <= 0 or not self.ids:
            return []
        sims = self.matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[: min(len(sims), k + 8)] if k < len(sims) else np.arange(len(sims))
        ranked = sorted((-float(sims[i]), self.ids[i], int(i)) for i in top)[:k]
        return [(pid, -neg) for neg, pid, _ in ranked]

    def nodes_of(self, passage_ids: list[int]) -> dict[int, str]:
        where = {pid: i for i, pid in enumerate(self.ids)} if len(passage_ids) > 64 else None
        out = {}
        for pid in passage_ids:
            i = where[pid] if where is not None else self.ids.index(pid)
            out[pid] = self.node_ids[i]
        return out


def load_passage_index(graph: GraphReader, model: str) -> PassageIndex:
    ids, node_ids, matrix = graph.passage_vector_matrix(model)
    return PassageIndex(ids, node_ids, matrix)
