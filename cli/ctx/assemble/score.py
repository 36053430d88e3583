"""Score: rank candidates by graph distance, similarity and recency, times the lens's boosts.

    score = boost * (w_d * 1/distance + w_s * similarity + w_r * recency [+ w_f * relevance])

with seed 003's weights 0.4 / 0.35 / 0.25, or the lens's fallback (0.6 / 0.4) when there is no
similarity. The relevance term (fused search rank, ``semantic.rank: fused``) counts only when the
lens gives it a weight. ``distance`` is the weighted walk distance (a hop over an edge of weight w counts 1/w),
so a 1-hop node always beats an otherwise identical 2-hop node. Seeds rank first whatever their
score. Recency halves every ``recency_half_life_days`` before the graph's reference time (its newest
update), so scores depend on the graph state only, never on the clock. Ties break by id.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ctx.assemble.candidate import Candidate
from ctx.lenses import Lens, Section, Selector

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ctx.assemble.bound import NodeInfo
    from ctx.lenses.model import Boosts

SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class Weights:
    distance: float
    similarity: float
    recency: float
    relevance: float = 0.0


def weights_for(lens: Lens, has_similarity: bool) -> Weights:
    s = lens.scoring
    if has_similarity:
        return Weights(s.distance, s.similarity, s.recency, s.relevance)
    return Weights(s.fallback_distance, 0.0, s.fallback_recency, s.relevance)


def recency(updated: float | None, reference: float | None, half_life_days: float) -> float:
    if updated is None or reference is None:
        return 0.0
    age_days = max(0.0, reference - updated) / SECONDS_PER_DAY
    return math.pow(0.5, age_days / half_life_days)


def boost(c: Candidate, lens: Lens) -> float:
    return named_boost(lens.boosts, c.type, c.tags, c.title, c.fields)


def named_boost(b: Boosts, type_: str, tags: Iterable[str], title: str, fields: Iterable[str] = ()) -> float:
    """The lens's multipliers that apply to a node of this type, tags, title and field names.

    Tags are taken in sorted order so the product is the same float whatever the hash seed.
    """
    factor = b.types.get(type_.lower(), 1.0) if b.types else 1.0
    if b.tags:
        for tag in sorted({str(t).lower() for t in tags}):
            factor *= b.tags.get(tag, 1.0)
    if b.fields:
        names = {n.lower() for n in fields}
        for name, f in b.fields.items():
            if name in names:
                factor *= f
    if b.keywords:
        lowered = title.lower()
        for word, f in b.keywords.items():
            if word in lowered:
                factor *= f
    return factor


def score_candidates(
    candidates: list[Candidate],
    lens: Lens,
    similarity: dict[str, float] | None,
    reference_time: float | None,
) -> list[Candidate]:
    """Fill ``parts``, ``score`` and ``rank``; return the candidates best first."""
    w = weights_for(lens, similarity is not None)
    half_life = lens.scoring.recency_half_life_days
    w_distance, w_similarity, w_recency, w_relevance = w.distance, w.similarity, w.recency, w.relevance
    b = lens.boosts
    # Without tag, field or keyword boosts a candidate's boost is its type's: one per type. And a
    # pool's distance terms and boosts take a few values: each rounded once (a positive float
    # only; a zero's sign is its own). A new 100k note's depth-3 build scores ~550 candidates.
    by_type: dict[str, float] | None = None if b.tags or b.fields or b.keywords else {}
    rounded: dict[float, float] = {}
    for c in candidates:
        # A seed is as close to the topic as its match: 1 for an id or title, a search hit's
        # share of the best hit's score otherwise (so search-driven lenses rank sources by it).
        distance_term = c.relevance if c.seed else (1.0 / c.cost if c.cost > 0 else 1.0)
        if c.semantic or c.recent:
            distance_term = 0.0  # not reached by the walk at all
        sim = similarity.get(c.id, 0.0) if similarity is not None else 0.0
        rec = recency(c.updated, reference_time, half_life)
        if by_type is None:
            factor = boost(c, lens)
        else:
            factor = by_type.get(c.type)  # type: ignore[assignment]
            if factor is None:
                factor = by_type[c.type] = boost(c, lens)
        c.parts = {
            "distance": _rounded(distance_term, rounded),
            "similarity": round(sim, 6),
            "recency": round(rec, 6),
            "boost": _rounded(factor, rounded),
        }
        total = w_distance * distance_term + w_similarity * sim + w_recency * rec
        if w_relevance:
            c.parts["relevance"] = round(c.search, 6)
            total += w_relevance * c.search
        c.score = round(factor * total, 6)
    ranked = sorted(candidates, key=lambda c: (not c.seed, -c.score, c.cost, c.id))
    for i, c in enumerate(ranked, start=1):
        c.rank = i
    return ranked


def _rounded(value: float, known: dict[float, float]) -> float:
    """``round(value, 6)``, kept in ``known`` for positive values (equal floats round alike;
    0.0 and -0.0 are equal keys but round to themselves)."""
    if value > 0:
        hit = known.get(value)
        if hit is None:
            hit = known[value] = round(value, 6)
        return hit
    return round(value, 6)


class NeighbourRanker:
    """A cheap pre-score for choosing which neighbours of a huge hub to keep (fan-out cap):

        boost(type, tags) * (rule weight + recency_share * recency)

    from what the walk read of each with its edge (``bound.NodeInfo``). The store computes the same
    value in SQL to fetch only a hub's best neighbours (``GraphReader.best_neighbours``)."""

    def __init__(self, lens: Lens | None, reference_time: float | None, recency_share: float = 0.5) -> None:
        self.type_boosts = dict(lens.boosts.types) if lens is not None else {}
        self.tag_boosts = dict(lens.boosts.tags) if lens is not None else {}
        self.reference = reference_time
        self.half_life = lens.scoring.recency_half_life_days if lens is not None else 1.0
        self.recency_share = recency_share if lens is not None else 0.0

    def boost(self, ntype: str, tags: str | None) -> float:
        factor = self.type_boosts.get(ntype.lower(), 1.0)
        if self.tag_boosts and tags:
            for t in {str(x).lower() for x in json.loads(tags)}:
                factor *= self.tag_boosts.get(t, 1.0)
        return factor

    def value(self, weight: float, node: NodeInfo | None) -> float:
        if node is None:
            return weight
        rec = recency(node.updated, self.reference, self.half_life) if self.recency_share else 0.0
        return self.boost(node.type, node.tags) * (weight + self.recency_share * rec)

    def __call__(self, options: list[tuple[str, float]], info: dict[str, NodeInfo]) -> list[str]:
        """The options' node ids, best first (ties by id)."""
        keyed = sorted((-self.value(weight, info.get(node_id)), node_id) for node_id, weight in options)
        return [node_id for _, node_id in keyed]


def neighbour_ranker(lens: Lens, reference_time: float | None) -> NeighbourRanker:
    return NeighbourRanker(lens, reference_time)


# ---------------------------------------------------------------------------------------------
# Sections: each candidate goes to the first section whose selector it matches.


def _edge_matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(p == name or fnmatch.fnmatchcase(name, p) for p in patterns)


def matches(selector: Selector, c: Candidate) -> bool:
    return _how_found_matches(selector, c) and _node_matches(selector, c) and _path_matches(selector, c)


def _how_found_matches(selector: Selector, c: Candidate) -> bool:
    """Seed, similar, recent, sibling: how the candidate came in."""
    if selector.seed is not None and selector.seed != c.seed:
        return False
    if selector.semantic is not None and selector.semantic != c.semantic:
        return False
    if selector.recent is not None and selector.recent != c.recent:
        return False
    return selector.siblings is None or (c.sibling_offset is not None and c.sibling_offset <= selector.siblings)


def _node_matches(selector: Selector, c: Candidate) -> bool:
    """Hops, type and tags: what the candidate is, and how far."""
    if selector.hops is not None and not (selector.hops[0] <= c.hops <= selector.hops[1]):
        return False
    if selector.types and c.type.lower() not in selector.types:
        return False
    return not selector.tags or bool({t.lower() for t in c.tags} & set(selector.tags))


def _path_matches(selector: Selector, c: Candidate) -> bool:
    """``via``: the first edge of its path; ``via_all``: every edge of it."""
    if not selector.via and not selector.via_all:
        return True  # (most selectors: the path's names are not made for them)
    names = c.path_names
    if selector.via and (not names or not _edge_matches(names[0], selector.via)):
        return False
    return not selector.via_all or (bool(names) and all(_edge_matches(n, selector.via_all) for n in names))


def _narrowing(select: Selector) -> Selector:
    """A "rest" selector's own conditions, as a selector of its own (frozen: the same for every
    build with that lens, made once; one built by hand with a list in a field is made each time)."""
    try:
        return _narrowed(select)
    except TypeError:  # unhashable
        return replace(select, rest=False)


@lru_cache(maxsize=64)
def _narrowed(select: Selector) -> Selector:
    return replace(select, rest=False)


def assign_sections(ranked: list[Candidate], sections: tuple[Section, ...]) -> None:
    specific = [s for s in sections if not s.select.rest]
    # A "rest" section's own selector still narrows it (made once, not once per candidate).
    rest = [(s, _narrowing(s.select)) for s in sections if s.select.rest]
    for c in ranked:
        c.section = None
        for s in specific:
            if matches(s.select, c):
                c.section = s.name
                break
        if c.section is None:
            for s, select in rest:
                if matches(select, c):
                    c.section = s.name
                    break
        if c.section is None:
            c.reason = "no section of the lens selects it"


# ---------------------------------------------------------------------------------------------
# Diversity (maximal marginal relevance, Carbonell & Goldstein 1998).

DIVERSITY_POOL = 100  # only the top of the ranking can reach a context; the rest keeps score order
_WORD = re.compile(r"[a-z0-9]{3,}")


def word_set(title: str, body: str) -> frozenset[str]:
    return frozenset(_WORD.findall(f"{title} {body}".lower()))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Cosine of two binary word vectors: 1 for the same words, 0 for none in common."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


def diversify(ranked: list[Candidate], diversity: float) -> list[Candidate]:
    """Re-rank the top of ``ranked`` greedily by ``(1 - d) * score / best score - d * redundancy``,
    where redundancy is the highest word overlap (title + text) with a node already placed above,
    seeds included. Seeds keep their places; ties keep the original order, so it is deterministic.

    Needs ``body`` loaded for the seeds and the top ``DIVERSITY_POOL`` others. Fills
    ``parts["redundancy"]`` and the new ``rank``; scores are unchanged.
    """
    seeds = [c for c in ranked if c.seed]
    rest = [c for c in ranked if not c.seed]
    pool, tail = rest[:DIVERSITY_POOL], rest[DIVERSITY_POOL:]
    if diversity <= 0 or len(pool) < 2:
        return ranked
    words = {c.id: word_set(c.title, c.body or "") for c in seeds + pool}
    top = max(c.score for c in pool)
    redundancy = {c.id: max((overlap(words[c.id], words[s.id]) for s in seeds), default=0.0) for c in pool}
    left = list(pool)
    placed: list[Candidate] = []
    while left:
        best = max(
            left,  # max keeps the first of equal gains: the better original rank
            key=lambda c: (1.0 - diversity) * (c.score / top if top > 0 else 0.0) - diversity * redundancy[c.id],
        )
        left.remove(best)
        placed.append(best)
        best.parts["redundancy"] = round(redundancy[best.id], 6)
        for c in left:
            redundancy[c.id] = max(redundancy[c.id], overlap(words[c.id], words[best.id]))
    reranked = seeds + placed + tail
    for i, c in enumerate(reranked, start=1):
        c.rank = i
    return reranked
