"""A warm process (the MCP server) keeps candidate pools between builds under the graph's state:
a kept pool gives the cold build's bytes, and any change to the graph (an import on this handle or
another, vectors written, a note edited) is seen on the very next build."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder

from ctx import Graph
from ctx.assemble import BuildRequest, warm
from ctx.lenses import load_lens
from ctx.semantic.embedding import embed_graph


def vault_graph(tmp_path, extra: str = ""):
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    if extra:
        note = vault / "Projects" / "Project Apollo.md"
        note.write_text(note.read_text() + extra)
    db = tmp_path / "g.db"
    graph = Graph.open(db, create=True)
    graph.import_path(vault)
    return vault, db, graph


def cold(graph: Graph, request: BuildRequest) -> str:
    with warm.paused():
        return graph.build(request).text


REQUESTS = [
    BuildRequest(("Project Apollo",), max_tokens=1200),
    BuildRequest(("Project Apollo",), max_tokens=1200, format="json"),
    BuildRequest(("Project Apollo",), max_tokens=300),
    BuildRequest(("Project Apollo",), lens="planning", depth=3, max_tokens=2000),
    BuildRequest(("what is blocking the launch?",), max_tokens=900),
    BuildRequest(("what is blocking the launch?",), max_tokens=900, format="json", explain=True),
    BuildRequest(("Project Apollo", "Maya Chen"), max_tokens=1500),
]


def test_a_kept_pool_gives_the_cold_bytes(tmp_path, warm_process):
    _, _, graph = vault_graph(tmp_path)
    for request in REQUESTS:
        expected = cold(graph, request)
        first = graph.build(request)
        again = graph.build(request)
        assert first.text == expected and again.text == expected, request
        assert again.meta == first.meta and again.warnings == first.warnings
    # The markdown and the JSON of one request share a pool: each still renders its own text.
    assert len(warm._pools) == len({(r.topics, r.lens, r.depth, r.max_tokens) for r in REQUESTS})


def test_the_second_build_takes_the_kept_pool(tmp_path, warm_process, monkeypatch):
    from ctx.assemble import pipeline

    _, _, graph = vault_graph(tmp_path)
    request = BuildRequest(("Project Apollo",), depth=3, max_tokens=1200)
    first = graph.build(request).text

    def walked_again(*args, **kwargs):
        raise AssertionError("the kept pool was not used")

    monkeypatch.setattr(pipeline, "collect", walked_again)
    assert graph.build(request).text == first
    with pytest.raises(AssertionError, match="not used"):
        graph.build(BuildRequest(("Project Apollo",), depth=2, max_tokens=1200))


def test_an_edit_imported_on_this_handle_is_seen_at_once(tmp_path, warm_process):
    vault, _, graph = vault_graph(tmp_path)
    request = BuildRequest(("Project Apollo",), max_tokens=1500)
    before = graph.build(request).text
    assert graph.build(request).text == before
    note = vault / "Projects" / "Project Apollo.md"
    note.write_text(note.read_text() + "\nThe launch moved to the harbour crane test.\n")
    graph.import_path(vault)
    after = graph.build(request).text
    assert "harbour crane" in after and after == cold(graph, request)


def test_another_connection_importing_is_seen_at_once(tmp_path, warm_process):
    vault, db, graph = vault_graph(tmp_path)
    request = BuildRequest(("Project Apollo",), max_tokens=1500)
    graph.build(request)
    graph.build(request)
    (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nLinked to [[Project Apollo]]: cranes.\n")
    with Graph.open(db) as other:
        other.import_path(vault)
    after = graph.build(request).text
    assert "Apollo harbour" in after and after == cold(graph, request)


def test_vectors_written_on_this_handle_are_seen_at_once(tmp_path, warm_process):
    _, _, graph = vault_graph(tmp_path)
    request = BuildRequest(("how are meetings planned?",), max_tokens=900, format="json")
    without = graph.build(request)
    assert graph.build(request).text == without.text
    embed_graph(graph.store, FAKE_MODEL, encoder_factory=HashEncoder)
    embedded = graph.build(request)
    assert embedded.meta["scoring"]["similarity"] != without.meta["scoring"]["similarity"]
    assert embedded.text == cold(graph, request)


def test_another_graph_never_gets_this_ones_pool(tmp_path, warm_process):
    _, _, graph = vault_graph(tmp_path / "a")
    _, _, other = vault_graph(tmp_path / "b", extra="\nOnly in the second graph.\n")
    request = BuildRequest(("Project Apollo",), max_tokens=1500)
    first = graph.build(request).text
    second = other.build(request).text
    assert "Only in the second graph." in second and "Only in the second graph." not in first


def test_a_cold_process_keeps_nothing(tmp_path):
    _, _, graph = vault_graph(tmp_path)
    graph.build(BuildRequest(("Project Apollo",), max_tokens=1200))
    assert not warm.enabled() and not warm._pools


SECRET = "Quentin's salary review"


def test_a_private_readers_pool_never_serves_a_public_one(tmp_path, warm_process):
    from ctx.assemble import build_context

    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    (vault / "Apollo payroll.md").write_text(
        f"---\nprivate: true\n---\n# Apollo payroll\n\n[[Project Apollo]]: {SECRET}.\n"
    )
    db = tmp_path / "g.db"
    graph = Graph.open(db, create=True)
    graph.import_path(vault)
    store = graph.store  # one connection, read both ways: only the key's visibility tells them apart
    request = BuildRequest(("Project Apollo",), max_tokens=2000)
    for _ in range(2):
        assert SECRET in build_context(store, request, include_private=True).text
    public = build_context(store, request).text
    assert SECRET not in public
    with warm.paused():
        assert public == build_context(store, request).text
    assert build_context(store, request).text == public


def test_a_graph_file_replaced_under_the_server_is_built_afresh(tmp_path, warm_process):
    import os

    from ctx.mcp_server import CtxTools

    vault, db, graph = vault_graph(tmp_path)
    graph.close()
    tools = CtxTools(db)
    try:
        before = tools.context("Project Apollo", max_tokens=1500, depth=3).text
        assert tools.context("Project Apollo", max_tokens=1500, depth=3).text == before
        # A graph made elsewhere and moved over the served file (a restore, a fresh import).
        note = vault / "Projects" / "Project Apollo.md"
        note.write_text(note.read_text() + "\nThe launch waits for the harbour crane test.\n")
        replacement = tmp_path / "new.db"
        with Graph.open(replacement, create=True) as fresh:
            fresh.import_path(vault)
        os.replace(replacement, db)
        after = tools.context("Project Apollo", max_tokens=1500, depth=3).text
        assert "harbour crane" in after
        with warm.paused():
            assert after == tools.context("Project Apollo", max_tokens=1500, depth=3).text
    finally:
        tools.close()


def test_hubs_ranked_from_kept_lists_walk_as_the_store_ranks_them(tmp_path, warm_process, monkeypatch):
    import ctx.assemble.traverse as traverse
    from build_graphs import import_into, write_jsonl
    from test_bounded_walk import CASES, generated_graph

    from ctx.assemble import build_context

    from ctx.store import as_store

    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", generated_graph(400, 11, same_dates=False)))
    graph = as_store(conn)  # one store for every build, as a warm process holds it
    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node a hub: every neighbour list ranked
    # Each request at two budgets: a new request each time (no kept pool); the second meets the
    # first one's hubs again, so its walk filters the lists kept from them.
    # And a lens keeping 3 new neighbours per node: most hubs are cut, so which of their
    # neighbours the walk already holds (not fresh) decides what is kept and how many are left out.
    narrow = tmp_path / "narrow.yaml"
    general = (Path(__file__).resolve().parent.parent / "lenses" / "general.yaml").read_text()
    narrow.write_text(general.replace("fan_out: 50", "fan_out: 3").replace("name: general", "name: narrow"))
    cases = [*CASES, *((topic, str(narrow), depth) for topic in ("n0000", "n0042", "n0123") for depth in (2, 3))]
    for topic, lens, depth in cases:
        for budget in (3000, 1500):
            request = BuildRequest((topic,), lens=lens, depth=depth, format="json", explain=True, max_tokens=budget)
            with warm.paused():
                expected = build_context(graph, request)
            walked = build_context(graph, request)
            assert (walked.text, walked.candidates, walked.meta) == (
                expected.text, expected.candidates, expected.meta,
            ), (topic, lens, depth, budget)
    # Met once: ranked by the store; met again: kept whole and filtered here (both paths taken).
    assert warm._hubs_met and warm._hubs and warm._hub_rows > 0


def test_the_same_request_gets_the_kept_answer_and_a_new_freshness_its_own(tmp_path, warm_process, monkeypatch):
    from dataclasses import replace

    from ctx.assemble import pipeline
    from ctx.freshness_report import Freshness

    _, _, graph = vault_graph(tmp_path)
    version = graph.store.reader().graph_version()
    request = BuildRequest(("Project Apollo",), max_tokens=1200, freshness=Freshness(version, None))
    # Sources edited on disk but not imported yet: the graph did not move, the answer says so.
    pending = replace(request, freshness=Freshness(version, None, pending=("/notes",)))
    expected, expected_pending = cold(graph, request), cold(graph, pending)
    assert expected != expected_pending
    first = graph.build(request)
    first.warnings.append("added by a caller")  # the MCP server prepends its own notices
    first.meta["tokens"]["used"] = -1

    def packed_again(*args, **kwargs):
        raise AssertionError("packed again")

    monkeypatch.setattr(pipeline, "pack_and_report", packed_again)
    again = graph.build(request)
    assert again.text == first.text == expected
    assert "added by a caller" not in again.warnings and again.meta["tokens"]["used"] > 0
    with pytest.raises(AssertionError, match="packed again"):
        graph.build(pending)
    monkeypatch.undo()
    assert graph.build(pending).text == expected_pending


def test_a_depth_the_lens_caps_keeps_its_own_warning(tmp_path, warm_process):
    _, _, graph = vault_graph(tmp_path)
    capped = BuildRequest(("what is blocking the launch?",), lens="answer", depth=2, max_tokens=900)
    over = BuildRequest(("what is blocking the launch?",), lens="answer", depth=3, max_tokens=900)
    with warm.paused():
        expected = graph.build(over)
    assert any("capped" in w for w in expected.warnings)
    graph.build(capped)  # the same pool (the lens caps 3 to 2), not the same answer
    for _ in range(2):
        again = graph.build(over)
        assert (again.text, again.warnings, again.meta) == (expected.text, expected.warnings, expected.meta)


@pytest.mark.parametrize("preloaded", [False, True])
def test_kept_edges_and_degrees_are_the_stores_for_each_reader(tmp_path, warm_process, preloaded):
    from build_graphs import import_into, write_jsonl
    from test_bounded_walk import generated_graph

    from ctx.assemble.edge_groups import edge_classes_of
    from ctx.store import as_store

    records = generated_graph(400, 11, same_dates=False)
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records))
    private = {r["id"] for r in records if "private" in r["tags"]}
    store = as_store(conn)
    ids = sorted(r["id"] for r in records)
    # The private reader first: its rows reach private notes, which the public reader's never may.
    for include_private in (True, False):
        reader = store.reader(include_private=include_private)
        # Every node's details read at once (the MCP server's warm-up), or as walks meet them.
        if preloaded:
            assert warm.preload(reader)
        for column in ("src", "dst"):
            rows = reader.walk_edges(ids, column)
            expected_classes = edge_classes_of(rows, column)
            expected_degrees = reader.degrees(ids, column)
            for _ in range(2):  # read through, then kept
                kept = warm.node_edges(reader)
                assert kept is not None
                assert kept.walk_classes(ids, column) == expected_classes
                assert kept.degrees(ids, column) == expected_degrees
            # Grouped, the rows are all there: each (node, type, other end) once, none to itself.
            near = 0 if column == "src" else 1
            assert {(u, etype, v) for u, classes in expected_classes.items() for etype, others in classes for v in others} == {
                (row[near], row[2], row[1 - near]) for row in rows if row[0] != row[1]
            }
        reached = {row[1] for row in reader.walk_edges(ids, "src")} | {row[0] for row in reader.walk_edges(ids, "dst")}
        assert bool(reached & private) == include_private
        details = warm._details[(reader.warm_state(), include_private)]
        assert details.complete == preloaded
        # What is kept of a node is what walk_edges reads of it: a private one only for the private reader.
        kept_visible = {v for v, info in details.known.items() if info is not None}
        assert private and (private <= kept_visible if include_private and preloaded else True)
        assert not include_private or not preloaded or len(kept_visible) == conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        assert include_private or not kept_visible & private
    assert warm._edges and warm._degrees


def test_edges_group_the_same_in_any_row_order(tmp_path):
    """``edge_classes_known`` looks a group up only when a row's node or type differs from the
    row before (the store's rows come along its index): rows in any other order, every node's and
    type's rows interleaved, group the same."""
    import random

    from build_graphs import import_into, write_jsonl
    from test_bounded_walk import generated_graph

    from ctx.assemble.edge_groups import edge_classes_known
    from ctx.store import as_store

    records = generated_graph(300, 7, same_dates=False)
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records))
    reader = as_store(conn).reader(include_private=False)
    details = warm._infos(reader.walk_details(None))
    ids = sorted(r["id"] for r in records)
    for column in ("src", "dst"):
        rows = reader.edge_ends(ids, column)
        near = 0 if column == "src" else 1
        expected = {
            u: {etype: dict(others) for etype, others in classes}
            for u, classes in edge_classes_known(rows, column, details).items()
        }
        # Each visible (node, type, other end) once, none to itself, none hidden.
        assert {(u, t, v) for u, by_type in expected.items() for t, others in by_type.items() for v in others} == {
            (row[near], row[2], row[1 - near]) for row in rows if row[0] != row[1] and row[1 - near] in details
        }
        assert len({row[near] for row in rows}) > 100 and any(len(by_type) > 1 for by_type in expected.values())
        for seed in range(3):
            shuffled = list(rows)
            random.Random(seed).shuffle(shuffled)
            grouped = edge_classes_known(shuffled, column, details)
            assert {u: {etype: dict(others) for etype, others in classes} for u, classes in grouped.items()} == expected
            # Types in order, as the walk takes them.
            assert all([t for t, _ in classes] == sorted(t for t, _ in classes) for classes in grouped.values())


def _rows(rows) -> list[tuple]:
    return sorted((tuple(row) for row in rows), key=repr)


def test_an_edge_added_after_a_walk_is_walked_by_the_next(tmp_path, warm_process):
    vault, db, graph = vault_graph(tmp_path)
    graph.build(BuildRequest(("Project Apollo",), depth=2, max_tokens=1500))
    assert warm._edges  # the seed's edges, among others, are kept
    (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nCranes for the launch.\n")
    note = vault / "Projects" / "Project Apollo.md"
    note.write_text(note.read_text() + "\nSee [[Apollo harbour]].\n")
    graph.import_path(vault)
    # Another budget: another pool, so the walk runs again, from the seed whose edges were kept.
    request = BuildRequest(("Project Apollo",), depth=2, max_tokens=1400)
    after = graph.build(request).text
    assert "Apollo harbour" in after and after == cold(graph, request)
    # The same from another connection's import.
    (vault / "Apollo crane.md").write_text("# Apollo crane\n\nThe crane test.\n")
    note.write_text(note.read_text() + "\nAnd [[Apollo crane]].\n")
    with Graph.open(db) as other:
        other.import_path(vault)
    request = BuildRequest(("Project Apollo",), depth=2, max_tokens=1300)
    after = graph.build(request).text
    assert "Apollo crane" in after and after == cold(graph, request)


def test_kept_hub_edges_and_node_facts_follow_an_edit(tmp_path, warm_process, monkeypatch):
    import ctx.assemble.traverse as traverse

    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node a hub: its edges kept as a hub's
    vault, _, graph = vault_graph(tmp_path)
    # A hub met twice: its list, classes and chosen edges kept. Pools of two sizes (250, 225):
    # a walk with the very same limit would take up the first one's kept walk instead.
    for budget in (2000, 1800):
        request = BuildRequest(("Project Apollo",), depth=2, max_tokens=budget, format="json")
        assert graph.build(request).text == cold(graph, request)
    assert warm._hubs and warm._classes and warm._around and warm._facts
    (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nCranes for the launch.\n")
    note = vault / "Projects" / "Project Apollo.md"
    # A new class of edge from the seed (an embed), and a neighbour's title changed.
    note.write_text(note.read_text() + "\n![[Apollo harbour]]\n")
    risks = vault / "Projects" / "Apollo Risks.md"
    risks.write_text("---\ntitle: Apollo Hazards\n---\n" + risks.read_text())
    graph.import_path(vault)
    request = BuildRequest(("Project Apollo",), depth=2, max_tokens=1300, format="json")
    after = graph.build(request).text
    assert "Apollo harbour" in after and "Apollo Hazards" in after
    assert after == cold(graph, request)


def test_a_build_on_another_connection_keeps_the_pool(tmp_path, warm_process, monkeypatch):
    """A `ctx build` in a terminal records its manifest in the graph (for `--since`); that commit
    moved ``PRAGMA data_version`` and used to empty everything a warm MCP server kept."""
    from ctx.assemble import pipeline

    _, db, graph = vault_graph(tmp_path)
    request = BuildRequest(("Project Apollo",), depth=3, max_tokens=1200)
    first = graph.build(request).text
    probe = sqlite3.connect(db)  # sees the other connection's commit as the server's would
    data_version = probe.execute("PRAGMA data_version").fetchone()[0]
    recorded = probe.execute("SELECT COUNT(*) FROM contexts").fetchone()[0]
    with Graph.open(db) as other, warm.paused():
        other.build(BuildRequest(("Maya Chen",), max_tokens=800))
    assert probe.execute("SELECT COUNT(*) FROM contexts").fetchone()[0] > recorded
    assert probe.execute("PRAGMA data_version").fetchone()[0] != data_version
    probe.close()

    def walked_again(*args, **kwargs):
        raise AssertionError("the kept pool was not used")

    monkeypatch.setattr(pipeline, "collect", walked_again)
    assert graph.build(request).text == first


def test_vectors_written_by_another_connection_are_seen_at_once(tmp_path, warm_process):
    """`ctx embed` in another process changes no graph version: the content counter sees it."""
    _, db, graph = vault_graph(tmp_path)
    request = BuildRequest(("how are meetings planned?",), max_tokens=900, format="json")
    without = graph.build(request)
    with Graph.open(db) as other:
        embed_graph(other.store, FAKE_MODEL, encoder_factory=HashEncoder)
    embedded = graph.build(request)
    assert embedded.meta["scoring"]["similarity"] != without.meta["scoring"]["similarity"]
    assert embedded.text == cold(graph, request)


def test_every_table_a_build_reads_moves_the_content_counter(tmp_path):
    """A table added later must say whether builds read it: if they do, writes to it must move the
    counter the warm caches are keyed on (migration 16), or a warm server serves stale answers."""
    _, db, graph = vault_graph(tmp_path)
    graph.close()
    conn = sqlite3.connect(db, isolation_level=None)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")}
    virtual = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%'")}
    shadows = {t for t in tables if any(t.startswith(v + "_") for v in virtual)}
    counted = {r[0] for r in conn.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_content' ESCAPE '\\'")}
    not_read_by_builds = {"contexts", "query_embeddings", "files", "content_version", "sqlite_sequence"}
    # Read by builds, but written only with the edges it counts (its triggers, or a fill from them
    # in the same transaction): the edges' own writes move the counter.
    derived_from_edges = {"link_counts"}
    assert tables - shadows - not_read_by_builds - derived_from_edges == counted
    before = conn.execute("SELECT n FROM content_version").fetchone()[0]
    conn.execute("UPDATE nodes SET title = title || '' WHERE id = (SELECT MIN(id) FROM nodes)")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('sources_pending', '{}')")
    assert conn.execute("SELECT n FROM content_version").fetchone()[0] == before + 1


def test_score_bounds_kept_per_lens_and_graph_state(tmp_path, warm_process):
    """Walked nodes' boosts and recencies are kept between builds per lens boosts and graph state:
    a build of another lens does not take the first lens's, and every warm build is the cold one."""
    from build_graphs import import_into, write_jsonl
    from test_bounded_walk import generated_graph

    from ctx.assemble import build_context
    from ctx.store import as_store

    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", generated_graph(400, 5, same_dates=False)))
    store = as_store(conn)
    lenses = ("general", "planning", "general")
    for lens in lenses:
        for topic in ("n0000", "n0123", "n0321"):
            request = BuildRequest((topic,), lens=lens, depth=3, max_tokens=1200)
            warm_text = build_context(store, request).text
            with warm.paused():
                assert warm_text == build_context(store, request).text
    state = store.reader().warm_state()
    kept = {key[1]: facts for key, facts in warm._bound_facts.items() if key[0] == state}
    # One per lens (their boosts differ), each holding the nodes its walks bounded.
    assert set(kept) == {repr(load_lens(name).boosts) for name in lenses} and len(kept) == 2
    assert all(len(facts) > 10 for facts in kept.values()), [len(f) for f in kept.values()]


def test_kept_passages_are_the_stores_and_follow_an_edit(tmp_path, warm_process):
    """A build reads its candidates' passages and then its manifest's: a warm process keeps them
    per node under the graph's state, in the store's order, and reads them again after an edit."""
    vault, db, graph = vault_graph(tmp_path)
    probe = sqlite3.connect(db)
    ids = [row[0] for row in probe.execute("SELECT id FROM nodes ORDER BY rowid DESC")]
    probe.close()
    reader = graph.reader
    assert warm.passages_of(reader, ids[:3]) == reader.passages_of(ids[:3])
    both = warm.passages_of(reader, ids + ids[:2])  # some kept, the others read now
    assert both == reader.passages_of(ids) and list(both) == list(reader.passages_of(ids))
    assert len(both) > 10 and sum(1 for key in warm._passages if key[1] in ids) == len(ids)
    probe = sqlite3.connect(db)
    apollo = probe.execute("SELECT id FROM nodes WHERE title = 'Project Apollo'").fetchone()[0]
    probe.close()
    note = vault / "Projects" / "Project Apollo.md"
    note.write_text(note.read_text() + "\n\n## Harbour\n\nThe launch moved to the harbour crane test.\n")
    graph.import_path(vault)
    after = warm.passages_of(graph.reader, [apollo])
    assert after == graph.reader.passages_of([apollo]) and "harbour crane" in after[apollo][-1].text


def test_a_topic_asked_again_deeper_goes_on_from_its_last_walk(tmp_path, warm_process, monkeypatch):
    import ctx.assemble.traverse as traverse
    from build_graphs import import_into, write_jsonl
    from test_bounded_walk import generated_graph

    from ctx.assemble import build_context
    from ctx.store import as_store

    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", generated_graph(400, 11, same_dates=False)))
    graph = as_store(conn)
    taken: list[int] = []
    step = traverse._Walker.step

    def counted(self, frontier, hop):
        taken.append(hop)
        return step(self, frontier, hop)

    monkeypatch.setattr(traverse._Walker, "step", counted)
    narrow = tmp_path / "narrow.yaml"  # most nodes' neighbours cut: which are held decides the cuts
    general = (Path(__file__).resolve().parent.parent / "lenses" / "general.yaml").read_text()
    narrow.write_text(general.replace("fan_out: 50", "fan_out: 3").replace("name: general", "name: narrow"))
    went_on = 0
    for lens in ("general", str(narrow)):
        for topic in ("n0000", "n0042", "n0123", "n0399"):
            before = 0
            for depth in (1, 2, 3, 5, 4):
                request = BuildRequest((topic,), lens=lens, depth=depth, format="json", explain=True, max_tokens=3000)
                with warm.paused():
                    expected = build_context(graph, request)
                taken.clear()
                walked = build_context(graph, request)
                assert (walked.text, walked.candidates, walked.meta) == (
                    expected.text, expected.candidates, expected.meta,
                ), (topic, lens, depth)
                if depth > before:
                    # Only the hops past the last walk's (none when that one stopped before them).
                    assert all(hop > before for hop in taken), (topic, lens, depth, taken)
                    went_on += bool(taken) and before > 0
                before = depth
    assert went_on  # some walks went on from a kept one
    assert warm._walks


def test_a_kept_walk_is_not_taken_up_once_the_graph_moved(tmp_path, warm_process):
    vault, _, graph = vault_graph(tmp_path)
    shallow = BuildRequest(("Project Apollo",), depth=1, max_tokens=1500, format="json")
    assert graph.build(shallow).text == cold(graph, shallow)
    assert warm._walks
    # A note two hops away, linked from a neighbour of the seed.
    (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nCranes for the launch.\n")
    risks = vault / "Projects" / "Apollo Risks.md"
    risks.write_text(risks.read_text() + "\nSee [[Apollo harbour]].\n")
    graph.import_path(vault)
    deeper = BuildRequest(("Project Apollo",), depth=2, max_tokens=1500, format="json")
    after = graph.build(deeper).text
    assert "Apollo harbour" in after
    assert after == cold(graph, deeper)
