"""Candidates as ``enrich`` makes them (from a copied dict of defaults, without the dataclass's
``__init__``) are the candidates ``Candidate(...)`` makes, and their scores (``score_candidates``,
which rounds a repeated distance term or boost once and takes a type's boost once) are the
formula's, float for float, on a real graph's walk."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from ctx.assemble.candidate import Candidate
from ctx.assemble.enrich import enrich
from ctx.assemble.score import boost, recency, score_candidates, weights_for
from ctx.assemble.traverse import walk
from ctx.graph import Graph
from ctx.lenses import load_lens


def walked_candidates(demo_db, lens_name: str, include_fields: bool) -> tuple[list[Candidate], object]:
    lens = load_lens(lens_name)
    with Graph.open(demo_db) as graph:
        reader = graph.store.reader()
        seed = reader.resolve_one("Project Apollo")
        assert seed is not None
        seeds = [seed]
        walked = walk(reader, lens, seeds, 3)
        made = enrich(reader, walked, lens, include_fields)
        facts = {f.id: f for f in reader.node_facts(list(walked.reached), with_fields=include_fields)}
    return made, (walked, facts, lens)


@pytest.mark.parametrize("include_fields", [False, True])
def test_enrich_makes_what_the_dataclass_makes(demo_db, include_fields):
    made, (walked, facts, lens) = walked_candidates(demo_db, "general", include_fields)
    assert len(made) == len(walked.reached) > 10
    for c in made:
        f, r = facts[c.id], walked.reached[c.id]
        fields = {
            name: [str(v) for v in (values if isinstance(values, list) else [values])]
            for name, values in f.fields.items() if lens.fields.allows(name)
        } if include_fields else {}
        expected = Candidate(
            id=f.id, title=f.title, type=f.type, tags=f.tags, fields=fields, source_path=f.source_path,
            parent_id=f.parent_id, position=f.position, created=f.created, updated=f.updated,
            store_tokens=f.tokens, hops=r.hops, cost=r.cost, path=r.path, seed=r.seed,
        )
        assert c == expected
        assert list(vars(c)) == [field.name for field in dataclasses.fields(Candidate)]
        assert list(vars(c).items()) == list(vars(expected).items())
    # The dicts a default factory makes are each candidate's own.
    assert len({id(c.parts) for c in made}) == len({id(c.neighbours) for c in made}) == len(made)


def by_formula(c: Candidate, lens, similarity, reference) -> tuple[dict[str, float], float]:
    w = weights_for(lens, similarity is not None)
    distance = c.relevance if c.seed else (1.0 / c.cost if c.cost > 0 else 1.0)
    if c.semantic or c.recent:
        distance = 0.0
    sim = similarity.get(c.id, 0.0) if similarity is not None else 0.0
    rec = recency(c.updated, reference, lens.scoring.recency_half_life_days)
    factor = boost(c, lens)
    parts = {"distance": round(distance, 6), "similarity": round(sim, 6), "recency": round(rec, 6),
             "boost": round(factor, 6)}
    total = w.distance * distance + w.similarity * sim + w.recency * rec
    if w.relevance:
        parts["relevance"] = round(c.search, 6)
        total += w.relevance * c.search
    return parts, round(factor * total, 6)


@pytest.mark.parametrize("lens_name", ["general", "planning", "answer"])  # planning: tag and field boosts
@pytest.mark.parametrize("with_similarity", [False, True])
def test_scores_are_the_formula_s(demo_db, lens_name, with_similarity):
    made, (_, _, _) = walked_candidates(demo_db, "general", True)
    lens = load_lens(lens_name)
    rng = random.Random(3)
    for c in made:  # some found by search or recent, some with a relevance
        c.semantic = rng.random() < 0.1
        c.recent = rng.random() < 0.1
        c.search = rng.random()
    similarity = {c.id: rng.choice([0.0, 0.5, rng.random()]) for c in made} if with_similarity else None
    reference = max(c.updated for c in made if c.updated is not None)
    # A boost of 0 and one below 0 on some types: a zero's sign stays its own.
    lens = dataclasses.replace(lens, boosts=dataclasses.replace(
        lens.boosts, types={**lens.boosts.types, "tag": -0.0, "person": -1.5}))
    ranked = score_candidates(made, lens, similarity, reference)
    assert len(ranked) == len(made)
    for c in made:
        parts, score = by_formula(c, lens, similarity, reference)
        assert c.parts == parts and c.score == score
        assert [math.copysign(1.0, v) for v in c.parts.values()] == [math.copysign(1.0, v) for v in parts.values()]
        assert math.copysign(1.0, c.score) == math.copysign(1.0, score)
