"""A warm process keeps a free-text question's rankings between builds (``kept_rankings``): the
same question at another depth or budget ranks no passage and no node again, gives the cold
build's bytes, and any change to the graph, or another reader's visibility, is ranked afresh."""

from __future__ import annotations

import shutil

from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder

from ctx import Graph
from ctx.assemble import BuildRequest, build_context, kept_rankings, warm
from ctx.semantic.embedding import embed_graph
from ctx.store.view import GraphView

QUESTION = "what is blocking the launch?"


def _graph(tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    graph = Graph.open(tmp_path / "g.db", create=True)
    graph.import_path(vault)
    return vault, graph


def _cold(graph: Graph, request: BuildRequest) -> str:
    with warm.paused():
        return graph.build(request).text


def _counting(monkeypatch) -> dict[str, int]:
    calls = {"passages": 0, "nodes": 0}
    search_passages, search = GraphView.search_passages, GraphView.search

    def counted_passages(self, *args, **kwargs):
        calls["passages"] += 1
        return search_passages(self, *args, **kwargs)

    def counted_nodes(self, *args, **kwargs):
        calls["nodes"] += 1
        return search(self, *args, **kwargs)

    monkeypatch.setattr(GraphView, "search_passages", counted_passages)
    monkeypatch.setattr(GraphView, "search", counted_nodes)
    return calls


def test_the_same_question_at_another_depth_or_budget_ranks_nothing_again(tmp_path, warm_process, monkeypatch):
    _, graph = _graph(tmp_path)
    requests = [
        BuildRequest((QUESTION,), depth=1, max_tokens=900),
        BuildRequest((QUESTION,), depth=2, max_tokens=900),
        BuildRequest((QUESTION,), depth=2, max_tokens=1500, format="json", explain=True),
    ]
    expected = [_cold(graph, r) for r in requests]
    calls = _counting(monkeypatch)
    assert graph.build(requests[0]).text == expected[0]
    first = dict(calls)
    assert first["passages"] >= 1 and first["nodes"] >= 1
    for request, text in zip(requests[1:], expected[1:], strict=True):
        assert graph.build(request).text == text
    assert calls == first  # ranked once, at the first depth


def test_an_edit_is_ranked_afresh(tmp_path, warm_process):
    vault, graph = _graph(tmp_path)
    graph.build(BuildRequest((QUESTION,), depth=1, max_tokens=900))
    (vault / "Launch blockers.md").write_text("# Launch blockers\n\nThe launch is blocked by the harbour crane.\n")
    graph.import_path(vault)
    request = BuildRequest((QUESTION,), depth=2, max_tokens=900)
    after = graph.build(request).text
    assert "harbour crane" in after and after == _cold(graph, request)


SECRET = "the payroll audit"


def test_a_private_readers_ranking_never_serves_a_public_one(tmp_path, warm_process):
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    (vault / "Launch payroll.md").write_text(
        f"---\nprivate: true\n---\n# Launch blocking\n\nBlocking the launch: {SECRET}, blocking the launch.\n"
    )
    for i in range(4):  # private notes of their own index, whose statistics rank the one above
        (vault / f"Diary {i}.md").write_text(f"---\nprivate: true\n---\n# Diary {i}\n\nRain, then sun.\n")
    graph = Graph.open(tmp_path / "g.db", create=True)
    graph.import_path(vault)
    store = graph.store  # one connection read both ways: only the key's visibility tells them apart
    assert SECRET in build_context(store, BuildRequest((QUESTION,), depth=1, max_tokens=900), include_private=True).text
    request = BuildRequest((QUESTION,), depth=2, max_tokens=900)
    public = build_context(store, request).text
    assert SECRET not in public
    with warm.paused():
        assert public == build_context(store, request).text


def test_a_cold_process_keeps_no_ranking(tmp_path):
    _, graph = _graph(tmp_path)
    graph.build(BuildRequest((QUESTION,), max_tokens=900))
    assert not warm.enabled() and not kept_rankings._kept


def test_vectors_written_are_ranked_by_and_kept_under_the_new_state(tmp_path, warm_process, monkeypatch):
    _, graph = _graph(tmp_path)
    request = BuildRequest((QUESTION,), depth=2, max_tokens=900, format="json")
    without = graph.build(BuildRequest((QUESTION,), depth=1, max_tokens=900, format="json")).meta
    embed_graph(graph.store, FAKE_MODEL, encoder_factory=HashEncoder)
    first = graph.build(BuildRequest((QUESTION,), depth=1, max_tokens=900, format="json"))
    assert first.meta["scoring"]["similarity"] != without["scoring"]["similarity"]
    calls = _counting(monkeypatch)
    embedded = graph.build(request)
    assert calls == {"passages": 0, "nodes": 0}  # the ranking by meaning too, kept at depth 1
    assert embedded.text == _cold(graph, request)
