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

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from dataclasses import dataclass, field

from ctx.assemble import warm
from ctx.assemble.bound import MARGIN, NodeInfo, ScoreBound
from ctx.assemble.edge_groups import EdgeClasses, edge_classes_of
from ctx.assemble.score import NeighbourRanker
from ctx.lenses import Lens
from ctx.edges import reversed_name, walked_name

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


_tuple_new = tuple.__new__


class Hop(NamedTuple):
    """One edge of a walked path. A named tuple, not a frozen dataclass: a walk makes one per node
    it reaches (thousands at depth 3 on a big graph), and a frozen dataclass's ``__init__`` costs
    several times as much; equality, hash and repr are the same."""

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


class Reached(NamedTuple):
    """A node the walk reached: its hops and cost by its cheapest route, and that route. A named
    tuple, never changed once made (a cheaper route makes a new one; a warm process's kept walks
    share them): a walk makes thousands (~2,700 at depth 3 of 100k nodes), and one made as the
    tuple it is (``_tuple_new``) costs ~0.1 us against ~0.45 for a slotted dataclass's ``__init__``."""

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
    # When the bound stopped it, or the cap right after the bound's test: the walked nodes the
    # stop test bounded and the least each can score, as it held them (the pool's cut takes them
    # instead of bounding them all again).
    bounded: tuple[list[str], list[float]] | None = None


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
    bounded: tuple[list[str], list[float]] | None = None
    if bound is not None:
        walked = [v for v, r in reached.items() if not r.seed and v in info]
        if len(walked) >= limit.pool:
            next_cost = min(reached[u].cost for u in frontier) + step
            # Frontier nodes an earlier hop left unexpanded still lead somewhere: no cheaper than this.
            earliest = _min_step(lens, 1)
            if result.unexpanded and earliest is not None:
                next_cost = min(next_cost, result.unexpanded_cost + earliest)
            # The pool-th largest least: one sort in C (``heapq.nlargest`` loops in Python over
            # the thousands a walk holds by depth 3).
            leasts = bound.many(walked, info, reached, most=False)[0]
            worst_kept = sorted(leasts, reverse=True)[limit.pool - 1]

            def final(node_id: str) -> bool:
                # A node is final once no route through the frontier can be cheaper.
                r = reached.get(node_id)
                return r is not None and r.cost <= next_cost + 1e-12

            best_possible = bound.at_most(next_cost, bound.best_relevance_outside(final))
            bounded = (walked, leasts)
            if worst_kept > best_possible + MARGIN:
                result.bounded = bounded  # what it holds now is what the pool is cut from
                return "bound"
    if len(reached) >= limit.max_reached:
        # Stopped here all the same: the leasts just computed are those of what the pool is cut
        # from (at depth 5 of 100k nodes the walk often holds past the cap when the bound cannot
        # yet stop it, and the cut bounded the same ~2,000-4,000 nodes again).
        result.bounded = bounded
        return "cap"
    return None


def _nearest(limit: WalkLimit, result: Walk, frontier: list[str]) -> list[str]:
    """The ``max_expand`` frontier nodes to expand: the nearest, then the best scored, then by id."""
    reached, info, bound = result.reached, result.info, limit.bound
    least: dict[str, float] = {}
    if bound is not None:
        known = [u for u in frontier if u in info]
        least = dict(zip(known, bound.many(known, info, reached, most=False)[0]))
    keys = sorted((reached[u].cost, -least.get(u, 0.0), u) for u in frontier)
    return sorted(u for _, _, u in keys[: limit.max_expand])

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
    walker = _Walker(graph, lens, seeds, depth, rank_neighbours)
    frontier: list[str] | None = sorted(seeds)
    first = 1
    # A warm process keeps where the last walk of these seeds, lens and limit ended: the same
    # topic asked again deeper goes on from there (its first hops are those very hops).
    key = warm.walk_key(graph, lens, seeds, walker.ranker, limit)
    kept = warm.resumed_walk(key, depth) if key is not None else None
    if kept is not None:
        first, frontier = walker.resume(kept)
    ended = False
    for hop in range(first, depth + 1):
        if not frontier:
            ended = True
            break
        if limit is not None:
            frontier = walker.trim(limit, frontier, hop)
            if frontier is None:
                ended = True
                break
        walker.result.hops = hop
        frontier = walker.step(frontier, hop)
    else:
        hop = depth + 1
    # Kept only where a deeper walk can come: a request's depth is capped at the lens's most.
    if key is not None and depth < lens.max_depth:
        warm.keep_walk(graph, key, walker.result, hop, frontier or [], ended)
    walker.result.capped.sort(key=lambda c: c.node_id)
    return walker.result


class _Walker:
    """One walk between hops: what it reached, and what the store's table of reached nodes (which
    ranks a hub's neighbours in SQL) has not been told yet."""

    def __init__(
        self, graph: GraphReader, lens: Lens, seeds: list[str], depth: int, rank_neighbours: NeighbourRanker | None,
    ) -> None:
        self.graph, self.lens = graph, lens
        self.result = Walk({s: Reached(s, 0, 0.0, (), True) for s in seeds}, depth)
        self.ranker = rank_neighbours if rank_neighbours is not None else NeighbourRanker(None, None)
        self.wants_out = any(r.direction == "out" for r in lens.rules)
        self.wants_in = any(r.direction == "in" for r in lens.rules)
        self.hub_degree = HUB_FAN_OUTS * lens.fan_out  # more edges than this: a hub
        # Degrees are counted up to here: past a hub's, and past the rows a hub's ranking returns.
        self.degree_cap = max(self.hub_degree, lens.fan_out + HUB_SLACK) + 1
        # Reached nodes (and cheaper costs) the store's table of them has not seen yet: hubs need it.
        self.pending: dict[str, float] = {s: 0.0 for s in seeds}
        self.remembered = False
        # A warm process ranks hubs' neighbours from lists it keeps (``warm.py``), not in the store.
        self.kept_hubs = warm.hub_neighbours(graph)
        # And ordinary nodes' edges and degrees: a walk reads them from the store or from there.
        self.edges: _StoreEdges | warm.NodeEdges = warm.node_edges(graph) or _StoreEdges(graph)

    def resume(self, kept: warm.KeptWalk) -> tuple[int, list[str]]:
        """Take up a kept walk where it ended (``warm.resumed_walk``): the hop to take next and
        its frontier. The store's table of reached nodes is filled afresh when a hub needs it."""
        result = self.result
        result.reached = dict(kept.reached)
        result.info = dict(kept.info)
        result.capped = list(kept.capped)
        result.stopped, result.hops = kept.stopped, kept.hops
        result.unexpanded, result.unexpanded_cost = kept.unexpanded, kept.unexpanded_cost
        self.pending = {v: r.cost for v, r in result.reached.items()}
        self.remembered = False
        return kept.next_hop, list(kept.frontier)

    def trim(self, limit: WalkLimit, frontier: list[str], hop: int) -> list[str] | None:
        """The frontier ``hop`` expands (the nearest ``max_expand``), or None when the walk stops."""
        result = self.result
        why = _stop_reason(limit, result, frontier, hop, self.lens)
        if why is not None:
            result.stopped = why
            return None
        if len(frontier) <= limit.max_expand:
            return frontier
        kept = _nearest(limit, result, frontier)
        left = set(frontier) - set(kept)
        result.unexpanded += len(left)
        result.unexpanded_cost = min(result.unexpanded_cost, *(result.reached[u].cost for u in left))
        return kept

    def step(self, frontier: list[str], hop: int) -> list[str]:
        """Take ``hop`` from every frontier node; the next frontier."""
        degree = self.degrees(frontier)
        hubs = {u for u in frontier if degree.get(u, 0) > self.hub_degree}
        offers = self.offers([u for u in frontier if u not in hubs], hop)
        next_frontier: set[str] = set()
        for u in frontier:
            fresh = self.hub_fresh(u, hop, degree[u]) if u in hubs else self.fresh(u, offers[u])
            self.reach(u, fresh, hop, next_frontier)
        return sorted(next_frontier)

    def degrees(self, frontier: list[str]) -> dict[str, int]:
        """How many edges each frontier node has in the directions the lens walks, each direction
        counted up to one more than a hub's: what tells a hub, and all ``edges_around`` needs
        (a hub's few chosen neighbours against its edges)."""
        degree: dict[str, int] = {}
        for wanted, column in ((self.wants_out, "src"), (self.wants_in, "dst")):
            if wanted:
                for node_id, n in self.edges.degrees(frontier, column, self.degree_cap).items():
                    degree[node_id] = degree.get(node_id, 0) + n
        return degree

    def offers(self, ordinary: list[str], hop: int) -> dict[str, dict[str, Offer]]:
        """Each (non-hub) frontier node's neighbours, by the cheapest edge the lens takes to each."""
        lens, reached, info = self.lens, self.result.reached, self.result.info
        offers: dict[str, dict[str, Offer]] = {u: {} for u in ordinary}
        # Which rule (if any) takes an edge depends only on its type, direction and the hop.
        rule_of: dict[tuple[str, str], tuple[float, str, float] | None] = {}
        taken: dict[str, list[tuple[float, str, Offer, dict[str, NodeInfo]]]] = {u: [] for u in ordinary}
        for wanted, direction, column in ((self.wants_out, "out", "src"), (self.wants_in, "in", "dst")):
            if not wanted:
                continue
            for u, classes in self.edges.walk_classes(ordinary, column).items():
                for etype, others in classes:
                    if (etype, direction) not in rule_of:
                        rule_of[(etype, direction)] = _taken(lens, etype, direction, hop)
                    rule = rule_of[(etype, direction)]
                    if rule is not None:
                        step, name, weight = rule
                        taken[u].append((step, name, (step, name, weight, etype, direction), others))
        for u, chosen in taken.items():
            # Every class taken tells what its nodes are, even one a pure path then leaves out.
            for *_, others in chosen:
                info.update(others)
            path = reached[u].path
            # Lens ``paths: pure``: a path never changes edge (a claims chain upward never turns
            # down into a sibling's conclusions).
            first = path[0].edge if lens.paths == "pure" and path else None
            mine = offers[u]
            # The cheapest edge between two nodes wins; ties go to the alphabetically first name,
            # then to the first class read (out before in, types in order): the classes best first
            # (a stable sort), each offering only the nodes no better class offered.
            for _, name, offer, others in sorted(chosen, key=lambda c: (c[0], c[1])):
                if first is not None and name != first:
                    continue
                if mine:
                    mine.update({v: offer for v in others if v not in mine})
                else:
                    mine.update(dict.fromkeys(others, offer))
        return offers

    def fresh(self, u: str, offered: dict[str, Offer]) -> dict[str, Offer]:
        """The neighbours ``u`` offers that the walk does not hold as cheaply, cut to the fan-out."""
        reached, fan_out = self.result.reached, self.lens.fan_out
        base = reached[u].cost
        # Neighbours the walk already holds at least as cheaply do not count toward the fan-out.
        fresh = {v: o for v, o in offered.items() if v not in reached or base + o[0] < reached[v].cost - 1e-12}
        if len(fresh) > fan_out:
            order = self.ranker([(v, o[2]) for v, o in fresh.items()], self.result.info)
            keep = set(order[:fan_out])
            self.result.capped.append(FanOutCap(u, fan_out, len(fresh) - fan_out))
            fresh = {v: o for v, o in fresh.items() if v in keep}
        return fresh

    def hub_fresh(self, u: str, hop: int, degree: int) -> dict[str, Offer]:
        """A hub's fresh neighbours, ranked where its lists are (the store, or a warm process)."""
        if self.kept_hubs is None:
            self.hold_reached()
        return _hub_fresh(
            self.graph, self.lens, self.ranker, hop, u, self.result, degree, self.kept_hubs, self.hold_reached
        )

    def hold_reached(self) -> None:
        """Bring the store's table of reached nodes up to date (``best_neighbours`` reads it)."""
        self.graph.remember_reached(self.pending.items(), reset=not self.remembered)
        self.remembered, self.pending = True, {}

    def reach(self, u: str, fresh: dict[str, Offer], hop: int, next_frontier: set[str]) -> None:
        """Hold each fresh neighbour at its cost through ``u`` (a cheaper route replaces a dearer one)."""
        reached, pending = self.result.reached, self.pending
        base, before = reached[u].cost, reached[u].path
        for v in sorted(fresh):
            step, _name, _weight, etype, direction = fresh[v]
            cost = base + step
            # A Hop made as the tuple it is: a depth-5 walk makes thousands (half the time of
            # Hop(...), which goes through the named tuple's Python-level __new__).
            path = before + (_tuple_new(Hop, (etype, direction, u, v)),)
            current = reached.get(v)
            if current is None:
                reached[v] = _tuple_new(Reached, (v, hop, cost, path, False))
                pending[v] = cost
                next_frontier.add(v)
            elif not current.seed and cost < current.cost - 1e-12:
                pending[v] = cost
                # A cheaper route found later (more hops over heavier edges): the node's
                # distance is its cheapest route, so hops and path follow that route. A new
                # record, not the old one changed: a warm process's kept walks share them.
                reached[v] = _tuple_new(Reached, (v, hop, cost, path, False))
                next_frontier.add(v)


class _StoreEdges:
    """Ordinary nodes' edges and degrees read from the store for one walk (a warm process keeps
    them instead: ``warm.NodeEdges``)."""

    def __init__(self, graph: GraphReader) -> None:
        self.graph = graph

    def degrees(self, ids: list[str], column: str, at_most: int | None = None) -> dict[str, int]:
        return self.graph.degrees(ids, column, at_most)

    def walk_classes(self, ids: list[str], column: str) -> dict[str, EdgeClasses]:
        return edge_classes_of(self.graph.walk_edges(ids, column), column)


def _taken(lens: Lens, etype: str, direction: str, hop: int) -> tuple[float, str, float] | None:
    """(cost step, walked name, weight) of the rule that takes this edge at ``hop``, or None."""
    rule = lens.rules_for(etype, direction, hop)
    return None if rule is None else (1.0 / rule.weight, walked_name(etype, direction), rule.weight)


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
    hold_reached: Callable[[], None] | None = None,
) -> dict[str, Offer]:
    """A hub's fresh neighbours, cut to the fan-out, as the ordinary path would choose them, with
    only the best of them by the pre-score read (ranked in SQL; the walk's reached nodes are in
    ``remember_reached``'s table, so those already held at least as cheaply do not count)."""
    reached, info = result.reached, result.info
    weights: dict[tuple[str, str], float] = {}
    path = reached[u].path
    for etype, direction in (graph if kept_hubs is None else kept_hubs).edge_classes(u):
        rule = lens.rules_for(etype, direction, hop)
        if rule is None:
            continue
        if lens.paths == "pure" and path and walked_name(etype, direction) != path[0].edge:
            continue
        weights[(etype, direction)] = rule.weight
    if not weights:
        return {}
    if kept_hubs is not None:
        assert hold_reached is not None
        total, chosen = kept_hubs.best(
            u, reached[u].cost, weights, ranker, lens.fan_out + HUB_SLACK, reached, hold_reached
        )
    else:
        total, chosen = graph.best_neighbours(u, reached[u].cost, weights, ranker, lens.fan_out + HUB_SLACK)
    for node_id, ntype, tags, updated, title in chosen:
        if node_id not in info:
            info[node_id] = NodeInfo(ntype, tags, updated, title)
    offers: dict[str, Offer] = {}
    around = graph.edges_around if kept_hubs is None else kept_hubs.edges_around
    for other, etype, direction in around(u, weights, [row[0] for row in chosen], degree):
        offers[other] = _offer(offers.get(other), etype, direction, weights[(etype, direction)])
    if total > lens.fan_out:
        keep = ranker([(v, o[2]) for v, o in offers.items()], info)[: lens.fan_out]
        result.capped.append(FanOutCap(u, lens.fan_out, total - lens.fan_out))
        return {v: offers[v] for v in keep}
    return offers
