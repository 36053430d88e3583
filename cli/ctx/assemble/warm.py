"""What a warm process (the MCP server) keeps between builds, keyed by the graph's state.

A build's first half — the topics resolved to seeds, the walk, the candidates with their scores,
ranked and cut to the pool — is a function of the graph and of a few request fields (topics,
lens, depth, budget, fields shown, the reader's visibility). An agent asks about the same topic
again and again; re-walking a hub-heavy neighbourhood at depth 3 took 0.3-0.9 s at 100k nodes.
So a warm process keeps that half, under ``GraphReader.warm_state()`` (any connection writing what
builds read, an import, vectors written on this one all move it; another process's build
recording its manifest does not; never a clock), and the next
build with the same inputs copies it and goes on from there: the header, the text of the
candidates, the exact-budget packing and the audit are computed again, so a different format or
freshness line still makes its own text, byte for byte what a cold build gives. The very same
request (format, audit and measured freshness included) under the same state gets the answer
kept whole. Hubs' neighbour lists ranked by the walk's pre-score are kept too: they do not depend
on the topic, so walks of different topics through one hub share them (``HubNeighbours``).

Off unless a long-lived process turns it on (``enable``): a one-shot ``ctx build`` would only
pay for the copies. Tokens are counted the same way: a warm process keeps the counts of the
texts it has seen (a pure function of the text and the encoding).
"""

from __future__ import annotations

import copy
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Container, Hashable, Iterator, Mapping
from contextlib import contextmanager
from bisect import insort
from itertools import repeat
from operator import attrgetter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctx.assemble.candidate import Candidate

if TYPE_CHECKING:
    from ctx.assemble.pipeline import Build
    from ctx.assemble.score import NeighbourRanker
    from ctx.assemble.traverse import FanOutCap, Walk, WalkLimit
    from ctx.assemble.result import BuildResult
    from ctx.assemble.traverse import Reached
    from ctx.store.protocols import GraphReader, NeighbourOrder
    from ctx.store.types import Neighbour, NodeFacts, RankedNeighbour, ScanTable, StoredPassage, WalkDetail

    from ctx.assemble.bound import NodeInfo
    from ctx.lenses import Lens

    from ctx.assemble.edge_groups import EdgeClasses

# Measured at 100k nodes after 160 builds of 40 topics (bench_scale's graph): 16 pools ~16 MB
# (a few hundred candidates each), 16 answers ~3 MB, 20k token counts ~8 MB, 200k hub rows ~33 MB.
# After 240 builds of 60 topics (40 notes, 20 questions, depth 1/2/3/5), with ordinary nodes'
# edges and facts kept too (127k edge rows, 13k facts and degrees, 200k hub rows): peak RSS 298 MB
# in process, 83 MB for the same builds cold.
# Pools and answers kept (the most recently used). An agent going round more topics than this
# finds none kept: 20 free-text questions asked at depths 1, 2, 3 and 5 (the answer lens caps 3
# and 5 to 2, the pool of 2) found every pool evicted at 16 and rebuilt it (~50 ms at 100k nodes).
MAX_POOLS = 32
# Token counts kept per encoding before they are forgotten all at once (keyed by the texts).
MAX_COUNTS = 20_000

# Rows of hubs' ranked neighbour lists kept (a row: a neighbour's id, type, tags, date, title).
MAX_HUB_ROWS = 200_000
# Hubs remembered as met once (their lists are read whole the second time).
MAX_HUBS_MET = 10_000
# Edge rows of ordinary (non-hub) nodes kept for walks, and nodes' degrees (``NodeEdges``).
MAX_EDGE_ROWS = 200_000
MAX_DEGREES = 200_000
# What the walk reads of nodes at edges' other ends (``NodeDetails``): every visible node's, read
# at once when the graph has at most this many nodes (~0.35 s and ~40 MB at 100k nodes), else as
# walks meet them (forgotten all at once past this many).
MAX_DETAILS = 250_000
# Nodes' boosts and recencies as a walk's score bounds compute them (``bound_facts``), per lens.
MAX_BOUND_FACTS = 250_000
# Nodes' facts (what scoring reads of a walked node: title, type, tags, dates, ...) kept.
MAX_FACTS = 60_000
# Nodes whose passages are kept (``passages_of``): ~2.5 KB a node at 100k nodes.
MAX_PASSAGE_NODES = 10_000
# Words' note counts kept (``notes_matching``): a key and an int each.
MAX_MATCH_COUNTS = 20_000
# Rows of the tables of hubs the store ranks newest first (``Scanned``: their small classes and
# the big class's neighbours read so far), and big-class neighbours read for one hub at most (past
# that the store ranks it: its neighbours are mostly old).
MAX_SCAN_ROWS = 200_000
MAX_NEWEST_PER_HUB = 20_000
# A hub's big class is read whole as ids (at most BIG_IDS_AT_MOST of them) once walks have asked
# whether this many times a share of its links are its neighbours: an id read costs ~0.15-0.19 us
# (``edge_lists``: one JSON array per type), a held node asked ~3.5-4.7 us (``edges_around``, 100k
# nodes, hubs of 11k-21k links), so the ids are read once the asking has cost about what reading
# them would (a rent-or-buy rule: at most twice the cheaper of the two, whatever walks come later).
BIG_IDS_AFTER = 20
# ~8 ms and ~5 MB at most, counted toward MAX_SCAN_ROWS; tags of 20,000-40,000 notes at 100k nodes
# were asked node by node for good under MAX_NEWEST_PER_HUB.
BIG_IDS_AT_MOST = 50_000
# Hubs' edge classes and edges to the neighbours walks chose, kept (hubs: ``MAX_HUBS_MET``; a
# hub's neighbours forgotten all at once past ``MAX_AROUND_PER_HUB``).
MAX_AROUND_PER_HUB = 4_096
# A hub the store would rank newest first (``GraphReader.ranks_best_alone``) with at most this many
# edge rows is read and valued whole at its first meeting where every node's details are kept
# (``HubNeighbours._whole_pays``).
WHOLE_AT_MOST = 12_000

_enabled = False
_pools: OrderedDict[Hashable, Kept] = OrderedDict()
_results: OrderedDict[Hashable, BuildResult] = OrderedDict()
# A hub's ranked list as kept: its visible neighbours' ids best first, their details in that
# order, and each one's heaviest edge weight.
Ranked = tuple[list[str], list["NodeInfo"], dict[str, float]]
_hubs: OrderedDict[Hashable, Ranked] = OrderedDict()
_hub_rows = 0
# Hubs' edges by class (``HubEdges``), read once per graph state whatever the weights.
_hub_edges: OrderedDict[Hashable, HubEdges] = OrderedDict()
_hub_edge_rows = 0
_scans: OrderedDict[Hashable, Scanned] = OrderedDict()
_scan_rows = 0
# Hubs ranked by the store, not kept: None after the first time, then whether the store ranks
# them without reading every neighbour (``GraphReader.ranks_best_alone``: never kept then).
_hubs_met: OrderedDict[Hashable, bool | None] = OrderedDict()
_NEW = object()
_counts: dict[str, dict[str, int]] = {}
_chunk_counts: dict[str, dict[str, int]] = {}
_edges: OrderedDict[Hashable, EdgeClasses] = OrderedDict()
_edge_rows = 0
_degrees: OrderedDict[Hashable, int] = OrderedDict()
_facts: OrderedDict[Hashable, NodeFacts] = OrderedDict()
_passages: OrderedDict[Hashable, list[StoredPassage]] = OrderedDict()
_match_counts: OrderedDict[Hashable, int] = OrderedDict()
_details: OrderedDict[Hashable, NodeDetails] = OrderedDict()
_bound_facts: OrderedDict[Hashable, dict[str, tuple[float, float]]] = OrderedDict()
_classes: OrderedDict[Hashable, list[tuple[str, str]]] = OrderedDict()
_around: OrderedDict[Hashable, dict[str, list[tuple[str, str]]]] = OrderedDict()
_walks: OrderedDict[Hashable, KeptWalk] = OrderedDict()
_lock = threading.Lock()  # the MCP server builds in several threads at once

# The Build fields the seeds, collect and rank stages fill in (``pipeline.run``).
_KEPT_FIELDS = (
    "passage_search", "resolved", "seeds", "missing", "reference", "walked", "extras", "recent",
    "similarity", "similarity_note", "ranking", "pool", "in_outlines",
)


@dataclass
class Kept:
    fields: dict[str, Any]
    candidates: list[Any]
    warnings: list[str]  # what those stages added
    meta: dict[str, Any]  # likewise
    found: bool


def enable(pools: int = MAX_POOLS) -> None:
    global _enabled, MAX_POOLS
    _enabled = True
    MAX_POOLS = pools


def disable() -> None:
    global _enabled
    _enabled = False
    forget()


def forget() -> None:
    """Drop everything kept (the graph file was replaced), staying warm for what comes next."""
    global _hub_rows, _edge_rows, _scan_rows, _hub_edge_rows
    with _lock:
        _scans.clear()
        _scan_rows = 0
        _edges.clear()
        _degrees.clear()
        _facts.clear()
        _passages.clear()
        _match_counts.clear()
        _details.clear()
        _bound_facts.clear()
        _classes.clear()
        _around.clear()
        _edge_rows = 0
        _pools.clear()
        _walks.clear()
        _results.clear()
        _counts.clear()
        _chunk_counts.clear()
        _hubs.clear()
        _hubs_met.clear()
        _hub_rows = 0
        _hub_edges.clear()
        _hub_edge_rows = 0


def enabled() -> bool:
    return _enabled


@contextmanager
def paused() -> Iterator[None]:
    """Build cold for a while, keeping what was kept (a check compares cold and warm bytes)."""
    global _enabled
    was, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = was


def shared_counts(encoding: str) -> dict[str, int] | None:
    """The token counts a warm process keeps for ``encoding`` (None when not warm)."""
    if not _enabled:
        return None
    counts = _counts.setdefault(encoding, {})
    if len(counts) > MAX_COUNTS:
        counts.clear()
    return counts


def shared_chunk_counts(encoding: str) -> dict[str, int] | None:
    """The paragraphs' token counts a warm process keeps for ``encoding`` (``counter.
    paragraph_chunks``; None when not warm). The counter bounds them (``counter.MAX_CHUNKS``)."""
    if not _enabled:
        return None
    return _chunk_counts.setdefault(encoding, {})


def pool_key(graph: GraphReader, build: Build) -> Hashable | None:
    """What the seeds, collect and rank stages of ``build`` depend on, or None (not warm, or the
    engine cannot say when its graph changed)."""
    if not _enabled:
        return None
    state = graph.warm_state()
    if state is None:
        return None
    request = build.request
    # The lens as parsed (a dataclass of its every setting): a lens file edited between two calls
    # is another lens.
    # The encoding is part of it: meta names it, and token counts depend on it.
    return (
        state, graph.include_private, request.topics, build.topics, build.lens.as_key(), build.depth,
        request.max_tokens, request.include_fields, request.encoding,
    )


def restore(key: Hashable, build: Build) -> bool:
    """Fill ``build`` as the seeds, collect and rank stages would, from what was kept under ``key``."""
    with _lock:
        kept = _pools.get(key)
        if kept is None:
            return False
        _pools.move_to_end(key)
    for name, value in kept.fields.items():
        setattr(build, name, value)
    # Later stages set each candidate's text, decision and tokens: every build gets its own.
    build.candidates = [_copy(c) for c in kept.candidates]
    build.warnings += kept.warnings
    build.meta.update(copy.deepcopy(kept.meta))
    build.doc.found = kept.found
    return True


def remember(graph: GraphReader, key: Hashable, build: Build, warnings_before: int, meta_before: set[str]) -> None:
    """Keep what the seeds, collect and rank stages made, if the graph did not move meanwhile."""
    if graph.warm_state() != key[0]:  # type: ignore[index]
        return  # something wrote while the build read: what it saw has no one state to be kept under
    kept = Kept(
        _slim({name: getattr(build, name) for name in _KEPT_FIELDS}),
        [_copy(c) for c in build.candidates],
        build.warnings[warnings_before:],
        copy.deepcopy({k: v for k, v in build.meta.items() if k not in meta_before}),
        build.doc.found,
    )
    with _lock:
        _pools[key] = kept
        while len(_pools) > MAX_POOLS:
            _pools.popitem(last=False)


def _slim(fields: dict[str, Any]) -> dict[str, Any]:
    """What the stages after ranking read of the walk, the pool and the similarities: the walk's
    summary (caps, where it stopped), how many the pool left out, whether there are similarities.
    Not every node the walk reached (thousands at depth 5 on a big graph, a few MB per pool)."""
    walked, pool = fields["walked"], fields["pool"]
    if walked is not None:
        fields["walked"] = replace(walked, reached={}, info={}, capped=list(walked.capped), bounded=None)
    if pool is not None:
        fields["pool"] = replace(pool, beyond=set(), cut=pool.cut + len(pool.beyond))  # the same left_out
    if fields["similarity"] is not None:
        fields["similarity"] = {}
    return fields


def _answer_key(key: Hashable, build: Build) -> Hashable:
    """What the whole answer depends on beyond the pool: every field of the request as asked (the
    depth before the lens capped it and the warning that says so, the format, the audit, the
    freshness the caller measured: a source edited on disk moves it before the graph moves)."""
    return (key, repr(build.request))


def answer(key: Hashable, build: Build) -> BuildResult | None:
    """The result a build of the same request made under the same graph state, as a copy."""
    from ctx.assemble.result import BuildResult

    with _lock:
        kept = _results.get(_answer_key(key, build))
        if kept is None:
            return None
        _results.move_to_end(_answer_key(key, build))
    return BuildResult(
        kept.text, kept.found, list(kept.warnings), [dict(row) for row in kept.candidates], copy.deepcopy(kept.meta)
    )


def remember_answer(graph: GraphReader, key: Hashable, build: Build, result: BuildResult) -> None:
    """Keep ``result`` (a copy: the caller may add to its warnings) if the graph did not move. Its
    rows and meta are copied once the answer is out (``later``): nothing changes them after the
    build; its warnings now (the server adds its own to the list)."""
    from ctx.assemble.result import BuildResult

    if graph.warm_state() != key[0]:  # type: ignore[index]
        return
    text, found, warnings, rows, meta = result.text, result.found, list(result.warnings), result.candidates, result.meta
    answer_key = _answer_key(key, build)

    def keep() -> None:
        kept = BuildResult(text, found, warnings, [dict(row) for row in rows], copy.deepcopy(meta))
        with _lock:
            _results[answer_key] = kept
            while len(_results) > MAX_POOLS:
                _results.popitem(last=False)

    later(keep)


# Work a call's answer does not wait for (``later``): the list of the thread's current call, when a
# server runs it once the answer is written (``once_answered``).
_answered = threading.local()


@contextmanager
def once_answered(jobs: list[Callable[[], None]]) -> Iterator[None]:
    """Within it, ``later`` puts work in ``jobs`` for the caller to run once the answer is out
    (the MCP server: after writing it, on the call's connection); elsewhere ``later`` runs it."""
    before = getattr(_answered, "jobs", None)
    _answered.jobs = jobs
    try:
        yield
    finally:
        _answered.jobs = before


def later(job: Callable[[], None]) -> None:
    """Run ``job`` once the answer is out where the caller can (``once_answered``), else now.
    Only for work the answer does not depend on: keeping it for a repeat, the build's manifest."""
    jobs = getattr(_answered, "jobs", None)
    if jobs is None:
        job()
    else:
        jobs.append(job)


def _copy(candidate: Candidate) -> Candidate:
    """A shallow copy (later stages assign a candidate's fields, they never change its lists or
    dicts in place), a few times cheaper than ``copy.copy``: a pool holds hundreds of them. Its
    attributes as one copied dict (~1.2 us), not added to an empty one (~2.9 us: it grows four
    times on the way to 34 entries)."""
    twin = object.__new__(Candidate)
    twin.__dict__ = candidate.__dict__.copy()
    return twin


@dataclass
class KeptWalk:
    """Where a walk ended (``traverse.walk``): what it reached (the records are never changed once
    made, so they are shared), what it read of them, its caps in the order made, and the hop it
    would take next with that hop's frontier; ``ended``: it stopped before its depth (the bound,
    the cap, or nothing left to walk), so any deeper walk stops there too."""

    reached: dict[str, Reached]
    info: dict[str, NodeInfo]
    capped: list[FanOutCap]
    stopped: str | None
    hops: int
    unexpanded: int
    unexpanded_cost: float
    next_hop: int
    frontier: list[str]
    ended: bool


def walk_key(
    graph: GraphReader, lens: Lens, seeds: list[str], ranker: NeighbourRanker, limit: WalkLimit | None
) -> Hashable | None:
    """What a walk depends on besides its depth (None when not warm): the graph's state and the
    reader's visibility, the lens as parsed, the seeds in order, the neighbour ranker, and the
    limit with its score bound's inputs. A walk to depth d takes the very hops a walk of the same
    key to a lesser depth took, in the same order, so a topic asked again deeper (an agent going
    from depth 2 to 3 to 5) goes on from where the last walk ended instead of walking them again:
    at 100k nodes a new note's depth-5 walk spent ~15 of its ~24 ms on the hops its depth-3 walk
    had just taken."""
    if not _enabled:
        return None
    state = graph.warm_state()
    if state is None:
        return None
    bound = None
    if limit is not None and limit.bound is not None:
        b = limit.bound
        # The bound reads the lens (in the key), whether there are similarities, the reference
        # time and half-life, and the search relevances.
        bound = (b.has_similarity, b.reference, b.half_life, tuple(sorted(b.search.items())))
    return (
        state, graph.include_private, lens.as_key(), tuple(seeds),
        (ranker.reference, ranker.half_life, ranker.recency_share, tuple(sorted(ranker.type_boosts.items())),
         tuple(sorted(ranker.tag_boosts.items()))),
        None if limit is None else (limit.pool, limit.max_reached, limit.max_expand), bound,
    )


def resumed_walk(key: Hashable, depth: int) -> KeptWalk | None:
    """The walk kept under ``key`` if a walk to ``depth`` begins with it: it ended before
    ``depth`` (stopped at a hop no later than ``depth``, or walked every hop up to ``depth`` or
    fewer)."""
    with _lock:
        kept = _walks.get(key)
        if kept is None:
            return None
        usable = depth >= kept.next_hop if kept.ended else depth >= kept.next_hop - 1
        if not usable:
            return None
        _walks.move_to_end(key)
        return kept


def keep_walk(graph: GraphReader, key: Hashable, walk: Walk, next_hop: int, frontier: list[str], ended: bool) -> None:
    """Keep where ``walk`` ended under ``key``, if the graph did not move while it walked (copies
    of its dicts and caps: the build goes on to change the walk's)."""
    if graph.warm_state() != key[0]:  # type: ignore[index]
        return
    kept = KeptWalk(
        dict(walk.reached), dict(walk.info), list(walk.capped), walk.stopped, walk.hops, walk.unexpanded,
        walk.unexpanded_cost, next_hop, list(frontier), ended,
    )
    with _lock:
        _walks[key] = kept
        _walks.move_to_end(key)
        while len(_walks) > MAX_POOLS:
            _walks.popitem(last=False)


class HubNeighbours:
    """A walk's view of the hubs' ranked neighbour lists a warm process keeps.

    A hub's neighbours ranked by the walk's pre-score depend on the graph, the edge weights and
    the ranker only, not on the topic: every walk that reaches a hub of thousands of links ranks
    the same list (tens of ms each in SQL at 100k nodes, a dozen hubs by depth 3). Kept whole under
    the graph's state, the list is filtered here by the walk's own costs, as the store's
    ``best_neighbours`` filters by the ones ``remember_reached`` holds: the same neighbours, in
    the same order."""

    def __init__(self, graph: GraphReader, state: Hashable) -> None:
        self.graph = graph
        self.state = state

    def best(
        self,
        node_id: str,
        base: float,
        weights: dict[tuple[str, str], float],
        ranker: NeighbourOrder,
        limit: int,
        reached: dict[str, Reached],
        hold_reached: Callable[[], None],
    ) -> tuple[int, list[Neighbour]]:
        """``GraphReader.best_neighbours`` for a walk that holds ``reached``. A hub met for the first
        time under this state is ranked by the store as a cold walk does (its best few, after
        ``hold_reached`` brings the store's table of reached nodes up to date); met again, its whole
        list is read once and kept. Reading a whole list costs about twice the store's ranking of
        its best few: kept at once, a new topic's first call through unknown hubs was slower than a
        cold build (100k nodes, typical depth 2: 671 against 352 ms)."""
        kept = self._kept(node_id, weights, ranker, limit)
        if isinstance(kept, Scanned):
            answer = self._scanned_best(kept, node_id, base, weights, ranker, limit, reached)
            if answer is not None:
                return answer
            kept = None
        if kept is None:
            hold_reached()
            return self.graph.best_neighbours(node_id, base, weights, ranker, limit)
        ids, infos, weight_of = kept
        stale = _stale(reached, weight_of, base)
        fresh: list[Neighbour] = []
        for other, info in zip(ids, infos):
            if len(fresh) == limit:
                break
            if other not in stale:
                fresh.append((other, info.type, info.tags, info.updated, info.title))
        return len(ids) - len(stale), fresh

    def _scanned_best(
        self,
        scanned: Scanned,
        node_id: str,
        base: float,
        weights: dict[tuple[str, str], float],
        ranker: NeighbourOrder,
        limit: int,
        reached: dict[str, Reached],
    ) -> tuple[int, list[Neighbour]] | None:
        """``best_neighbours`` of a hub the store ranks newest first (``ctx.store.hub_scan``), from
        its kept table and the walk's own costs: the small classes' fresh neighbours are counted
        and their best taken in their ranked order, the big class's held ones asked once per node
        and hub, and its kept neighbours read newest first (more read from the store as needed)
        until none later can enter. The same rows and count as the store's; None where the store
        must answer (the hub's neighbours turn out mostly old)."""
        from ctx.assemble.score import recency

        table = scanned.table
        w_big = weights[table.big]
        best: list[tuple[float, str, Neighbour]] = []  # (-value, id, row), best first
        fresh = 0
        for row in table.small:
            held = reached.get(row[0])
            if held is None or base + 1.0 / row[5] < held.cost - 1e-12:
                fresh += 1
                if len(best) < limit:
                    best.append((-_value(ranker, row[5], row[1], row[2], row[3]), row[0], row[:5]))
        stale = self._held_in_big(scanned, node_id, base, w_big, reached)
        top = max([1.0, *ranker.type_boosts.values()])

        def bound(updated: float | None) -> float:
            r = recency(updated, ranker.reference, ranker.half_life)
            return top * (w_big + ranker.recency_share * r)

        def beats(most: float) -> bool:
            return -best[-1][0] > most + 1e-9 * max(1.0, abs(most))

        i = 0
        while True:
            if i == len(scanned.newest):
                if scanned.done:
                    if len(best) == limit and beats(bound(None)):
                        break
                    return None
                if not self._read_newest(scanned, node_id, weights, ranker, limit):
                    return None
                continue
            value, found = scanned.newest[i]
            i += 1
            other = found[0]
            if other in scanned.small_ids:
                continue  # valued in its small class at least as high
            if len(best) >= limit:
                most = bound(found[3])
                worst, worst_id = -best[-1][0], best[-1][1]
                if beats(most) or (worst == most and worst_id < other):
                    break
            held = reached.get(other)
            if held is None or base + 1.0 / w_big < held.cost - 1e-12:
                item = (-value, other, found)
                if len(best) < limit or item[:2] < best[-1][:2]:
                    insort(best, item)
                    del best[limit:]
        total = fresh + table.links - len(table.hidden) - table.in_big - stale
        return total, [row for _, _, row in best]

    def _held_in_big(
        self, scanned: Scanned, node_id: str, base: float, w_big: float, reached: dict[str, Reached]
    ) -> int:
        """How many of the big class's visible neighbours outside the small classes the walk holds
        no dearer than a step from the hub (not fresh); whether a held node is the big class's
        neighbour is asked once per hub (``edges_around``) and kept, or, once walks have asked
        about enough of them, answered by the big class's ids read whole (``_read_big_ids``)."""
        table = scanned.table
        step = base + 1.0 / w_big
        cap = step + 1e-9
        small_ids, hidden, big_ids = scanned.small_ids, table.hidden, scanned.big_ids
        if big_ids is not None:
            # The ids read: one pass over what the walk holds, asked first whether a node is the
            # big class's (most are not), then the test below's (a walk through a 11k-link note
            # hub meets it at most hops of a depth-3 walk, each time holding ~3,000 nodes).
            # (Which held nodes are its found in C first: ``intersection`` iterates the dict.)
            return sum(
                1 for v in big_ids.intersection(reached)
                if (held := reached[v]).cost <= cap and v != node_id and v not in small_ids and v not in hidden
                and not step < held.cost - 1e-12
            )
        asked = [
            v for v, held in reached.items()
            if held.cost <= cap and v != node_id and v not in small_ids and v not in hidden
        ]
        if big_ids is None:
            with _lock:
                missing = [v for v in asked if v not in scanned.member]
            if missing and table.links <= BIG_IDS_AT_MOST and BIG_IDS_AFTER * (len(missing) + len(scanned.member)) >= table.links:
                big_ids = self._read_big_ids(scanned, node_id)
        if big_ids is not None:
            members = {v for v in asked if v in big_ids}
        elif missing:
            found = {other for other, _, _ in self.graph.edges_around(node_id, [table.big], missing, table.links)}
            with _lock:
                if len(scanned.member) > MAX_NEWEST_PER_HUB:
                    scanned.member.clear()
                scanned.member.update((v, v in found) for v in missing)
                members = {v for v in asked if scanned.member.get(v, v in found)}
        else:
            with _lock:
                members = {v for v in asked if scanned.member[v]}
        return sum(1 for v in members if not base + 1.0 / w_big < reached[v].cost - 1e-12)

    def _read_big_ids(self, scanned: Scanned, node_id: str) -> frozenset[str] | None:
        """Every neighbour of the hub's big class (hidden ones too), read once from the hub's edges
        (``edge_lists``: ~0.15-0.19 us a link at 100k nodes) and kept: walks through a hub ask
        whether thousands of the nodes they hold are its neighbours, each ~3.5-4.7 us when looked up one
        by one (``edges_around``), and at depth 3 of 100k nodes a new note's walk asked about as
        many nodes as a note hub of 3,000-11,000 links has. None when the graph moved meanwhile."""
        global _scan_rows
        etype, direction = scanned.table.big
        column = "src" if direction == "out" else "dst"
        ids = frozenset(
            other for kind, others in self.graph.edge_lists(node_id, column) if kind == etype for other in others
        )
        if self.graph.warm_state() != self.state:
            return None
        with _lock:
            if scanned.big_ids is None:
                scanned.big_ids = ids  # asked of from now on (what ``member`` holds agrees)
                _scan_rows += len(ids)
            return scanned.big_ids

    def _read_newest(
        self, scanned: Scanned, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder,
        limit: int,
    ) -> bool:
        """Read the big class's next neighbours newest first into the kept table; False when the
        store should rank the hub instead (too many read, or the graph moved)."""
        global _scan_rows
        have = len(scanned.newest)
        if have >= MAX_NEWEST_PER_HUB:
            return False
        last = scanned.newest[-1][1] if have else None
        after = None if last is None or last[3] is None else (last[3], last[0])
        count = max(2 * limit, have)
        rows = self.graph.newest_neighbours(node_id, scanned.table.big, count, after)
        if self.graph.warm_state() != self.state:
            return False
        w_big = weights[scanned.table.big]
        read = [(_value(ranker, w_big, r[1], r[2], r[3]), r) for r in rows]
        with _lock:
            if len(scanned.newest) != have:  # another thread read them meanwhile
                return True
            scanned.newest.extend(read)
            scanned.done = len(rows) < count
            _scan_rows += len(read)
        return True

    def _kept(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> Ranked | Scanned | None:
        """The hub's whole ranked list and each neighbour's heaviest edge weight, kept or read now
        (its second meeting under this state); None when it is met for the first time. A hub the
        store finds the best of without ranking them all (``ranks_best_alone``: a tag of 40,000
        notes at 100k nodes, a few ms each time against ~150 ms to read its list) is never read
        whole: what of the store's work does not depend on the walk is kept instead
        (``scan_table``: a note hub's small classes cost ~10 ms of its ~14 at 100k nodes)."""
        key = (
            self.state, self.graph.include_private, node_id, tuple(sorted(weights.items())), ranker.reference,
            ranker.half_life, ranker.recency_share, tuple(sorted(ranker.type_boosts.items())),
            tuple(sorted(ranker.tag_boosts.items())),
        )
        with _lock:
            kept = _hubs.get(key)
            if kept is not None:
                _hubs.move_to_end(key)
                return kept
            scanned = _scans.get(key)
            if scanned is not None:
                _scans.move_to_end(key)
                return scanned
            met = _hubs_met.get(key, _NEW)
            if met is _NEW:
                _hubs_met[key] = None
                while len(_hubs_met) > MAX_HUBS_MET:
                    _hubs_met.popitem(last=False)
        # With every node's details kept, ranking a hub's whole list here costs about what the
        # store's ranking of its best few does (~40 hubs of 100k depth-1..3 builds: 253 against
        # 235 ms): it is read and kept at the first meeting, not the second.
        whole_first = _node_details(self.graph, self.state).complete
        if met is _NEW and not whole_first:
            return None
        if met is None or met is _NEW:  # asked now whether the store ranks it alone (kept as the answer)
            first = met is _NEW
            met = self.graph.ranks_best_alone(node_id, weights, ranker, limit)
            if met and whole_first and self._whole_pays(node_id):
                met = False  # read and valued whole now, as a smaller hub is
            with _lock:
                _hubs_met[key] = met
            if met and first:
                return None  # the store ranks a scanned hub's best the first time, as before
        if met:
            return self._scan_table(key, node_id, weights, ranker, limit)
        details = _node_details(self.graph, self.state)
        if details.complete:
            kept = self._valued(node_id, weights, ranker, details)
        else:  # the store ranks them (in its order: the values are not needed past the sort)
            from ctx.assemble.bound import NodeInfo

            rows = self.graph.ranked_neighbours(node_id, weights, ranker)
            kept = ([r[0] for r in rows], [NodeInfo(r[1], r[2], r[3], r[4]) for r in rows], {r[0]: r[5] for r in rows})
        if self.graph.warm_state() == self.state:  # else the graph moved while this was read
            _keep_hub(key, kept)
        return kept

    def _whole_pays(self, node_id: str) -> bool:
        """Whether a hub the store ranks alone (newest first) costs less read and valued whole at
        its first meeting, as a smaller hub is: at most ``WHOLE_AT_MOST`` edge rows (both
        directions, counted up to one more: index steps). Its list is then kept, and every later
        meeting under this state costs a pass over the walk's nodes; ranked by the store it costs
        a ranking at the first meeting, the kept table, the big class's newest neighbours and
        which held nodes are its own at the second, and a probe of the newly held nodes at each
        later one."""
        if self._hub_edges_kept(node_id):
            return True  # read already (met under other weights): only valued
        cap = WHOLE_AT_MOST + 1
        rows = 0
        for column in ("src", "dst"):
            rows += self.graph.degrees([node_id], column, cap).get(node_id, 0)
            if rows > WHOLE_AT_MOST:
                return False
        return True

    def _hub_edges_kept(self, node_id: str) -> bool:
        with _lock:
            return (self.state, node_id) in _hub_edges

    def _ranked(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder
    ) -> list[RankedNeighbour]:
        """``GraphReader.ranked_neighbours``: from the hub's edges alone (``edge_ends``, index steps)
        and every visible node's details where they are kept whole (``preload``), each neighbour
        valued here as the store's SQL values it (``_value``: the same doubles) and sorted the same
        way (value, then id: code point order is UTF-8 byte order); ~0.6x the store's time at 100k
        nodes, which joins each edge with its node's row. Else the store ranks them."""
        details = _node_details(self.graph, self.state)
        if not details.complete:
            return self.graph.ranked_neighbours(node_id, weights, ranker)
        ids, infos, weight_of = self._valued(node_id, weights, ranker, details)
        return [
            (other, info.type, info.tags, info.updated, info.title, weight_of[other])
            for other, info in zip(ids, infos)
        ]

    def _valued(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, details: NodeDetails
    ) -> Ranked:
        """``_ranked`` as the walk keeps it: the visible neighbours' ids best first, their details,
        and each one's heaviest weight. The hub's edges grouped by class
        (``HubEdges``) are read once per graph state whatever the weights: a note hub met at hop 2
        (where the lens walks tags) and again at hop 3 (where it does not) is valued twice, read
        once; a neighbour's rows are made only for the few a walk takes (``best``).

        Valued a list at a time (``_values``: numpy's elementwise products and sums are the
        doubles Python's give), where no neighbour's boost depends on its tags and none is below
        0; else one neighbour at a time (``_valued_one_by_one``)."""
        edges = self._hub_edges(node_id)
        heaviest: dict[str, float] = {}
        lightest: dict[str, float] = {}  # of a neighbour over several edges (a boost below 0 takes it)
        # The biggest class first (a note hub's backlinks beside its few own links): what follows
        # from them does not depend on the order of classes (the heaviest and lightest weights).
        taken = sorted(
            ((cls, w, edges.by_class[cls]) for cls, w in weights.items() if edges.by_class.get(cls)),
            key=lambda t: -len(t[2]),
        )
        for _, w, others in taken:
            if not heaviest:
                # The first class taken: every neighbour at its weight, at C speed.
                heaviest = dict.fromkeys(others, w)
                continue
            if all(weight == w for _, weight, _ in taken):
                heaviest.update(dict.fromkeys(others, w))  # one weight: those not there yet at it
                continue
            for other in others:
                before = heaviest.get(other)
                if before is None:
                    heaviest[other] = w
                elif before != w:
                    # The heaviest and the lightest of its distinct weights: what the order of
                    # classes cannot change.
                    heaviest[other] = max(before, w)
                    lightest[other] = min(lightest.get(other, before), w)
        if ranker.tag_boosts or (lightest and any(b < 0 for b in ranker.type_boosts.values())):
            return _valued_one_by_one(heaviest, lightest, ranker, details)
        return _values(heaviest, len(set(weights.values())) == 1, ranker, details)

    def _hub_edges(self, node_id: str) -> HubEdges:
        """The hub's edges by class and each neighbour's classes (``HubEdges``), kept under the
        graph's state (they do not depend on the reader: a hidden end is left out when valued)."""
        global _hub_edge_rows
        key = (self.state, node_id)
        with _lock:
            kept = _hub_edges.get(key)
            if kept is not None:
                _hub_edges.move_to_end(key)
                return kept
        # One list per class (``GraphReader.edge_lists``: the store's order, self-loops left out).
        by_class: dict[tuple[str, str], list[str]] = {
            (etype, direction): others
            for column, direction in (("src", "out"), ("dst", "in"))
            for etype, others in self.graph.edge_lists(node_id, column)
        }
        rows = sum(len(others) for others in by_class.values())
        # Each neighbour's edges of every class, as ``edges_around`` reads them (out, then in, each
        # by type): kept for the hub where it has few enough edges (a bigger one's neighbours'
        # edges are read when a walk takes them).
        grouped_only = rows > MAX_AROUND_PER_HUB
        around: dict[str, tuple[tuple[str, str], ...]] = {}
        if not grouped_only:
            for cls, others in by_class.items():
                one = (cls,)
                for other in others:
                    before_classes = around.get(other)
                    around[other] = one if before_classes is None else before_classes + one
        edges = HubEdges(by_class, rows)
        if self.graph.warm_state() != self.state:
            return edges  # the graph moved while this was read: nothing kept
        with _lock:
            if key not in _hub_edges:
                _hub_edges[key] = edges
                _hub_edge_rows += rows + 1
            while _hub_edge_rows > MAX_HUB_ROWS and len(_hub_edges) > 1:
                _, dropped = _hub_edges.popitem(last=False)
                _hub_edge_rows -= dropped.rows + 1
            if not grouped_only:
                _around[(self.state, self.graph.include_private, node_id)] = around  # type: ignore[assignment]
                while len(_around) > MAX_HUBS_MET:
                    _around.popitem(last=False)
        return edges

    def _scan_table(
        self, key: Hashable, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> Scanned | None:
        global _scan_rows
        table = self.graph.scan_table(node_id, weights, ranker, limit)
        if table is None or self.graph.warm_state() != self.state:
            return None
        scanned = Scanned(table, frozenset(row[0] for row in table.small))
        with _lock:
            if key not in _scans:
                _scans[key] = scanned
                _scan_rows += len(table.small) + 1
            while _scan_rows > MAX_SCAN_ROWS and len(_scans) > 1:
                _, dropped = _scans.popitem(last=False)
                _scan_rows -= dropped.rows
            return _scans.get(key, scanned)

    def edge_classes(self, node_id: str) -> list[tuple[str, str]]:
        """``GraphReader.edge_classes`` of a hub, kept."""
        key = (self.state, node_id)
        with _lock:
            kept = _classes.get(key)
        if kept is None:
            kept = self.graph.edge_classes(node_id)
            if self.graph.warm_state() == self.state:
                with _lock:
                    _classes[key] = kept
                    while len(_classes) > MAX_HUBS_MET:
                        _classes.popitem(last=False)
        return kept

    def edges_around(
        self, node_id: str, classes: dict[tuple[str, str], float], others: list[str], degree: int
    ) -> list[tuple[str, str, str]]:
        """``GraphReader.edges_around`` of a hub: each neighbour's edges of every class the hub has,
        kept, then cut to ``classes`` (the lens's at this hop)."""
        key = (self.state, self.graph.include_private, node_id)
        with _lock:  # copied out: another thread may clear the hub's dict once it is full
            kept = _around.get(key, {})
            found = {v: kept[v] for v in others if v in kept}
        missing = [v for v in others if v not in found]
        if missing:
            read: dict[str, list[tuple[str, str]]] = {v: [] for v in missing}
            for other, etype, direction in self.graph.edges_around(
                node_id, self.edge_classes(node_id), missing, degree
            ):
                read[other].append((etype, direction))
            found.update(read)
            if self.graph.warm_state() == self.state:
                with _lock:
                    kept = _around.setdefault(key, {})
                    if len(kept) > MAX_AROUND_PER_HUB:
                        kept.clear()
                    kept.update(read)
                    while len(_around) > MAX_HUBS_MET:
                        _around.popitem(last=False)
        return [(v, etype, direction) for v in others for etype, direction in found[v] if (etype, direction) in classes]


@dataclass
class HubEdges:
    """A hub's edges as a warm process keeps them for ranking: the neighbours of each (type,
    direction) class in the store's order, self-loops left out (``rows``: how many)."""

    by_class: dict[tuple[str, str], list[str]]
    rows: int


@dataclass
class Scanned:
    """A hub the store ranks newest first, as a warm process keeps it: the store's table (the
    small classes ranked, the big class's size and hidden neighbours), the ids of the small
    classes' neighbours, the big class's visible neighbours read so far newest first with their
    value (``done`` once every dated one is read), and which held nodes are the big class's."""

    table: ScanTable
    small_ids: frozenset[str]
    newest: list[tuple[float, Neighbour]] = field(default_factory=list)
    done: bool = False
    member: dict[str, bool] = field(default_factory=dict)
    # The big class's neighbours, once walks asked about enough nodes (``_read_big_ids``).
    big_ids: frozenset[str] | None = None

    @property
    def rows(self) -> int:
        """What it counts toward ``MAX_SCAN_ROWS``."""
        return len(self.table.small) + len(self.newest) + len(self.big_ids or ()) + 1


def _value(ranker: NeighbourOrder, weight: float, ntype: str, tags: str | None, updated: float | None) -> float:
    """A hub neighbour's pre-score as the store values it (``GraphReader.best_neighbours``)."""
    from ctx.assemble.score import recency

    r = recency(updated, ranker.reference, ranker.half_life)
    return ranker.boost(ntype, tags) * (weight + ranker.recency_share * r)


_TYPE = attrgetter("type")
_UPDATED = attrgetter("updated")


def _values(
    heaviest: dict[str, float], one_weight: bool, ranker: NeighbourOrder, details: NodeDetails
) -> Ranked:
    """``HubNeighbours._valued`` for a ranker without tag boosts or a boost below 0 (each
    neighbour valued at its heaviest edge), a list at a time: the neighbours' details, types and
    dates taken at C speed, and ``boost * (weight + share * recency)`` as numpy arrays, whose
    elementwise sums, products and quotients are the very doubles Python's scalar ones are (one
    rounding each, in the same order); each recency's power is C's ``pow`` called by ``map``, as
    ``score.recency`` calls it. Sorted by value down, then id: a stable sort of the values over
    the ids sorted first. At 100k nodes the one-by-one loop cost ~1 us a neighbour at a hub's first
    meeting (a note hub of 11,000 backlinks: ~13 ms)."""
    import numpy as np

    keys = list(heaviest)
    keys.sort()  # most hubs' lists come in id order already (the edge index's): one pass
    known = details.known
    infos = list(map(known.get, keys))
    # ``all``: a NodeInfo is always true, None false (``None in`` would call each one's __eq__).
    hidden = not all(infos)
    if hidden:
        seen = [(k, i) for k, i in zip(keys, infos) if i is not None]
        keys = [k for k, _ in seen]
        infos = [i for _, i in seen]
    n = len(keys)
    if not n:
        return [], [], {}
    types = list(map(_TYPE, infos))
    boost_of = {t: ranker.boost(t, None) for t in set(types)}
    boost = np.fromiter(map(boost_of.__getitem__, types), float, n)
    at = heaviest[keys[0]] if one_weight else np.fromiter(map(heaviest.__getitem__, keys), float, n)
    reference, share, half_life = ranker.reference, ranker.recency_share, ranker.half_life
    if reference is None or not share:  # the store's SQL: recency 0.0
        value = boost * (at + share * np.zeros(n))
    else:
        dates = np.array(list(map(_UPDATED, infos)), dtype=float)  # an undated node's: NaN
        undated = np.isnan(dates)
        exponent = (np.maximum(0.0, reference - dates) / 86400.0) / half_life
        recent = np.fromiter(map(pow, _HALVES, exponent.tolist()), float, n)
        if undated.any():
            recent[undated] = 0.0
        value = boost * (at + share * recent)
    order = np.argsort(-value, kind="stable").tolist()
    ids = [keys[i] for i in order]
    weight_of = {other: heaviest[other] for other in keys} if hidden else heaviest
    return ids, [infos[i] for i in order], weight_of


_HALVES = repeat(0.5)


def _valued_one_by_one(
    heaviest: dict[str, float], lightest: dict[str, float], ranker: NeighbourOrder, details: NodeDetails
) -> Ranked:
    """``HubNeighbours._valued``, one neighbour at a time (any ranker)."""
    from math import pow as _pow

    known = details.known
    reference, share, half_life = ranker.reference, ranker.recency_share, ranker.half_life
    timeless = reference is None or not share  # the store's SQL: recency 0.0
    # A boost depends on the type alone unless the lens boosts tags (then on both).
    by_type = not ranker.tag_boosts
    boosts: dict[object, float] = {}
    valued: list[tuple[float, str, NodeInfo]] = []
    append = valued.append
    hidden = False
    for other, w in heaviest.items():
        info = known.get(other)
        if info is None:
            hidden = True
            continue  # hidden, or no node
        ntype = info.type
        boost = boosts.get(ntype if by_type else (ntype, info.tags))
        if boost is None:
            boost = boosts[ntype if by_type else (ntype, info.tags)] = ranker.boost(ntype, info.tags)
        # The store's MAX over the edges' values: at the heaviest edge, or the lightest below 0.
        at = w if boost >= 0 else lightest.get(other, w)
        updated = info.updated
        if timeless or updated is None:
            rec = 0.0
        else:  # ``score.recency``, the same operations (and the store's SQL): the same double
            rec = _pow(0.5, (max(0.0, reference - updated) / 86400.0) / half_life)  # type: ignore[operator]
        # Negated, so that a plain sort orders by value down, then id (ids are distinct).
        append((-(boost * (at + share * rec)), other, info))
    valued.sort()
    ids = [other for _, other, _ in valued]
    weight_of = {other: heaviest[other] for other in ids} if hidden else heaviest
    return ids, [info for _, _, info in valued], weight_of


def _keep_hub(key: Hashable, kept: Ranked) -> None:
    global _hub_rows
    with _lock:
        if key not in _hubs:
            _hubs[key] = kept
            _hub_rows += len(kept[0])
        while _hub_rows > MAX_HUB_ROWS and len(_hubs) > 1:
            _, (dropped, _, _) = _hubs.popitem(last=False)
            _hub_rows -= len(dropped)


def _stale(reached: dict[str, Reached], weight_of: dict[str, float], base: float) -> set[str]:
    """The hub's neighbours the walk holds no dearer than a step from the hub (at ``base``): not
    fresh, as the store's ranking leaves out those its table of reached nodes holds. The nodes both
    hold are found in C (a set operation over the smaller side) and only they are tested: at 100k
    nodes a depth-3 walk holds ~3,000 nodes and at most ~140 of a hub's neighbours."""
    return {v for v in reached.keys() & weight_of.keys() if not base + 1.0 / weight_of[v] < reached[v].cost - 1e-12}


def hub_neighbours(graph: GraphReader) -> HubNeighbours | None:
    """The kept hub lists for a walk on ``graph``, or None (not warm, or the engine cannot say when
    its graph changed)."""
    if not _enabled:
        return None
    state = graph.warm_state()
    return None if state is None else HubNeighbours(graph, state)


class NodeEdges:
    """A walk's view of what a warm process keeps of ordinary nodes: their edges (what
    ``GraphReader.walk_edges`` reads: the edge and the node at its other end), grouped as the walk
    takes them (by type, the nodes at the other end in a dict: a walk offers them in a few dict
    operations rather than row by row), and their degrees.
    Neither depends on the topic or the lens, so walks of different topics, and of one topic at
    another depth, share them; kept under the graph's state (and the reader's visibility for the
    rows), so any write makes the next walk read afresh."""

    def __init__(self, graph: GraphReader, state: Hashable) -> None:
        self.graph = graph
        self.state = state

    def degrees(self, ids: list[str], column: str, at_most: int | None = None) -> dict[str, int]:
        """``GraphReader.degrees``, from what is kept where it can."""
        out: dict[str, int] = {}
        missing: list[str] = []
        with _lock:
            for node_id in ids:
                n = _degrees.get((self.state, column, at_most, node_id))
                if n is None:
                    missing.append(node_id)
                elif n:
                    out[node_id] = n
        if missing:
            read = self.graph.degrees(missing, column, at_most)
            out.update(read)
            if self.graph.warm_state() == self.state:
                with _lock:
                    for node_id in missing:
                        _degrees[(self.state, column, at_most, node_id)] = read.get(node_id, 0)
                    while len(_degrees) > MAX_DEGREES:
                        _degrees.popitem(last=False)
        return out

    def walk_classes(self, ids: list[str], column: str) -> dict[str, EdgeClasses]:
        """``GraphReader.walk_edges`` grouped as the walk takes them (``traverse.edge_classes_of``),
        from what is kept where it can."""
        from ctx.assemble.edge_groups import edge_classes_known

        global _edge_rows
        private = self.graph.include_private
        out: dict[str, EdgeClasses] = {}
        missing: list[str] = []
        with _lock:
            for node_id in ids:
                kept = _edges.get((self.state, private, column, node_id))
                if kept is None:
                    missing.append(node_id)
                else:
                    _edges.move_to_end((self.state, private, column, node_id))
                    if kept:  # as read: a node without edges is absent
                        out[node_id] = kept
        if not missing:
            return out
        # The edges alone, and the other ends' details from what is kept (``NodeDetails``): the
        # same groups as ``edge_classes_of(walk_edges(...))``.
        ends = self.graph.edge_ends(missing, column)
        far = 1 if column == "src" else 0
        details = _node_details(self.graph, self.state).of(self.graph, {row[far] for row in ends})
        read = edge_classes_known(ends, column, details)
        out.update(read)
        if self.graph.warm_state() != self.state:
            return out  # the graph moved while this was read
        with _lock:
            for node_id in missing:
                key = (self.state, private, column, node_id)
                if key not in _edges:
                    kept = _edges[key] = read.get(node_id, [])
                    _edge_rows += sum(len(others) for _, others in kept) + 1
            while _edge_rows > MAX_EDGE_ROWS and _edges:
                _, dropped = _edges.popitem(last=False)
                _edge_rows -= sum(len(others) for _, others in dropped) + 1
        return out


class NodeDetails:
    """What the walk reads of nodes (``GraphReader.walk_details``: type, tags, updated, title), kept
    by a warm process under the graph's state and the reader's visibility, so that the edges of
    the nodes a walk expands are read without the other end's row (``GraphReader.edge_ends``, an
    index-only read: at 100k nodes, the join with ``nodes`` was ~10 of the 16 ms a new topic's
    walk at depth 3 spent reading ~3,000 edge rows). ``complete``: every visible node is here (read
    at once, ``preload``), so an id absent names no visible node; else nodes are read as walks
    meet them and absent ones remembered as None."""

    def __init__(self, state: Hashable, known: dict[str, NodeInfo | None], complete: bool) -> None:
        self.state = state
        self.known = known
        self.complete = complete

    def of(self, graph: GraphReader, ids: set[str]) -> Mapping[str, NodeInfo | None]:
        """The details of the visible nodes among ``ids`` (read from the store where not kept); an
        id without a visible node is absent or None. Complete, every node's at once: that dict is
        never changed once kept."""
        known = self.known
        if self.complete:
            return known
        with _lock:
            found = {v: known[v] for v in ids if v in known}
        missing = [v for v in ids if v not in found]
        if missing:
            read = _infos(graph.walk_details(missing))
            found.update((v, read.get(v)) for v in missing)
            if graph.warm_state() != self.state:
                return found  # the graph moved: nothing kept
            with _lock:
                if len(known) + len(missing) > MAX_DETAILS:
                    known.clear()
                known.update((v, read.get(v)) for v in missing)
        return found


def _infos(rows: list[WalkDetail]) -> dict[str, NodeInfo]:
    """Rows of ``walk_details`` as the walk's NodeInfo (types and tags shared, not one string a node)."""
    from ctx.assemble.bound import NodeInfo

    intern = sys.intern
    return {
        node_id: NodeInfo(intern(ntype), intern(tags) if tags is not None else None, updated, title)
        for node_id, ntype, tags, updated, title in rows
    }


def _node_details(graph: GraphReader, state: Hashable) -> NodeDetails:
    """The kept node details for ``graph`` under ``state`` (an empty lazily filled one at first)."""
    key = (state, graph.include_private)
    with _lock:
        details = _details.get(key)
        if details is None:
            details = _details[key] = NodeDetails(state, {}, False)
            while len(_details) > 2:
                _details.popitem(last=False)
        return details


def preload(graph: GraphReader) -> bool:
    """Read every visible node's walk details at once (a warm process, before its first builds),
    where the graph has at most ``MAX_DETAILS`` nodes; whether they were read and kept."""
    state = graph.warm_state() if _enabled else None
    if state is None or graph.node_count() > MAX_DETAILS:
        return False
    details = NodeDetails(state, dict(_infos(graph.walk_details(None))), True)
    if graph.warm_state() != state:
        return False  # the graph moved while this was read
    with _lock:
        _details[(state, graph.include_private)] = details
        while len(_details) > 2:
            _details.popitem(last=False)
    return True


def visible_nodes(graph: GraphReader) -> Container[str] | None:
    """The ids of every node ``graph``'s reader may see, where this process holds them all under
    the graph's state (``preload``), else None. A passage search told them reads its hits' nodes
    without the nodes' rows (``GraphReader.search_passages``)."""
    state = graph.warm_state() if _enabled else None
    if state is None:
        return None
    with _lock:
        details = _details.get((state, graph.include_private))
    return details.known if details is not None and details.complete else None


def bound_facts(graph: GraphReader, lens: Lens, reference: float | None) -> dict[str, tuple[float, float]] | None:
    """Each walked node's boost and recency as ``ScoreBound`` computes them (from what the walk
    reads of the node, the lens's boosts, the graph's reference time and the lens's half-life):
    kept between builds under the graph's state, so a walk through nodes an earlier one met does
    not compute them again (a few thousand per build at depth 3 of 100k nodes). None when not warm."""
    state = graph.warm_state() if _enabled else None
    if state is None:
        return None
    key = (state, repr(lens.boosts), reference, lens.scoring.recency_half_life_days)
    with _lock:
        known = _bound_facts.get(key)
        if known is None:
            known = _bound_facts[key] = {}
            while len(_bound_facts) > 4:
                _bound_facts.popitem(last=False)
        elif len(known) > MAX_BOUND_FACTS:
            known.clear()
        else:
            _bound_facts.move_to_end(key)
    return known


# The cyclic garbage collector in a warm process (``settle``): a young collection once this many
# container objects were allocated (Python's default: 700), a full one after this many young
# ones of the second generation (default 10; each ~10 of the first). Since what each call leaves
# is frozen once it is answered (``after_call``), a young collection during a
# call sees only that call's objects: a new 100k note at depth 3 grows by ~15,000, so at 10,000
# most ran one or two (~1.4 ms each) that ``after_call`` then did again; at 50,000 few run one.
COLLECT_YOUNG_AFTER = 50_000
COLLECT_FULL_AFTER = 100
# A settled process collects every object once per this many calls (``after_call``: between two,
# only what a failed call made): garbage with cycles an answered call made, and cycles made among
# frozen objects, are found then.
FULL_COLLECT_CALLS = 1000
_settled = False
_calls_since_full = 0
_gc_lock = threading.Lock()


# The interpreter's switch interval while a warm process warms up (Python's default: 5 ms).
WARMING_SWITCH_INTERVAL = 0.0005


@contextmanager
def warming() -> Iterator[None]:
    """While a warm process warms up beside its first calls (the MCP server reads every node's
    details, ~0.5 s of CPU at 100k nodes), then ``settle``. A call then shares the interpreter
    with that reading: each time it lets go of it (every SQLite step) it waited up to the 5 ms
    switch interval to get it back, and a full collection of the objects the reading makes held
    it for ~100 ms, so a repeated request answered in 3 ms took 10-25 ms, and 100-190 ms in most
    server starts (the bench's p95, 100k nodes, load ~5). Meanwhile the interval is 0.5 ms and the
    collector off (what it would collect, ``settle`` freezes anyway): the worst p95 of the
    bench's repeated requests at 100k nodes, six server starts each at load ~5, 32-144 -> 21-44 ms."""
    import gc

    interval = sys.getswitchinterval()
    collecting = gc.isenabled()
    sys.setswitchinterval(WARMING_SWITCH_INTERVAL)
    gc.disable()
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        settle()
        if collecting:
            gc.enable()


def settle() -> None:
    """Tune the garbage collector for a long-lived process whose caches hold 100,000s of objects
    (at 100k nodes ~300,000 tracked after a few dozen builds): what it holds after warming up
    (modules, every node's details) is frozen out of collections, young collections run less
    often, and full ones far less often. With Python's defaults, 20 new topics at depth 3 ran 4-6
    full collections of ~140-240 ms each: ~35 ms a call, and the calls that ran one in their p95.
    Garbage with cycles is still collected, later."""
    import gc

    global _settled
    gc.freeze()
    gc.set_threshold(COLLECT_YOUNG_AFTER, 10, COLLECT_FULL_AFTER)
    _settled = True


def after_call(*, failed: bool = False) -> None:
    """Once a call of a settled process is answered: freeze what it made and kept (walks, pools,
    hub lists, edges) out of later collections, as ``settle`` froze the warm-up's. The
    collector's second generation held those kept objects until it ran, every ten young
    collections: at 100k nodes it found nothing to free in them (0 of 549,000 objects after 160
    calls) and took 31-46 ms each time, one new depth-3 note in seven.

    A call that answered is not collected first: over bench_scale's 212-call sequence at 100k a
    collection of each call's objects freed nothing, and cost 0.05-1.8 ms a call (it traverses
    every object the call kept, ~16,000 for a new depth-3 note) that a back-to-back client waits
    for. A call that failed is (``failed``): a caught exception's traceback holds frames in a
    cycle. Garbage with a cycle that an answered call makes anyway is found by the whole
    collection every ``FULL_COLLECT_CALLS`` calls, as is a cycle made among frozen objects (a
    cache let go of what it kept); frozen objects are still freed by reference counting; what is
    kept holds no cycles (tested)."""
    global _calls_since_full
    if not _settled:
        return
    import gc

    with _gc_lock:
        _calls_since_full += 1
        if _calls_since_full >= FULL_COLLECT_CALLS:
            _calls_since_full = 0
            gc.unfreeze()
            gc.collect()
        elif failed:
            gc.collect(1)  # the objects since the last call: every older one is frozen
        gc.freeze()


def node_edges(graph: GraphReader) -> NodeEdges | None:
    """The kept edges and degrees of nodes for a walk on ``graph``, or None (not warm, or the engine
    cannot say when its graph changed)."""
    if not _enabled:
        return None
    state = graph.warm_state()
    return None if state is None else NodeEdges(graph, state)


def node_facts(graph: GraphReader, ids: list[str], *, with_fields: bool) -> list[NodeFacts]:
    """``GraphReader.node_facts`` (sorted by id), from what a warm process keeps where it can: a
    node's facts do not depend on the topic. Kept under the graph's state; never changed by a build
    (a candidate copies what it takes: its ``fields`` are made anew, its tags only read)."""
    state = graph.warm_state() if _enabled else None
    if state is None:
        return graph.node_facts(ids, with_fields=with_fields)
    out: list[NodeFacts] = []
    missing: list[str] = []
    with _lock:
        for node_id in ids:
            kept = _facts.get((state, with_fields, node_id))
            if kept is None:
                missing.append(node_id)
            else:
                out.append(kept)
    if missing:
        read = graph.node_facts(missing, with_fields=with_fields)
        out += read
        if graph.warm_state() == state:
            with _lock:
                for facts in read:
                    _facts[(state, with_fields, facts.id)] = facts
                while len(_facts) > MAX_FACTS:
                    _facts.popitem(last=False)
    out.sort(key=lambda facts: facts.id)
    return out


def passages_of(graph: GraphReader, node_ids: list[str]) -> dict[str, list[StoredPassage]]:
    """``GraphReader.passages_of``, from what a warm process keeps where it can: a node's passages
    do not depend on the topic, and a build reads them twice (the candidates' pieces, then the
    manifest of what it shows). Kept under the graph's state; the same dict, in the store's order
    (each run of 500 ids by id). Callers only read the lists."""
    state = graph.warm_state() if _enabled else None
    if state is None:
        return graph.passages_of(node_ids)
    ids = list(dict.fromkeys(node_ids))
    found: dict[str, list[StoredPassage]] = {}
    missing: list[str] = []
    with _lock:
        for node_id in ids:
            kept = _passages.get((state, node_id))
            if kept is None:
                missing.append(node_id)
            else:
                _passages.move_to_end((state, node_id))
                found[node_id] = kept
    if missing:
        read = graph.passages_of(missing)
        found.update((node_id, read.get(node_id, [])) for node_id in missing)
        if graph.warm_state() == state:
            with _lock:
                for node_id in missing:
                    _passages[(state, node_id)] = found[node_id]
                while len(_passages) > MAX_PASSAGE_NODES:
                    _passages.popitem(last=False)
    return {
        node_id: found[node_id]
        for start in range(0, len(ids), 500)
        for node_id in sorted(ids[start : start + 500])
        if found[node_id]
    }


def notes_matching(graph: GraphReader, word: str, *, at_most: int) -> int:
    """``GraphReader.notes_matching``, from what a warm process keeps where it can: how many notes
    hold a word does not depend on the question. A new question counts the names in its first
    seeds' text (``relevance.feedback_query``, ~17 at 100k nodes, most of them in more than the
    500 notes counted: ~55 us each), and the same names ("New", "Data", "Return") come back in
    the seeds of question after question. Kept under the graph's state and the reader's
    visibility."""
    state = graph.warm_state() if _enabled else None
    if state is None:
        return graph.notes_matching(word, at_most=at_most)
    key = (state, graph.include_private, word, at_most)
    with _lock:
        found = _match_counts.get(key)
        if found is not None:
            _match_counts.move_to_end(key)
            return found
    found = graph.notes_matching(word, at_most=at_most)
    if graph.warm_state() == state:
        with _lock:
            _match_counts[key] = found
            while len(_match_counts) > MAX_MATCH_COUNTS:
                _match_counts.popitem(last=False)
    return found
