"""The candidate pool: as many candidates as a context of this budget can use, and no more.

Whatever reaches the output — a node's text, an "also related" line, an omitted entry in JSON —
costs at least ``TOKENS_PER_CANDIDATE`` tokens, so a budget of N tokens can show at most about
N / 8 candidates besides the seeds; the build keeps the ``pool_size`` best (seeds always) and
the walk (``traverse.WalkLimit``) goes only as far as finding them needs. Nodes left out of the
pool are counted (``Pool``) and said: in JSON ``meta.pool`` and under ``--explain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx.assemble.bound import MARGIN, ScoreBound
from ctx.assemble.traverse import Walk, WalkLimit

if TYPE_CHECKING:
    from ctx.assemble.candidate import Candidate

MIN_POOL = 200
TOKENS_PER_CANDIDATE = 8
# Without a proof the walk stops once it holds this many pools' worth of nodes (at least
# MIN_REACHED), and a hop expands at most half a pool of frontier nodes (at least MIN_EXPAND),
# each bringing at most the lens's fan-out.
REACH_PER_POOL = 4
MIN_REACHED = 2000
MIN_EXPAND = 250


def pool_size(budget: int) -> int:
    return max(MIN_POOL, budget // TOKENS_PER_CANDIDATE)


def walk_limit(budget: int, bound: ScoreBound | None) -> WalkLimit:
    pool = pool_size(budget)
    return WalkLimit(
        pool=pool, bound=bound, max_reached=max(MIN_REACHED, REACH_PER_POOL * pool),
        max_expand=max(MIN_EXPAND, pool // 2),
    )


@dataclass
class Pool:
    """What the pool left out: ``beyond`` nodes reached but sure not to make the pool (dropped
    before their details were read), ``cut`` candidates ranked below it."""

    size: int
    beyond: set[str]
    cut: int = 0

    @property
    def left_out(self) -> int:
        return len(self.beyond) + self.cut


def drop_hopeless(walked: Walk, bound: ScoreBound, pool: int, keep: set[str]) -> set[str]:
    """Remove from ``walked`` the walked nodes that cannot be among the ``pool`` best whatever
    their similarity (what they can score at the most is below what ``pool`` others score at the
    least); return their ids. Seeds, ``keep`` and nodes added by lens options stay."""
    reached, info = walked.reached, walked.info
    walked_ids = [i for i, r in reached.items() if not r.seed and i in info and i not in keep and r.path]
    if len(walked_ids) <= pool:
        return set()
    leasts, mosts = _bounds(walked, walked_ids, bound)
    # The pool-th largest least (``heapq.nlargest`` loops in Python over thousands at depth 3).
    worst_kept = sorted(leasts, reverse=True)[pool - 1]
    cut = worst_kept - MARGIN
    hopeless = {i for i, most in zip(walked_ids, mosts) if most < cut}
    for i in hopeless:
        del reached[i]
    return hopeless


def _bounds(walked: Walk, ids: list[str], bound: ScoreBound) -> tuple[list[float], list[float]]:
    """``bound.many`` for ``ids``: where the walk stopped on its bound test (or on the cap right
    after it), the leasts that test
    computed (the walk took no step since, and the lens options that add nodes after it never
    change a held one), when nothing the walk does not read can raise a score (no similarity, no
    field boost: a node's most is its least). At depth 5 of 100k nodes the stop test before hop 4
    and this cut bounded the same ~2,900 nodes one after the other."""
    kept = walked.bounded
    if kept is None or bound.has_similarity or bound.field_floor != bound.field_ceiling:
        return bound.many(ids, walked.info, walked.reached)
    least_of = dict(zip(*kept))
    leasts = [least_of.get(i) for i in ids]
    if None in leasts:  # a node the test did not bound (never, as the walk ends): bound them all
        return bound.many(ids, walked.info, walked.reached)
    return leasts, leasts  # type: ignore[return-value]


def keep_best(ranked: list[Candidate], pool: Pool) -> list[Candidate]:
    """The seeds and the ``pool.size`` best others (``ranked`` is best first, seeds first)."""
    seeds = sum(1 for c in ranked if c.seed)
    limit = seeds + pool.size
    if len(ranked) <= limit:
        return ranked
    pool.cut = len(ranked) - limit
    return ranked[:limit]
