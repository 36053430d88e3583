"""A warm process reads every node's edges at its warm-up (``warm.EdgeLists``, with the node
details): what the store's ``edge_ends`` and ``degrees`` answer, row for row and in the same order,
for either reader, so that a warm walk reads no edge from the store at all and still gives the cold
bytes; once the graph moves, walks read the store again."""

from __future__ import annotations

import random

import pytest

from build_graphs import import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context, warm
from ctx.assemble.edge_groups import edge_classes_known
from ctx.store import as_store
from ctx.store.batches import CHUNK
from test_hub_scan import records


def edge_records() -> list[dict]:
    """test_hub_scan's graph (a hub linked twice by some notes and by itself, small classes beside
    the big one, private notes) with links to notes that do not exist (unresolved ends)."""
    data = records(5, undated=False)
    data[7]["links"] = [*data[7]["links"], "n9999", "missing note"]
    data[8]["links"] = [*data[8]["links"], "n9999"]
    data[0]["links"] = [*data[0]["links"], "n9999"]  # the hub n0000 itself
    return data


def test_the_warm_ups_edge_lists_answer_as_the_store(tmp_path, warm_process):
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", edge_records()))
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE dst IS NULL").fetchone()[0] >= 2
    store = as_store(conn)
    ids = sorted(row[0] for row in conn.execute("SELECT id FROM nodes"))
    rng = random.Random(3)
    asked = [
        ids, ["n0000"], ["n0007", "n0008"], ["nobody", "n0002", "n0002"],
        rng.sample(ids, 40), [rng.choice(ids) for _ in range(CHUNK + 70)],  # repeats, two chunks
    ]
    for include_private in (True, False):
        reader = store.reader(include_private=include_private)
        assert warm.preload(reader)
        lists = warm.edge_lists(reader)
        assert lists is not None
        for column in ("src", "dst"):
            for some in asked:
                assert lists.ends(some, column) == [tuple(row) for row in reader.edge_ends(some, column)], column
                # Grouped as the walk takes them, straight from the lists: as the rows grouped.
                known = warm._details[(reader.warm_state(), include_private)].known
                assert lists.classes(some, column, known) == edge_classes_known(lists.ends(some, column), column, known)
                for at_most in (None, 1, 3, 17, 10_000):
                    assert lists.degrees(some, column, at_most) == reader.degrees(some, column, at_most)
        # A hub's whole list ranked from the lists (its unresolved link left out) is the store's.
        from ctx.assemble.score import NeighbourRanker
        from ctx.lenses import load_lens

        kept = warm.hub_neighbours(reader)
        assert kept is not None
        ranker = NeighbourRanker(load_lens("general"), reader.newest_update())
        for weights in ({("link", "in"): 1.0, ("link", "out"): 0.7}, {("link", "out"): 1.0, ("ref", "in"): 2.0}):
            expected = [tuple(row) for row in reader.ranked_neighbours("n0000", weights, ranker)]
            assert expected and kept._ranked("n0000", weights, ranker) == expected
    # The hub's duplicate links are two rows; the unresolved ends count as the store counts them.
    assert lists.degrees(["n0007"], "src")["n0007"] == reader.degrees(["n0007"], "src")["n0007"]


def test_a_warm_walk_reads_no_edge_of_the_store_and_gives_the_cold_bytes(tmp_path, warm_process, monkeypatch):
    from ctx.store.view import GraphView
    from test_bounded_walk import generated_graph

    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", generated_graph(400, 11, same_dates=False)))
    store = as_store(conn)
    requests = [
        BuildRequest((topic,), depth=depth, format="json", explain=True, max_tokens=3000)
        for topic in ("n0000", "n0042", "n0123", "n0399")
        for depth in (1, 2, 3, 5)
    ]
    with warm.paused():
        expected = [build_context(store, request) for request in requests]
    assert warm.preload(store.reader())

    def unread(*_args, **_kwargs):
        raise AssertionError("a warm walk read edges from the store")

    for name in ("edge_ends", "walk_edges", "degrees"):
        monkeypatch.setattr(GraphView, name, unread)
    for request, cold in zip(requests, expected):
        built = build_context(store, request)
        assert (built.text, built.candidates, built.meta) == (cold.text, cold.candidates, cold.meta), request


def test_edge_lists_are_left_once_the_graph_moves(tmp_path, warm_process):
    path = tmp_path / "g.jsonl"
    data = edge_records()
    conn = import_into(tmp_path / "g.db", write_jsonl(path, data))
    store = as_store(conn)
    reader = store.reader()
    assert warm.preload(reader)
    lists = warm.edge_lists(reader)
    assert lists is not None and "n9999" not in lists.counts["src"]
    request = BuildRequest(("n0400",), depth=2, format="json", max_tokens=2000)
    build_context(store, request)
    # A note linked from n0400's neighbourhood after the warm-up: walks read the store again.
    data.append({"id": "n9999", "title": "Late note", "body": "Written after the warm-up.", "links": ["n0400"]})
    import_into(tmp_path / "g.db", write_jsonl(path, data))
    assert warm.edge_lists(store.reader()) is None
    built = build_context(store, request)
    with warm.paused():
        cold = build_context(store, request)
    assert "n9999" in built.text and built.text == cold.text


@pytest.mark.parametrize("most", [0, 100])
def test_a_graph_of_too_many_edges_keeps_none(tmp_path, warm_process, monkeypatch, most):
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", edge_records()))
    monkeypatch.setattr(warm, "MAX_LISTED_EDGES", most)
    reader = as_store(conn).reader()
    assert warm.preload(reader)  # the details are still kept
    assert warm.edge_lists(reader) is None
