"""Traverse: a typed, directional, weighted breadth-first walk from the seeds.

Edges are stored once in their canonical direction; the lens says which types to follow, in which
direction (out = as stored, in = walked backwards, e.g. ``link`` in = ``backlink``), with what
weight and up to which hop. A hop over an edge of weight w costs 1/w, so a node's *cost* is its
weighted distance and its *hops* the number of edges on its shortest path. The walk is cycle-safe
(each node is expanded at most once per improvement) and batched: one query per level and direction.

A context holds a few dozen nodes, so the walk need not reach everything within ``--depth``. With a
``WalkLimit`` it stops before the next hop once the ``pool`` best candidates it holds are sure to
outrank anything further away (``bound.py``: an upper bound on what an unreached node can score),
and in any case once it holds ``max_reached`` nodes; a hop expands at most ``max_expand`` frontier
nodes, the nearest first. ``Walk.stopped`` says which of these ended it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import heapq
from dataclasses import dataclass, field

from ctx.assemble import warm
from ctx.assemble.bound import MARGIN, NodeInfo, ScoreBound
from ctx.assemble.score import NeighbourRanker
from ctx.lenses import Lens
from ctx.edges import reversed_name, walked_name

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


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
    info: dict[str, NodeInfo] = field(default_factory=dict)  # every walked node, read with its edge
    # Why the walk ended before ``depth``: "bound" (nothing further could enter the pool) or "cap"
    # (``max_reached``); None when it walked every hop it could. ``hops`` is the last hop walked.
    stopped: str | None = None
    hops: int = 0
    unexpanded: int = 0  # frontier nodes a hop left unexpanded (``max_expand``)
    unexpanded_cost: float = float("inf")  # the cheapest of them: what lies behind costs more


@dataclass(frozen=True)
class WalkLimit:
    """How much walk a context of ``pool`` candidates (besides the seeds) needs; see the module doc."""

    pool: int
    bound: ScoreBound | None
    max_reached: int
    max_expand: int


# A node with more edges than this many fan-outs is a hub: its neighbours are ranked and cut in
# SQL (``GraphReader.best_neighbours``) instead of every edge row coming to Python.
HUB_FAN_OUTS = 4
# Extra rows a hub's SQL ranking returns beyond what the cap keeps: Python re-ranks them with the
# exact pre-score, so a float that rounds differently in SQL cannot change which are kept.
HUB_SLACK = 16

Offer = tuple[float, str, float, str, str]  # (cost step, edge name, weight, type, direction)


def _min_step(lens: Lens, hop: int) -> float | None:
    """The cheapest edge any rule lets the walk take at ``hop`` or later (None: no edge at all)."""
    steps = [1.0 / r.weight for r in lens.rules if hop <= r.max_depth]
    return min(steps) if steps else None


def _stop_reason(limit: WalkLimit, result: Walk, frontier: list[str], hop: int, lens: Lens) -> str | None:
    """Why the walk should not take ``hop``, or None to go on."""
    reached, info = result.reached, result.info
    bound = limit.bound
    step = _min_step(lens, hop)
    if step is None:
        return None
    if bound is not None:
        walked = [r for r in reached.values() if not r.seed and r.id in info]
        if len(walked) >= limit.pool:
            next_cost = min(reached[u].cost for u in frontier) + step
            # Frontier nodes an earlier hop left unexpanded still lead somewhere: no cheaper than this.
            earliest = _min_step(lens, 1)
            if result.unexpanded and earliest is not None:
                next_cost = min(next_cost, result.unexpanded_cost + earliest)
            worst_kept = heapq.nlargest(limit.pool, (bound.at_least(r.id, info[r.id], r.cost) for r in walked))[-1]

            def final(node_id: str) -> bool:
                # A node is final once no route through the frontier can be cheaper.
                r = reached.get(node_id)
                return r is not None and r.cost <= next_cost + 1e-12

            best_possible = bound.at_most(next_cost, bound.best_relevance_outside(final))
            if worst_kept > best_possible + MARGIN:
                return "bound"
    if len(reached) >= limit.max_reached:
        return "cap"
    return None


def _nearest(limit: WalkLimit, result: Walk, frontier: list[str]) -> list[str]:
    """The ``max_expand`` frontier nodes to expand: the nearest, then the best scored, then by id."""
    reached, info, bound = result.reached, result.info, limit.bound

    def key(node_id: str) -> tuple[float, float, str]:
        r = reached[node_id]
        least = bound.at_least(node_id, info[node_id], r.cost) if bound is not None and node_id in info else 0.0
        return (r.cost, -least, node_id)

    return sorted(sorted(frontier, key=key)[: limit.max_expand])

def walk(
    graph: GraphReader,
    lens: Lens,
    seeds: list[str],
    depth: int,
    rank_neighbours: NeighbourRanker | None = None,
    limit: WalkLimit | None = None,
) -> Walk:
    """Walk up to ``depth`` hops from ``seeds`` as the lens allows (and ``limit`` needs).

    ``rank_neighbours`` chooses which neighbours a node over the fan-out keeps (default: the
    heaviest edges, then by id)."""
    reached: dict[str, Reached] = {
        s: Reached(s, 0, 0.0, (), True) for s in seeds
    }
    result = Walk(reached, depth)
    ranker = rank_neighbours if rank_neighbours is not None else NeighbourRanker(None, None)
    wants_out = any(r.direction == "out" for r in lens.rules)
    wants_in = any(r.direction == "in" for r in lens.rules)
    info = result.info
    # Reached nodes (and cheaper costs) the store's table of them has not seen yet: hubs need it.
    pending: dict[str, float] = {s: 0.0 for s in seeds}
    remembered = False
    # A warm process ranks hubs' neighbours from lists it keeps (``warm.py``), not in the store.
    kept_hubs = warm.hub_neighbours(graph)
    frontier = sorted(seeds)
    for hop in range(1, depth + 1):
        if not frontier:
            break
        if limit is not None:
            why = _stop_reason(limit, result, frontier, hop, lens)
            if why is not None:
                result.stopped = why
                break
            if len(frontier) > limit.max_expand:
                kept = _nearest(limit, result, frontier)
                left = set(frontier) - set(kept)
                result.unexpanded += len(left)
                result.unexpanded_cost = min(result.unexpanded_cost, *(reached[u].cost for u in left))
                frontier = kept
        result.hops = hop
        # neighbour candidates per expanded node: other id -> offer
        offers: dict[str, dict[str, Offer]] = {u: {} for u in frontier}
        degree: dict[str, int] = {}
        for wanted, column in ((wants_out, "src"), (wants_in, "dst")):
            if wanted:
                for node_id, n in graph.degrees(frontier, column).items():
                    degree[node_id] = degree.get(node_id, 0) + n
        hubs = {u for u in frontier if degree.get(u, 0) > HUB_FAN_OUTS * lens.fan_out}
        ordinary = [u for u in frontier if u not in hubs]
        frontier_set = set(ordinary)
        scans = []
        if wants_out:
            scans.append(("out", graph.walk_edges(ordinary, "src")))
        if wants_in:
            scans.append(("in", graph.walk_edges(ordinary, "dst")))
        # Which rule (if any) takes an edge depends only on its type, direction and the hop; a
        # hub's frontier brings 100,000s of edge rows of a handful of types.
        rule_of: dict[tuple[str, str], tuple[float, str, float] | None] = {}
        for direction, rows in scans:
            for src, dst, etype, ntype, tags, updated, title in rows:
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
                if v not in info:
                    info[v] = NodeInfo(ntype, tags, updated, title)
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
            base = reached[u].cost
            if u in hubs:
                if kept_hubs is None:
                    graph.remember_reached(pending.items(), reset=not remembered)
                    remembered, pending = True, {}
                fresh = _hub_fresh(graph, lens, ranker, hop, u, result, degree[u], kept_hubs)
            else:
                # Neighbours the walk already holds at least as cheaply do not count toward the fan-out.
                fresh = {
                    v: o for v, o in offers[u].items()
                    if v not in reached or base + o[0] < reached[v].cost - 1e-12
                }
                if len(fresh) > lens.fan_out:
                    order = ranker([(v, o[2]) for v, o in fresh.items()], info)
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
                    pending[v] = cost
                    next_frontier.add(v)
                elif not current.seed and cost < current.cost - 1e-12:
                    pending[v] = cost
                    # A cheaper route found later (more hops over heavier edges): the node's
                    # distance is its cheapest route, so hops and path follow that route.
                    current.cost = cost
                    current.path = path
                    current.hops = hop
                    next_frontier.add(v)
        frontier = sorted(next_frontier)
    result.capped.sort(key=lambda c: c.node_id)
    return result


def _offer(prior: Offer | None, etype: str, direction: str, weight: float) -> Offer:
    """The better of two edges between the same nodes: the cheapest, then the alphabetically first name."""
    step, name = 1.0 / weight, walked_name(etype, direction)
    if prior is None or (step, name) < (prior[0], prior[1]):
        return (step, name, weight, etype, direction)
    return prior


def _hub_fresh(
    graph: GraphReader,
    lens: Lens,
    ranker: NeighbourRanker,
    hop: int,
    u: str,
    result: Walk,
    degree: int,
    kept_hubs: warm.HubNeighbours | None = None,
) -> dict[str, Offer]:
    """A hub's fresh neighbours, cut to the fan-out, as the ordinary path would choose them, with
    only the best of them by the pre-score read (ranked in SQL; the walk's reached nodes are in
    ``remember_reached``'s table, so those already held at least as cheaply do not count)."""
    reached, info = result.reached, result.info
    weights: dict[tuple[str, str], float] = {}
    path = reached[u].path
    for etype, direction in graph.edge_classes(u):
        rule = lens.rules_for(etype, direction, hop)
        if rule is None:
            continue
        if lens.paths == "pure" and path and walked_name(etype, direction) != path[0].edge:
            continue
        weights[(etype, direction)] = rule.weight
    if not weights:
        return {}
    if kept_hubs is not None:
        total, chosen = kept_hubs.best(u, reached[u].cost, weights, ranker, lens.fan_out + HUB_SLACK, reached)
    else:
        total, chosen = graph.best_neighbours(u, reached[u].cost, weights, ranker, lens.fan_out + HUB_SLACK)
    for node_id, ntype, tags, updated, title in chosen:
        if node_id not in info:
            info[node_id] = NodeInfo(ntype, tags, updated, title)
    offers: dict[str, Offer] = {}
    for other, etype, direction in graph.edges_around(u, weights, [row[0] for row in chosen], degree):
        offers[other] = _offer(offers.get(other), etype, direction, weights[(etype, direction)])
    if total > lens.fan_out:
        keep = ranker([(v, o[2]) for v, o in offers.items()], info)[: lens.fan_out]
        result.capped.append(FanOutCap(u, lens.fan_out, total - lens.fan_out))
        return {v: offers[v] for v in keep}
    return offers
