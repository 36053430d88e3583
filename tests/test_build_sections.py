"""Lens-driven layout on small graphs: section selectors, shares that flow on, orders, packing."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from build_graphs import chain_graph, import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context
from ctx.assemble.packing_order import packing_order
from ctx.assemble.candidate import Candidate
from ctx.tokens import count_tokens


def lens_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "lens.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def test_selectors_by_hops_and_first_edge(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", chain_graph()))
    lens = lens_file(tmp_path, """
        edges: {link: {direction: both}}
        sections:
          - {name: Topic, select: seed}
          - {name: Backlinked, select: {via: [backlink]}}
          - {name: One hop, select: {hops: 1}}
          - {name: Further, select: {hops: [2, 5], via_all: [link]}, order: title}
          - {name: Rest, select: rest}
    """)
    doc = json.loads(build_context(conn, BuildRequest(("near",), lens=lens, format="json")).text)
    sections = {s["name"]: s["ids"] for s in doc["sections"]}
    assert sections["Topic"] == ["near"]
    # twin1 is reached over backlink (to seed) then link: its first hop decides.
    assert sections["Backlinked"] == ["seed", "twin1"]
    assert sorted(sections["One hop"]) == ["far", "twin2"]
    assert "Further" not in sections and "Rest" not in sections
    md = build_context(conn, BuildRequest(("near",), lens=lens)).text
    assert md.index("## Topic") < md.index("## Backlinked") < md.index("## One hop")


def test_out_only_edges_do_not_walk_backlinks(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", chain_graph()))
    lens = lens_file(tmp_path, "edges: {link: {direction: out}}\n")
    doc = json.loads(build_context(conn, BuildRequest(("near",), lens=lens, format="json")).text)
    assert {n["id"] for n in doc["nodes"]} == {"near", "far", "twin2"}


def test_edge_weight_feeds_the_distance_term(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", chain_graph()))
    lens = lens_file(tmp_path, "edges: {link: {direction: both, weight: 2}}\n")
    doc = json.loads(build_context(conn, BuildRequest(("seed",), lens=lens, format="json")).text)
    near = next(n for n in doc["nodes"] if n["id"] == "near")
    assert near["cost"] == 0.5 and near["score_parts"]["distance"] == 2.0


def test_boosts_are_applied(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", chain_graph()))
    lens = lens_file(tmp_path, "boosts: {keywords: {twin: 3}}\n")
    doc = json.loads(build_context(conn, BuildRequest(("seed",), lens=lens, format="json")).text)
    by_id = {n["id"]: n for n in doc["nodes"]}
    assert by_id["twin1"]["score_parts"]["boost"] == 3.0
    assert by_id["twin1"]["rank"] == 2  # right after the seed


def test_unused_section_budget_flows_to_the_next_section(tmp_path, db_path):
    body = " ".join(f"Line {i} of a long related note." for i in range(300))
    records = [{"id": "s", "title": "S", "body": "Short seed.", "links": ["big"], "updated": "2024-01-01"},
               {"id": "big", "title": "Big", "body": body, "updated": "2024-01-01"}]
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", records))
    lens = lens_file(tmp_path, """
        sections:
          - {name: Topic, select: seed, share: 0.8}
          - {name: Related, select: rest, share: 0.2}
    """)
    result = build_context(conn, BuildRequest(("s",), lens=lens, max_tokens=1000, format="json"))
    doc = json.loads(result.text)
    big = next(n for n in doc["nodes"] if n["id"] == "big")
    # The seed needed a fraction of its 80%: the rest went to Related, far beyond its own 20%.
    assert big["tokens"] > 500
    assert count_tokens(result.text) >= 900


def test_packing_orders():
    def cand(node_id: str, rank: int, doc: str, tokens: int, score: float, seed: bool = False) -> Candidate:
        c = Candidate(node_id, node_id, "note", [], {}, doc, None, None, None, None, tokens, 0 if seed else 1,
                      0.0 if seed else 1.0, (), seed)
        c.rank, c.score = rank, score
        return c

    members = [cand("s", 1, "a.md", 500, 1.0, seed=True), cand("a2", 2, "a.md", 100, 0.9),
               cand("b1", 3, "b.md", 1000, 0.8), cand("b2", 4, "b.md", 10, 0.7), cand("a3", 5, "a.md", 10, 0.6)]
    assert [c.id for c in packing_order(members, "score")] == ["s", "a2", "b1", "b2", "a3"]
    assert [c.id for c in packing_order(members, "greedy")] == ["s", "a2", "a3", "b1", "b2"]
    assert [c.id for c in packing_order(members, "interleaved")] == ["s", "b1", "a2", "b2", "a3"]
    assert [c.id for c in packing_order(members, "density")] == ["s", "b2", "a3", "a2", "b1"]


def test_tree_relation_lines_name_every_edge_kind_from_the_far_end(tmp_path, db_path):
    # c blocks b blocks a (a custom edge type); d names a as its owner (a field edge).
    conn = import_into(db_path, write_jsonl(tmp_path / "g.jsonl", [
        {"id": "a", "title": "Alpha", "body": "Alpha is blocked."},
        {"id": "b", "title": "Beta", "body": "Beta blocks alpha."},
        {"id": "c", "title": "Gamma", "body": "Gamma blocks beta."},
        {"id": "d", "title": "Delta", "body": "Delta owns alpha."},
        {"source": "b", "target": "a", "type": "blocks"},
        {"source": "c", "target": "b", "type": "blocks"},
        {"source": "d", "target": "a", "type": "field:owner"},
    ]))
    lens = lens_file(tmp_path, """
        edges: {blocks: {direction: both}, "field:*": {direction: both}}
        sections:
          - {name: Topic, select: seed}
          - {name: Chain, select: rest, layout: tree}
    """)
    upward = build_context(conn, BuildRequest(("a",), lens=lens)).text
    # b was reached by walking `blocks` backwards (blocks_of): from b's side, b blocks a.
    assert "distance: 1 (blocks_of)" in upward and "relation: blocks → a" in upward
    assert "relation: blocks → b" in upward
    assert "distance: 1 (field:owner^-1)" in upward and "relation: field:owner → a" in upward
    assert "^-1 →" not in upward and "of^-1" not in upward
    downward = build_context(conn, BuildRequest(("c",), lens=lens)).text
    assert "distance: 1 (blocks)" in downward and "relation: blocks of → c" in downward
