"""A build's reads stay index lookups: no statement of a build scans a whole table of names or
edges (each such scan grows with the graph: a name looked up by scanning every name key cost
29 ms a phrase at 100k nodes instead of 0.06 ms). The one read that compares the topic with every
title ("did you mean", ``suggest.close_titles``) is the known exception."""

from __future__ import annotations

import re

import ctx.assemble.traverse as traverse
from build_graphs import import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context

# A whole-table read of these (an index scanned end to end counts too): "SCAN k", "SCAN edges USING ...".
_SCAN = re.compile(r"\bSCAN (?:k|e|edges|node_keys)\b")


def graph(tmp_path):
    records = [{"id": "tag-hub", "title": "Harbour Cranes", "body": "The cranes of the harbour."}]
    for i in range(300):
        records.append({
            "id": f"n{i:03d}", "title": f"Crane log {i}", "body": f"Entry {i} about Harbour Cranes and budgets.",
            "tags": ["cranes"] + (["budget"] if i % 3 else []), "links": ["tag-hub", f"n{(i * 7) % 300:03d}"],
            "updated": f"2024-0{1 + i % 9}-1{i % 10}",
        })
    return import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records))


def test_no_build_statement_scans_the_names_or_the_edges(tmp_path, monkeypatch):
    conn = graph(tmp_path)
    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 1)  # the tag and the linked note are hubs here
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        for topic, lens in (("What did the Harbour Cranes log say about budgets?", "auto"),
                            ("Harbour Cranes", "general"), ("crane budgets", "auto")):
            for depth in (1, 3):
                build_context(conn, BuildRequest((topic,), lens=lens, depth=depth, format="json"))
    finally:
        conn.set_trace_callback(None)
    checked = 0
    for sql in dict.fromkeys(statements):
        if not sql.lstrip().upper().startswith("SELECT") or ("node_keys" not in sql and "FROM edges" not in sql):
            continue
        if sql.startswith("SELECT k.key, MIN(n.title) FROM node_keys"):
            continue  # did you mean: every title key of a similar length, by design
        plan = " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert not _SCAN.search(plan), (sql, plan)
        checked += 1
    mentions = [s for s in statements if "node_keys k" in s and "k.kind IN ('title', 'alias')" in s]
    classes = [s for s in statements if "SELECT type FROM edges WHERE" in s]
    assert mentions and classes and checked > 20


_EVERY_TITLE = "SELECT k.key, MIN(n.title) FROM node_keys"


def test_did_you_mean_compares_every_title_only_when_search_found_nothing(tmp_path):
    records = [{"id": "lh", "title": "Lighthouse Keepers", "body": "Who kept the lamps lit on the point."}]
    records += [{"id": f"c{i}", "title": f"Crane log {i}", "body": f"Entry {i}: the harbour cranes and their budgets."}
                for i in range(40)]
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records))
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        answered = build_context(conn, BuildRequest(("crane budgets",), format="json"))
        near = build_context(conn, BuildRequest(("Lighthouse Keeper",), format="json"))
        assert not any(s.startswith(_EVERY_TITLE) for s in statements)
        # Found by search, a near-miss of a title still names the title it probably meant.
        assert "did you mean 'Lighthouse Keepers'?" in " ".join(near.warnings)
        assert not any("did you mean" in w for w in answered.warnings)
        nothing = build_context(conn, BuildRequest(("Hxrbour",), format="json"))
    finally:
        conn.set_trace_callback(None)
    assert not nothing.found
    assert any(s.startswith(_EVERY_TITLE) for s in statements)


def test_stats_counts_vectors_from_the_vectors_side(tmp_path):
    """`ctx stats` counts fresh and stale vectors by walking the vectors and looking each node up,
    never the other way round: SQLite chose to scan every node (1M of them, 0.8 s) for a graph
    with no vector at all, since the reader's ``private = 0`` filter is on the nodes."""
    from ctx.store.view import GraphView

    records = [{"id": f"n{i:03d}", "title": f"Note {i}", "body": f"Entry {i}."} for i in range(50)]
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records))
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        for include_private in (False, True):
            coverage = GraphView(conn, include_private=include_private).embedding_coverage()
            assert (coverage["fresh"], coverage["stale"], coverage["missing"]) == (0, 0, 50)
    finally:
        conn.set_trace_callback(None)
    counted = [s for s in statements if "FROM embeddings e" in s]
    assert len(counted) == 2
    for sql in counted:
        plan = [r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, {"m": ""})]
        assert plan[0].startswith("SCAN e"), (sql, plan)
        assert not any(step.startswith("SCAN n") for step in plan), (sql, plan)
