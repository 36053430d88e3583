"""Cycles: find loops among the context's nodes over chosen edge types, so the output can say so.

The walk itself never loops (each node is reached once); this module only *reports* cycles, e.g. a
claims graph where A supports B supports C supports A (seed 000: "detected, reported, never loop").
Strongly connected components (Tarjan, iterative) over the edges whose both ends are candidates;
each component of two or more nodes, or a node that points at itself, is reported as one closed path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader



@dataclass(frozen=True)
class Cycle:
    edge: str  # the edge type the loop follows
    path: tuple[str, ...]  # node ids; the first id is repeated at the end

    def text(self) -> str:
        return " → ".join(self.path)


def strongly_connected(graph: dict[str, list[str]], nodes: list[str]) -> list[list[str]]:
    """Tarjan's algorithm without recursion (deep chains must not hit Python's recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                found.append(sorted(component))
    return found


def _closed_path(graph: dict[str, list[str]], component: list[str]) -> tuple[str, ...]:
    """A shortest loop through the component's smallest id, as a readable path."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in graph.get(node, []):
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return (start, *reversed(path[:-1]), start) if len(path) > 1 else (start, start)
                if nxt not in previous:
                    previous[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = sorted(nxt_frontier)
    return (*component, component[0])


def find_cycles(graph: GraphReader, ids: list[str], edge_types: tuple[str, ...]) -> list[Cycle]:
    """Every loop among ``ids`` over each of ``edge_types`` (canonical names), sorted for stable output."""
    ordered = sorted(set(ids))
    cycles: list[Cycle] = []
    for edge_type in edge_types:
        edges = graph.edges_among(ordered, edge_type)
        for component in strongly_connected(edges, ordered):
            if len(component) == 1 and component[0] not in edges.get(component[0], []):
                continue
            cycles.append(Cycle(edge_type, _closed_path(edges, component)))
    return sorted(cycles, key=lambda c: (c.edge, c.path))
