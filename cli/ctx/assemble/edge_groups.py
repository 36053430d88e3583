"""Edges of ordinary nodes grouped as the walk takes them (``traverse._Walker.offers``): per node,
its edge types in order, each with the nodes at the other end and what the walk reads of them.
A warm process keeps them in this form (``warm.NodeEdges``); a cold walk groups what it reads."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from ctx.assemble.bound import NodeInfo

EdgeClasses = list[tuple[str, dict[str, NodeInfo]]]


def edge_classes_of(
    rows: Iterable[tuple[str, str, str, str, str | None, float | None, str]], column: str
) -> dict[str, EdgeClasses]:
    """``GraphReader.walk_edges`` rows grouped as the walk takes them: per node at ``column``, its
    edge types in order, each with the nodes at the other end and what the walk reads of them.
    An edge from a node to itself is never walked."""
    grouped: dict[str, dict[str, dict[str, NodeInfo]]] = {}
    near = 0 if column == "src" else 1
    for src, dst, etype, ntype, tags, updated, title in rows:
        u, v = (src, dst) if near == 0 else (dst, src)
        if u == v:
            continue
        by_type = grouped.get(u)
        if by_type is None:
            by_type = grouped[u] = {}
        others = by_type.get(etype)
        if others is None:
            others = by_type[sys.intern(etype)] = {}
        # Kept by a warm process: the few node types shared, not one string per row.
        others[v] = NodeInfo(sys.intern(ntype), tags, updated, title)
    return {u: sorted(by_type.items()) for u, by_type in grouped.items()}
