"""Edges of ordinary nodes grouped as the walk takes them (``traverse._Walker.offers``): per node,
its edge types in order, each with the nodes at the other end and what the walk reads of them.
A warm process keeps them in this form (``warm.NodeEdges``); a cold walk groups what it reads."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

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


def edge_classes_known(
    rows: Iterable[tuple[str, str, str]], column: str, details: Mapping[str, NodeInfo | None]
) -> dict[str, EdgeClasses]:
    """``edge_classes_of`` for ``GraphReader.edge_ends`` rows, with what the walk reads of the
    node at each edge's other end taken from ``details`` (the visible nodes among them): an edge
    whose other end is not there (or None) is left out, as ``walk_edges`` leaves out a hidden one. The
    same groups, in the same order, as ``edge_classes_of`` gives for ``walk_edges``' rows."""
    grouped: dict[str, dict[str, dict[str, NodeInfo]]] = {}
    near = 0 if column == "src" else 1
    get = details.get
    # The store reads these rows along an index led by ``column`` then type, so most rows go to
    # the group the row before went to: its dict is looked up only when the node or type changes
    # (any order of rows still groups right; a new topic's depth-3 walk groups ~4,000 rows).
    last_u: str | None = None
    last_type: str | None = None
    others: dict[str, NodeInfo] = {}
    for src, dst, etype in rows:
        u, v = (src, dst) if near == 0 else (dst, src)
        if u == v:
            continue
        info = get(v)
        if info is None:
            continue
        if u != last_u or etype != last_type:
            by_type = grouped.get(u)
            if by_type is None:
                by_type = grouped[u] = {}
            found = by_type.get(etype)
            if found is None:
                found = by_type[sys.intern(etype)] = {}
            others, last_u, last_type = found, u, etype
        others[v] = info
    return {u: sorted(by_type.items()) for u, by_type in grouped.items()}
