"""Score bounds: what a node can score at the least once reached, and at the most while unreached.

The walk uses them to stop early (``traverse.WalkLimit``): once the pool's worst candidate is sure
to beat anything the walk has not reached yet, walking further cannot change which nodes compete
for the context. Both bounds follow ``score.score_candidates`` term by term:

    score = boost * (w_d / cost + w_s * similarity + w_r * recency [+ w_f * relevance])

* at the least: the node's own boost, cost and recency (read with its edge row), its known search
  relevance, and similarity 0 (cosines are clipped to [0, 1]); a field boost the node may or may
  not earn counts at its smallest;
* at the most, for a node not reached yet: the largest boost the lens can give (every multiplier
  above 1 at once), the smallest cost still possible, similarity and recency 1, and the best search
  relevance of a node the walk has not reached.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from ctx.assemble.score import SECONDS_PER_DAY, Weights, named_boost, recency, weights_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from ctx.assemble.traverse import Reached
    from ctx.lenses import Lens

# Scores are rounded to 6 decimals and tie on cost then id: a bound must clear the rounding.
MARGIN = 2e-6
# From this many nodes their leasts are computed as arrays (``ScoreBound._leasts_at_once``).
AT_ONCE = 64

_FIRST = itemgetter(0)
_SECOND = itemgetter(1)
_COST = attrgetter("cost")
_TYPE = attrgetter("type")
_UPDATED = attrgetter("updated")


@dataclass(frozen=True, slots=True)
class NodeInfo:
    """What the walk reads of a node with the edge that reached it: enough to bound its score.
    Slotted: a warm process keeps one per visible node of a graph up to 250k nodes."""

    type: str
    tags: str | None  # the stored JSON list, decoded only when the lens boosts tags
    updated: float | None
    title: str


def _product_above_one(factors: dict[str, float]) -> float:
    out = 1.0
    for f in factors.values():
        if f > 1.0:
            out *= f
    return out


def _product_below_one(factors: dict[str, float]) -> float:
    out = 1.0
    for f in factors.values():
        if f < 1.0:
            out *= f
    return out


class ScoreBound:
    def __init__(
        self,
        lens: "Lens",
        has_similarity: bool,
        reference: float | None,
        search: dict[str, float] | None,
    ) -> None:
        self.lens = lens
        self.weights: Weights = weights_for(lens, has_similarity)
        self.has_similarity = has_similarity
        self.reference = reference
        self.half_life = lens.scoring.recency_half_life_days
        self.search = search or {}
        b = lens.boosts
        self.most_boost = (
            max([1.0, *b.types.values()]) * _product_above_one(b.tags) * _product_above_one(b.fields)
            * _product_above_one(b.keywords)
        )
        # A field boost depends on the node's fields, which the walk does not read: either extreme.
        self.field_floor = _product_below_one(b.fields)
        self.field_ceiling = _product_above_one(b.fields)
        self._best_search = sorted(self.search.items(), key=lambda kv: (-kv[1], kv[0]))
        # Per node, what its bounds read of its facts and never of its cost: the boost from type,
        # tags and title, and its recency. A walk asks for a node's bound at every hop and once more
        # when the pool is cut (thousands of nodes at depth 3 on a big graph): computed once.
        self._known: dict[str, tuple[float, float]] = {}
        # Without tag or keyword boosts a node's boost is its type's (fields are not read here):
        # one per type, not one ``named_boost`` per node (a new topic's walk meets ~3,000 new
        # nodes by depth 5 at 100k nodes).
        self._type_boost: dict[str, float] | None = None if b.tags or b.keywords else {}
        self._at_once = False  # a warm process's (``share``)

    def share(self, known: dict[str, tuple[float, float]]) -> None:
        """Take each node's boost and recency from (and add them to) ``known``: a warm process keeps
        them between builds of one lens under one graph state (``warm.bound_facts``), and bound many
        nodes at once as arrays (``_leasts_at_once``)."""
        self._known = known
        self._at_once = True

    def _facts(self, node_id: str, info: NodeInfo) -> tuple[float, float]:
        """The node's boost from what the walk read and its recency (``info`` is the node's own:
        the same for every route to it)."""
        known = self._known.get(node_id)
        if known is None:
            by_type = self._type_boost
            if by_type is None:
                boost = self._boost_known(info)
            else:
                boost = by_type.get(info.type)  # type: ignore[assignment]
                if boost is None:
                    boost = by_type[info.type] = self._boost_known(info)
            known = self._known[node_id] = (boost, recency(info.updated, self.reference, self.half_life))
        return known

    def _boost_known(self, info: NodeInfo) -> float:
        """The boost from what the walk read: type, tags and title (not fields)."""
        b = self.lens.boosts
        tags = json.loads(info.tags) if b.tags and info.tags else ()
        return named_boost(b, info.type, tags, info.title)

    def at_least(self, node_id: str, info: NodeInfo, cost: float) -> float:
        """The least a walked node at ``cost`` scores (it may score more: similarity, a field boost)."""
        return self.both(node_id, info, cost)[0]

    def at_most_for(self, node_id: str, info: NodeInfo, cost: float) -> float:
        """The most a walked node at ``cost`` can score, whatever its similarity and fields."""
        return self.both(node_id, info, cost)[1]

    def both(self, node_id: str, info: NodeInfo, cost: float) -> tuple[float, float]:
        """(the least, the most) a walked node at ``cost`` scores: ``at_least`` and ``at_most_for``
        at once."""
        w = self.weights
        boost, recent = self._facts(node_id, info)
        distance = 1.0 / cost if cost > 0 else 1.0
        base = w.distance * distance + w.recency * recent
        least = most = base
        if self.has_similarity:
            most += w.similarity
        if w.relevance:
            relevance = w.relevance * self.search.get(node_id, 0.0)
            least += relevance
            most += relevance
        return boost * self.field_floor * least, boost * self.field_ceiling * most

    def many(
        self, ids: list[str], info: dict[str, NodeInfo], reached: dict[str, Reached], *, most: bool = True
    ) -> tuple[list[float], list[float]]:
        """``both`` for each of ``ids`` (walked nodes, at the cost ``reached`` holds them at): the
        leasts, and the mosts (empty unless ``most``). The same floats, in one loop: a walk bounds
        thousands of nodes at every hop on a big graph."""
        w, known, search = self.weights, self._known, self.search
        w_distance, w_recency, w_relevance = w.distance, w.recency, w.relevance
        similarity = w.similarity if self.has_similarity else None
        floor, ceiling = self.field_floor, self.field_ceiling
        if not most:
            return self._leasts(ids, info, reached), []
        if similarity is None and floor == ceiling:
            # Nothing a walk does not read can raise a node's score (no similarity, no field
            # boost): its most is its least, the same float. One loop, half the work.
            same = self._leasts(ids, info, reached)
            return same, same
        leasts: list[float] = []
        mosts: list[float] = []
        for node_id in ids:
            facts = known.get(node_id)
            if facts is None:
                facts = self._facts(node_id, info[node_id])
            boost, recent = facts
            cost = reached[node_id].cost
            base = w_distance * (1.0 / cost if cost > 0 else 1.0) + w_recency * recent
            least = high = base
            if similarity is not None:
                high += similarity
            if w_relevance:
                relevance = w_relevance * search.get(node_id, 0.0)
                least += relevance
                high += relevance
            leasts.append(boost * floor * least)
            if most:
                mosts.append(boost * ceiling * high)
        return leasts, mosts

    def _leasts(self, ids: list[str], info: dict[str, NodeInfo], reached: dict[str, Reached]) -> list[float]:
        """``many``'s leasts alone, computed as it computes them (the same floats). Many at once
        (the walk's stop test and the pool's cut bound the ~2,700 nodes a depth-3 walk holds at
        100k nodes) as numpy arrays in a warm process (``_leasts_at_once``)."""
        # Only in a warm process (``share``; the MCP server loads numpy anyway): a one-shot build
        # does not load it, which would cost ~150 ms.
        if len(ids) >= AT_ONCE and self._at_once:
            return self._leasts_at_once(ids, info, reached)
        return self._leasts_one_by_one(ids, info, reached)

    def _leasts_at_once(self, ids: list[str], info: dict[str, NodeInfo], reached: dict[str, Reached]) -> list[float]:
        """``_leasts_one_by_one``'s floats: each node's facts and cost taken at C speed, and the
        same operations, in the same order, on numpy arrays, whose elementwise sums, products and
        quotients are the doubles Python's scalar ones are (one rounding each); ~1 us a node one
        by one."""
        import numpy as np

        w, known, search = self.weights, self._known, self.search
        n = len(ids)
        found = list(map(known.get, ids))
        if not all(found):  # a (boost, recency) pair is never empty: None is a node not met yet
            self._learn([v for v, f in zip(ids, found) if f is None], info)
        facts: list[Any] = list(map(known.__getitem__, ids))
        boost = np.fromiter(map(_FIRST, facts), np.float64, n)
        recent = np.fromiter(map(_SECOND, facts), np.float64, n)
        cost = np.fromiter(map(_COST, map(reached.__getitem__, ids)), np.float64, n)
        distance = np.ones(n)
        np.divide(1.0, cost, out=distance, where=cost > 0)
        least = distance * w.distance + recent * w.recency
        if w.relevance:
            least = least + np.fromiter(map(search.get, ids, repeat(0.0)), np.float64, n) * w.relevance
        return ((boost * self.field_floor) * least).tolist()

    def _learn(self, ids: list[str], info: dict[str, NodeInfo]) -> None:
        """``_facts`` of ``ids`` (nodes not met yet), many at once where a boost is a type's: the
        recency's quotients as numpy arrays (one rounding each, as Python's) and its power as C's
        ``pow``, called by ``map`` as ``score.recency`` calls it; ~1 us a node one by one (a new
        topic's walk meets ~1,000 new nodes by depth 3 at 100k nodes)."""
        import numpy as np

        by_type = self._type_boost
        if by_type is None or self.reference is None or len(ids) < AT_ONCE:
            for node_id in ids:
                self._facts(node_id, info[node_id])
            return
        infos = [info[v] for v in ids]
        for one in infos:
            if one.type not in by_type:
                by_type[one.type] = self._boost_known(one)
        boosts = list(map(by_type.__getitem__, map(_TYPE, infos)))
        dates = np.array(list(map(_UPDATED, infos)), dtype=float)  # an undated node's: NaN
        exponent = (np.maximum(0.0, self.reference - dates) / SECONDS_PER_DAY) / self.half_life
        recent = list(map(pow, repeat(0.5), exponent.tolist()))
        undated = np.isnan(dates)
        if undated.any():
            for i in np.flatnonzero(undated).tolist():
                recent[i] = 0.0
        self._known.update(zip(ids, zip(boosts, recent)))

    def _leasts_one_by_one(self, ids: list[str], info: dict[str, NodeInfo], reached: dict[str, Reached]) -> list[float]:
        """``many``'s leasts alone, one node at a time."""
        w, known, search = self.weights, self._known, self.search
        w_distance, w_recency, w_relevance = w.distance, w.recency, w.relevance
        floor = self.field_floor
        leasts: list[float] = []
        append = leasts.append
        for node_id in ids:
            facts = known.get(node_id)
            if facts is None:
                facts = self._facts(node_id, info[node_id])
            cost = reached[node_id].cost
            least = w_distance * (1.0 / cost if cost > 0 else 1.0) + w_recency * facts[1]
            if w_relevance:
                least += w_relevance * search.get(node_id, 0.0)
            append(facts[0] * floor * least)
        return leasts

    def at_most(self, cost: float, relevance: float) -> float:
        """The most a node can score when reached at ``cost`` or more, with search relevance at
        most ``relevance``: a node the walk has not reached, or one a cheaper route may still improve."""
        w = self.weights
        total = w.distance * (1.0 / cost if cost > 0 else 1.0) + w.recency
        if self.has_similarity:
            total += w.similarity
        if w.relevance:
            total += w.relevance * relevance
        return self.most_boost * total

    def best_relevance_outside(self, final: "Callable[[str], bool]") -> float:
        """The best search relevance of a node whose score is not final yet (``final`` says which are)."""
        if not self.weights.relevance:
            return 0.0
        return next((s for i, s in self._best_search if not final(i)), 0.0)
