"""Traverse: a typed, directional, weighted breadth-first walk from the seeds.

Edges are stored once in their canonical direction; the lens says which types to follow, in which
direction (out = as stored, in = walked backwards, e.g. ``link`` in = ``backlink``), with what
weight and up to which hop. A hop over an edge of weight w costs 1/w, so a node's *cost* is its
weighted distance and its *hops* the number of edges on its shortest path. The walk is cycle-safe
(each node is expanded at most once per improvement) and batched: one query per level and direction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctx.lenses import Lens
from ctx.store.edge_names import reversed_name, walked_name
from ctx.store.view import GraphView


@dataclass(frozen=True)
class Hop:
    canonical: str  # the stored edge type
    direction: str  # "out": walked as stored; "in": walked backwards
    src: str  # where the walk came from
    dst: str

    @property
    def edge(self) -> str:
        """The name as walked: link, backlink, child, parent, field:owner, ..."""
        return walked_name(self.canonical, self.direction)

    @property
    def reversed_edge(self) -> str:
        """The name of this hop seen from ``dst``: walking ``supported_by`` to X means X ``supports`` us."""
        return reversed_name(self.canonical, self.direction)


@dataclass
class Reached:
    id: str
    hops: int
    cost: float
    path: tuple[Hop, ...]
    seed: bool


@dataclass
class FanOutCap:
    node_id: str
    kept: int
    omitted: int


@dataclass
class Walk:
    reached: dict[str, Reached]
    depth: int
    capped: list[FanOutCap] = field(default_factory=list)


# (node id, rule weight) -> sort key; lower sorts first. Used only when a node exceeds the fan-out.
NeighbourRank = Callable[[list[tuple[str, float]]], list[str]]

def walk(
    graph: GraphView,
    lens: Lens,
    seeds: list[str],
    depth: int,
    rank_neighbours: NeighbourRank | None = None,
) -> Walk:
    """Walk up to ``depth`` hops from ``seeds`` as the lens allows."""
    reached: dict[str, Reached] = {
        s: Reached(s, 0, 0.0, (), True) for s in seeds
    }
    result = Walk(reached, depth)
    wants_out = any(r.direction == "out" for r in lens.rules)
    wants_in = any(r.direction == "in" for r in lens.rules)
    frontier = sorted(seeds)
    for hop in range(1, depth + 1):
        if not frontier:
            break
        # neighbour candidates per expanded node: other id -> (cost step, edge name, weight, type, direction)
        offers: dict[str, dict[str, tuple[float, str, float, str, str]]] = {u: {} for u in frontier}
        frontier_set = set(frontier)
        scans = []
        if wants_out:
            scans.append(("out", graph.edges_from(frontier, "src")))
        if wants_in:
            scans.append(("in", graph.edges_from(frontier, "dst")))
        # Which rule (if any) takes an edge depends only on its type, direction and the hop; a
        # hub's frontier brings 100,000s of edge rows of a handful of types.
        rule_of: dict[tuple[str, str], tuple[float, str, float] | None] = {}
        for direction, rows in scans:
            for src, dst, etype in rows:
                u, v = (src, dst) if direction == "out" else (dst, src)
                if u not in frontier_set or u == v:
                    continue
                if (etype, direction) in rule_of:
                    taken = rule_of[(etype, direction)]
                else:
                    rule = lens.rules_for(etype, direction, hop)
                    taken = None if rule is None else (1.0 / rule.weight, walked_name(etype, direction), rule.weight)
                    rule_of[(etype, direction)] = taken
                if taken is None:
                    continue
                step, name, weight = taken
                # Lens ``paths: pure``: a path never changes edge (a claims chain upward never
                # turns down into a sibling's conclusions).
                if lens.paths == "pure" and reached[u].path and name != reached[u].path[0].edge:
                    continue
                prior = offers[u].get(v)
                # The cheapest edge between two nodes wins; ties go to the alphabetically first name.
                if prior is None or (step, name) < (prior[0], prior[1]):
                    offers[u][v] = (step, name, weight, etype, direction)
        next_frontier: set[str] = set()
        for u in frontier:
            options = offers[u]
            # Neighbours the walk already holds at least as cheaply do not count toward the fan-out.
            base = reached[u].cost
            fresh = {
                v: o for v, o in options.items()
                if v not in reached or base + o[0] < reached[v].cost - 1e-12
            }
            if len(fresh) > lens.fan_out:
                if rank_neighbours is not None:
                    order = rank_neighbours([(v, o[2]) for v, o in fresh.items()])
                else:
                    order = sorted(fresh, key=lambda v: (-fresh[v][2], v))
                keep = set(order[: lens.fan_out])
                result.capped.append(FanOutCap(u, lens.fan_out, len(fresh) - lens.fan_out))
                fresh = {v: o for v, o in fresh.items() if v in keep}
            for v in sorted(fresh):
                step, _name, _weight, etype, direction = fresh[v]
                cost = base + step
                path = reached[u].path + (Hop(etype, direction, u, v),)
                current = reached.get(v)
                if current is None:
                    reached[v] = Reached(v, hop, cost, path, False)
                    next_frontier.add(v)
                elif not current.seed and cost < current.cost - 1e-12:
                    # A cheaper route found later (more hops over heavier edges): the node's
                    # distance is its cheapest route, so hops and path follow that route.
                    current.cost = cost
                    current.path = path
                    current.hops = hop
                    next_frontier.add(v)
        frontier = sorted(next_frontier)
    result.capped.sort(key=lambda c: c.node_id)
    return result
