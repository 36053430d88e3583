"""What a warm process reads and computes of a hub at its first meeting, many links at a time:

* ``GraphReader.edge_lists``: a hub's edges as one list of other ends per type (one JSON array per
  type from SQLite) are ``edge_ends``' rows grouped, with or without SQLite's JSON functions;
* a hub's whole list valued as numpy arrays (``warm._values``) is the list valued one neighbour at
  a time (``warm._valued_one_by_one``): the same ids in the same order, the same details and
  weights, with hidden ends, undated nodes, ties, several weights and every kind of ranker;
* a hub the store would rank newest first (``ranks_best_alone``) is read and valued whole at its
  first meeting where every node's details are kept and it has few enough edge rows, and the
  builds are the cold ones; over the threshold it is scanned as before;
* the leasts of many walked nodes computed as arrays (``ScoreBound._leasts_at_once``, with the
  facts of nodes not met yet learnt at once) are the floats computed one node at a time.

The graphs are test_hub_scan's (a hub most notes link, some twice, one linking itself, small
classes beside the big one, a tag on most notes, ties on a clamped date, undated and private
notes) and test_bounded_walk's."""

from __future__ import annotations

import random
import sqlite3

import pytest

import ctx.assemble.traverse as traverse
from build_graphs import import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context, warm
from ctx.assemble.bound import ScoreBound
from ctx.assemble.score import NeighbourRanker
from ctx.lenses import load_lens
from ctx.store import as_store, hub_scan
from ctx.store.view import GraphView
from test_bounded_walk import generated_graph
from test_hub_scan import hub_graphs

HUBS = ["n0000", "n0001", "n0003", "n0100", "tag:big", "tag:private", "no-such-node"]


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, sqlite3.Connection]:
    root = tmp_path_factory.mktemp("hub-lists")
    out = hub_graphs(root)
    for name, same in (("same-dates", True), ("spread-dates", False)):
        source = write_jsonl(root / f"{name}.jsonl", generated_graph(400, 11, same_dates=same))
        out[name] = import_into(root / f"{name}.db", source)
    return out


def grouped(view: GraphView, node_id: str, column: str) -> list[tuple[str, list[str]]]:
    far = 1 if column == "src" else 0
    by_type: dict[str, list[str]] = {}
    for row in view.edge_ends([node_id], column):
        if row[far] != node_id:
            by_type.setdefault(row[2], []).append(row[far])
    return sorted((etype, sorted(others)) for etype, others in by_type.items())


@pytest.mark.parametrize("json_functions", [True, False])
def test_a_hubs_edge_lists_are_its_edge_ends_by_type(graphs, json_functions, monkeypatch):
    if not json_functions:
        tuples = GraphView._tuples

        def without_json(self, sql, params=()):
            if "json_group_array" in sql:
                raise sqlite3.OperationalError("no such function: json_group_array")
            return tuples(self, sql, params)

        monkeypatch.setattr(GraphView, "_tuples", without_json)
    compared = 0
    for conn in graphs.values():
        for include_private in (False, True):
            view = GraphView(conn, include_private=include_private)
            nodes = [row[0] for row in conn.execute("SELECT id FROM nodes ORDER BY id LIMIT 40")]
            for node_id in [*HUBS, *nodes]:
                for column in ("src", "dst"):
                    lists = view.edge_lists(node_id, column)
                    assert lists == grouped(view, node_id, column), (node_id, column)
                    compared += sum(len(others) for _, others in lists)
    # The hub's backlinks, its self-loops (it links itself and refers to itself) left out.
    view = GraphView(graphs["dated"])
    assert {row[2] for row in view.edge_ends(["n0000"], "dst") if row[0] == "n0000"} == {"link", "ref"}
    lists = dict(view.edge_lists("n0000", "dst"))
    assert len(lists["link"]) > 300 and all("n0000" not in others for others in lists.values())
    assert compared > 4000


def rankers(reference: float | None) -> list[NeighbourRanker]:
    lens = load_lens("general")
    boosted = NeighbourRanker(lens, reference)
    boosted.type_boosts = {"task": 2.0, "project": 0.5, "note": 0.0}  # a zero boost: ties at 0
    negative = NeighbourRanker(lens, reference)
    negative.type_boosts = {"task": -1.0}
    tagged = NeighbourRanker(lens, reference)
    tagged.tag_boosts = {"big": 1.5}
    return [
        NeighbourRanker(lens, reference), boosted, negative, tagged, NeighbourRanker(lens, None),
        NeighbourRanker(lens, reference, recency_share=0.0),
    ]


@pytest.mark.parametrize("name", ["dated", "some-undated", "spread-dates"])
def test_a_list_valued_at_once_is_the_list_valued_one_by_one(graphs, name, warm_process):
    conn = graphs[name]
    rng = random.Random(3)
    for include_private in (False, True):
        reader = as_store(conn).reader(include_private=include_private)
        assert warm.preload(reader)
        details = warm._node_details(reader, reader.warm_state())
        ids = [row[0] for row in conn.execute("SELECT id FROM nodes ORDER BY id")]
        for ranker in rankers(reader.newest_update()):
            if ranker.tag_boosts or any(b < 0 for b in ranker.type_boosts.values()):
                continue  # valued one by one in any case (``_valued``)
            for weights in ([1.0], [1.0, 0.5, 2.0], [0.7, 0.7000000000000001]):
                heaviest = {v: rng.choice(weights) for v in rng.sample(ids, len(ids) // 2)}
                # Ids that name no node (and private ones, for a reader without access): left out.
                heaviest.update({"ghost-1": weights[0], "ghost-0": weights[-1]})
                one_weight = len(set(weights)) == 1
                at_once = warm._values(heaviest, one_weight, ranker, details)
                one_by_one = warm._valued_one_by_one(heaviest, {}, ranker, details)
                assert at_once[0] == one_by_one[0] and at_once[1] == one_by_one[1]
                assert at_once[2] == one_by_one[2]
                assert len(at_once[0]) < len(heaviest)  # some were hidden or no node
        warm.forget()


@pytest.fixture
def scan_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a hub of 100,000s of links is to a graph of millions, these hubs are to 600 notes
    (test_hub_scan's)."""
    monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 20)
    monkeypatch.setattr(hub_scan, "SCAN_SHARE", 1000.0)


CASES = [("n0007", "general", 2), ("n0042", "general", 3), ("n0100", "research", 3), ("n0003", "general", 2)]


@pytest.mark.parametrize("whole_at_most", [10**6, 10])
def test_a_hub_the_store_ranks_alone_is_valued_whole_at_its_first_meeting(graphs, whole_at_most, scan_everywhere, monkeypatch):
    """Where every node's details are kept, a hub the store would rank newest first with at most
    ``WHOLE_AT_MOST`` edge rows is read and valued whole at its first meeting, as a smaller hub is:
    the store neither ranks it nor makes its table. Over the threshold it is scanned as before.
    Either way the builds are the cold ones."""
    graph = as_store(graphs["dated"])
    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node a hub
    monkeypatch.setattr(warm, "WHOLE_AT_MOST", whole_at_most)
    asked: list[str] = []
    for method in ("best_neighbours", "scan_table"):
        real = getattr(GraphView, method)

        def recorded(self, *args, _real=real, _name=method):
            asked.append(_name)
            return _real(self, *args)

        monkeypatch.setattr(GraphView, method, recorded)
    warm.enable()
    try:
        reader = graph.reader(include_private=False)
        assert warm.preload(reader)
        for topic, lens, depth in CASES * 2:  # the second round meets every hub again
            request = BuildRequest((topic,), lens=lens, depth=depth, format="json", explain=True, max_tokens=2000)
            with warm.paused():
                expected = build_context(graph, request)
            before = len(asked)
            walked = build_context(graph, request)
            assert (walked.text, walked.candidates, walked.meta) == (expected.text, expected.candidates, expected.meta)
            if whole_at_most > 10:
                assert asked[before:] == [], (topic, asked[before:])
        assert True in set(warm._hubs_met.values()) or whole_at_most > 10
        if whole_at_most > 10:
            assert "n0000" in {key[2] for key in warm._hubs}  # the scannable note hub, kept whole
        else:
            assert "scan_table" in asked and "best_neighbours" in asked
    finally:
        warm.disable()


@pytest.mark.parametrize("name", ["same-dates", "spread-dates", "some-undated"])
def test_many_leasts_at_once_are_the_leasts_one_by_one(graphs, name, warm_process):
    conn = graphs[name]
    reader = as_store(conn).reader(include_private=False)
    lens = load_lens("general")
    reference = reader.newest_update()
    seeds = [row[0] for row in conn.execute("SELECT id FROM nodes ORDER BY id LIMIT 3")]
    walked = traverse.walk(reader, lens, seeds, 3, NeighbourRanker(lens, reference))
    ids = [v for v, r in walked.reached.items() if not r.seed and v in walked.info]
    assert len(ids) > 100
    rng = random.Random(7)
    for search in ({}, {v: rng.random() for v in rng.sample(ids, 40)}):
        for has_similarity in (False, True):
            one = ScoreBound(lens, has_similarity, reference, search)
            many = ScoreBound(lens, has_similarity, reference, search)
            many.share({})  # as a warm process's: many nodes bounded at once
            if search:  # a relevance weight, as a search lens gives
                for bound in (one, many):
                    bound.weights = type(bound.weights)(0.4, bound.weights.similarity, 0.25, 0.3)
            expected = one._leasts_one_by_one(ids, walked.info, walked.reached)
            # Some nodes' facts known already (an earlier walk's), the rest learnt at once.
            for v in ids[:25]:
                many._facts(v, walked.info[v])
            assert many._leasts_at_once(ids, walked.info, walked.reached) == expected
            assert many._known == one._known
            assert many.many(ids, walked.info, walked.reached) == one.many(ids, walked.info, walked.reached)
