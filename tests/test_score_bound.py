"""Score bounds in bulk (``ScoreBound.many``) are the one-node bounds (``both``), float for float,
and the pool keeps exactly the nodes whose most reaches the pool's worst least: with and without
similarity, field boosts that may or may not apply, and search relevance."""

from __future__ import annotations

import json
import random

import pytest

from ctx.assemble.bound import MARGIN, NodeInfo, ScoreBound
from ctx.assemble.pool import drop_hopeless
from ctx.assemble.score import named_boost
from ctx.assemble.traverse import Hop, Reached, Walk
from ctx.lenses import load_lens

TYPES = ["note", "task", "meeting", "tag", "goal", "person"]
TAGS = [None, json.dumps(["task"]), json.dumps(["goal", "risk"]), json.dumps(["alpha"])]


def walked(n: int, seed: int) -> tuple[dict[str, Reached], dict[str, NodeInfo]]:
    rng = random.Random(seed)
    reached: dict[str, Reached] = {"seed": Reached("seed", 0, 0.0, (), True)}
    info: dict[str, NodeInfo] = {}
    for i in range(n):
        node_id = f"n{i:05d}"
        hops = rng.randint(1, 3)
        # Costs of whole and half steps (tags weigh 0.5): many nodes tie on cost.
        cost = hops * rng.choice([1.0, 1.0, 2.0])
        reached[node_id] = Reached(node_id, hops, cost, (Hop("link", "out", "seed", node_id),), False)
        updated = None if rng.random() < 0.1 else 1_700_000_000.0 - rng.randint(0, 400) * 86400.0
        title = rng.choice(["Launch plan", "Weekly sync", "Risk register", "Notes"])
        info[node_id] = NodeInfo(rng.choice(TYPES), rng.choice(TAGS), updated, title)
    return reached, info


@pytest.mark.parametrize("lens_name", ["general", "planning", "meeting-prep"])  # planning: field boosts
@pytest.mark.parametrize("has_similarity", [False, True])
@pytest.mark.parametrize("searched", [False, True])
def test_bounds_in_bulk_are_each_nodes_bounds(lens_name, has_similarity, searched):
    lens = load_lens(lens_name)
    reached, info = walked(600, 5)
    ids = [i for i in reached if i != "seed"]
    rng = random.Random(9)
    search = {i: rng.random() for i in rng.sample(ids, 50)} if searched else None
    bound = ScoreBound(lens, has_similarity, 1_700_000_000.0, search)
    leasts, mosts = bound.many(ids, info, reached)
    alone = [bound.both(i, info[i], reached[i].cost) for i in ids]
    assert leasts == [least for least, _ in alone]
    assert mosts == [most for _, most in alone]
    assert bound.many(ids, info, reached, most=False) == (leasts, [])
    # Each node's boost is the lens's for its type, tags and title (one per type where only
    # types are boosted), whatever nodes came before it.
    b = lens.boosts
    for i in ids:
        tags = json.loads(info[i].tags) if b.tags and info[i].tags else ()
        assert bound._facts(i, info[i])[0] == named_boost(b, info[i].type, tags, info[i].title)
    # Without similarity and field boosts a node's most is its least.
    if not has_similarity and bound.field_floor == bound.field_ceiling:
        assert mosts == leasts
    else:
        assert any(most > least for least, most in zip(leasts, mosts))


@pytest.mark.parametrize("lens_name", ["general", "planning"])
@pytest.mark.parametrize("has_similarity", [False, True])
def test_the_pool_drops_exactly_the_hopeless(lens_name, has_similarity):
    lens = load_lens(lens_name)
    reached, info = walked(900, 7)
    keep = {"n00003", "n00500"}
    bound = ScoreBound(lens, has_similarity, 1_700_000_000.0, None)
    pool = 200
    candidates = [i for i in reached if i != "seed" and i not in keep]
    least = sorted((bound.both(i, info[i], reached[i].cost)[0] for i in candidates), reverse=True)[pool - 1]
    expected = {i for i in candidates if bound.both(i, info[i], reached[i].cost)[1] < least - MARGIN}
    walk = Walk(dict(reached), 3, info=info)
    dropped = drop_hopeless(walk, bound, pool, keep)
    assert dropped == expected
    assert expected or has_similarity  # with similarity most nodes may still make the pool
    assert set(walk.reached) == set(reached) - expected
    assert keep <= set(walk.reached) and "seed" in walk.reached
