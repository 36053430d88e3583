"""A warm process ranks a hub's whole neighbour list itself (``warm.HubNeighbours._ranked``), from
the hub's edges and the node details it keeps, and gets what the store's SQL gives
(``GraphReader.ranked_neighbours``): the same rows, in the same order, with the same floats, for
every reader, ranker and set of edge classes. The graph is test_hub_scan's: a hub linked twice by
some notes and by itself, small classes beside the big one, ties on a clamped date, undated and
private notes."""

from __future__ import annotations

import pytest

from build_graphs import import_into, write_jsonl
from ctx.assemble import warm
from ctx.assemble.score import NeighbourRanker
from ctx.lenses import load_lens
from ctx.store import as_store
from test_hub_scan import records


def rankers(reference: float | None) -> list[NeighbourRanker]:
    lens = load_lens("general")
    plain = NeighbourRanker(lens, reference)
    boosted = NeighbourRanker(lens, reference)
    boosted.type_boosts = {"task": 2.0, "project": 0.5}
    tagged = NeighbourRanker(lens, reference)
    tagged.tag_boosts = {"big": 1.5, "private": 3.0}
    # Below 0 the store's MAX over a neighbour's edges is at its lightest edge, not its heaviest.
    negative = NeighbourRanker(lens, reference)
    negative.type_boosts = {"task": -1.0}
    timeless = NeighbourRanker(lens, None)
    flat = NeighbourRanker(lens, reference, recency_share=0.0)
    return [plain, boosted, tagged, negative, timeless, flat]


WEIGHTS = [
    {("link", "in"): 1.0},
    {("link", "in"): 0.5, ("ref", "in"): 2.0, ("supports", "in"): 1.0},  # a neighbour in several classes
    {("link", "in"): 1.0, ("link", "out"): 0.7, ("ref", "in"): 0.7},  # both directions, the hub's self-loops
    {("link", "out"): 1.0},
    {("nothing", "in"): 1.0},
]


@pytest.mark.parametrize("undated", [False, True])
def test_a_warm_process_ranks_a_hubs_list_as_the_store_does(tmp_path, warm_process, undated):
    data = records(5, undated=undated)
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", data))
    hubs = ["n0000", "n0001", "n0003", "tag:big", "n0100"]
    compared = 0
    for include_private in (False, True):
        reader = as_store(conn).reader(include_private=include_private)
        reference = reader.newest_update()
        assert warm.preload(reader)
        kept = warm.hub_neighbours(reader)
        assert kept is not None
        for hub in hubs:
            for weights in WEIGHTS:
                for ranker in rankers(reference):
                    expected = [tuple(row) for row in reader.ranked_neighbours(hub, weights, ranker)]
                    assert kept._ranked(hub, weights, ranker) == expected, (hub, weights, include_private)
                    compared += len(expected)
                # Each neighbour's edges, kept with the list, are the store's (the same rows; a
                # neighbour's in the store's order).
                others = [row[0] for row in reader.ranked_neighbours(hub, weights, rankers(reference)[0])]
                found = kept.edges_around(hub, weights, others, len(others))
                stored = [tuple(row) for row in reader.edges_around(hub, weights, others, len(others))]
                assert sorted(found) == sorted(stored), (hub, include_private)
                assert all([r for r in found if r[0] == v] == [r for r in stored if r[0] == v] for v in others)
        # Without every node's details kept, the store ranks them.
        warm.forget()
        assert [tuple(row) for row in kept._ranked("n0000", WEIGHTS[1], rankers(reference)[0])] == [
            tuple(row) for row in reader.ranked_neighbours("n0000", WEIGHTS[1], rankers(reference)[0])
        ]
    # The hub n0000 alone has hundreds of neighbours a reader may see: derivable from the records.
    linking = {r["id"] for r in data if "id" in r and "n0000" in r["links"] and r["id"] != "n0000"}
    assert len(linking) > 200 and compared > 2 * 6 * len(linking)
