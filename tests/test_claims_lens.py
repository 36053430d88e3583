"""The `claims` lens (seed 000) on the shipped claims graph: real import, real CLI, exact token counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, imported_graph
from ctx.tokens import count_tokens

SECTIONS = [
    "## Target claim",
    "## Supporting chain (to root)",
    "## Supported claims (all descendants)",
    "## Semantic context",
    "## Context summary",
]


@pytest.fixture(scope="module")
def claims_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return imported_graph(tmp_path_factory, FIXTURES / "claims.jsonl")


def build(run_cli, db: Path, *args: str) -> str:
    result = run_cli("build", *args, "--lens", "claims", db=db)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def build_json(run_cli, db: Path, *args: str) -> dict:
    return json.loads(build(run_cli, db, *args, "--format", "json"))


def section_of(doc: dict, prefix: str) -> list[dict]:
    return [n for n in doc["nodes"] if n["section"].startswith(prefix)]


def test_sections_are_present_and_in_seed_order(run_cli, claims_db):
    out = build(run_cli, claims_db, "c09", "--max-tokens", "8000")
    positions = [out.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    assert out.rstrip().splitlines()[-1].startswith("- total: ")


def test_supporting_chain_is_upward_only_closest_first_and_indented(run_cli, claims_db):
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", "8000")
    chain = section_of(doc, "Supporting chain")
    assert {n["id"] for n in chain} == {"c01", "c02", "r01", "r02", "r03", "r04"}
    assert [n["distance"] for n in chain] == sorted(n["distance"] for n in chain)
    assert all(hop["edge"] == "supported_by" for n in chain for hop in n["path"])
    md = build(run_cli, claims_db, "c06", "--max-tokens", "8000")
    assert "### ↳ Tree canopy measurably lowers" in md  # one hop: one level
    assert re.search(r"^###   ↳ .*\nid: r01", md, re.M)  # two hops: indented one level more
    assert "relation: supports → c01" in md  # r01 hangs from the claim it supports


def test_supported_claims_are_all_descendants_grouped_by_depth(run_cli, claims_db):
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", "8000")
    down = section_of(doc, "Supported claims")
    expected = {"c07", "c09", "c10", "c11", "c12", "c13", "c14", "c15", "c16", "c17", "c18", "s05"}
    assert {n["id"] for n in down} == expected
    assert all(hop["edge"] == "supports" for n in down for hop in n["path"])
    assert [n["distance"] for n in down] == sorted(n["distance"] for n in down)
    md = build(run_cli, claims_db, "c06", "--max-tokens", "8000")
    labels = re.findall(r"^\*\*Depth (\d+)\*\*$", md, re.M)
    assert labels == [str(d) for d in range(1, len(labels) + 1)] and len(labels) >= 4


def test_a_supporters_other_conclusions_are_not_in_the_chain(run_cli, claims_db):
    # c01 supports both c06 and c05: c05 is a sibling conclusion, neither above nor below c06.
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", "8000")
    assert "c05" not in {n["id"] for n in doc["nodes"]}


def test_every_claim_shows_confidence_state_type_tags_and_support_links(run_cli, claims_db):
    md = build(run_cli, claims_db, "c06", "--max-tokens", "8000")
    block = md[md.index("### Expanding street-tree canopy") :].split("\n\n")[0]
    assert "type: thesis" in block and "tags: #health #heat" in block
    assert "- confidence: 0.78" in block and "- state: validated" in block
    assert "- supported by: c01, c02" in block and "- supports: c07, c09, c10" in block
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", "8000")
    target = doc["nodes"][0]
    assert target["neighbours"] == {"supported_by": ["c01", "c02"], "supports": ["c07", "c09", "c10"]}


def test_support_cycle_is_reported_and_not_followed(run_cli, claims_db):
    md = build(run_cli, claims_db, "c09", "--max-tokens", "8000")
    assert "cycle (supports): c19 → c20 → c21 → c19" in md
    doc = build_json(run_cli, claims_db, "c09", "--max-tokens", "8000")
    assert doc["meta"]["cycles"] == [{"edge": "supports", "path": ["c19", "c20", "c21", "c19"]}]
    ids = [n["id"] for n in doc["nodes"]]
    assert len(ids) == len(set(ids))  # each claim once, however many loops lead to it


def test_semantic_section_says_why_it_is_empty_without_embeddings(run_cli, claims_db):
    md = build(run_cli, claims_db, "c06", "--max-tokens", "8000")
    after = md[md.index("## Semantic context") :].split("\n\n")[0]
    assert "_Nothing here:" in after and "embed" in after


def test_closing_summary_counts_nodes_and_tokens_per_section(run_cli, claims_db):
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", "8000")
    summary = {s["name"]: s for s in doc["summary"]["sections"]}
    for prefix in ("Target", "Supporting", "Supported"):
        name = next(n for n in summary if n.startswith(prefix))
        shown = section_of(doc, prefix)
        assert summary[name]["nodes"] == len(shown)
        assert summary[name]["tokens"] == sum(n["tokens"] for n in shown)
    assert doc["summary"]["tokens"] == doc["meta"]["tokens"]


@pytest.mark.parametrize("budget", [300, 600, 1000, 1500, 2500, 4000])
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_budget_is_never_exceeded(run_cli, claims_db, budget, fmt):
    out = build(run_cli, claims_db, "c09", "--max-tokens", str(budget), "--format", fmt)
    assert count_tokens(out) <= budget


@pytest.mark.parametrize("budget", [1200, 2000, 3000])
def test_section_budgets_40_30_30_of_what_the_target_leaves(run_cli, claims_db, budget):
    """The target first; then the chain gets 40% and the descendants 30% of the rest, plus what the
    empty semantic section (30%) leaves unused, which flows on (seed 000's dynamic adjustment)."""
    doc = build_json(run_cli, claims_db, "c06", "--max-tokens", str(budget))
    per = {s["name"].split(" ")[0]: s["tokens"] for s in doc["summary"]["sections"]}
    rest = budget - per["Target"]
    assert per["Supporting"] <= (0.4 + 0.3) * rest
    assert per["Supported"] <= (0.3 + 0.3) * rest
    # Both relationship sections are over-subscribed here, so both get a real share.
    assert per["Supporting"] >= 0.25 * rest and per["Supported"] >= 0.15 * rest
    assert per["Semantic"] == 0


def test_deep_chains_stop_at_10_up_and_8_down(run_cli, tmp_path):
    records = [{"id": f"k{i:02d}", "content": f"Claim number {i} in a long chain.", "type": "claim"}
               for i in range(25)]
    for i in range(24):
        records[i]["supports"] = [f"k{i + 1:02d}"]
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    db = tmp_path / "chain.db"
    assert run_cli("import", str(path), db=db).exit_code == 0
    doc = json.loads(run_cli("build", "k12", "--lens", "claims", "--format", "json",
                             "--max-tokens", "20000", db=db).stdout)
    up = {n["id"] for n in section_of(doc, "Supporting")}
    down = {n["id"] for n in section_of(doc, "Supported")}
    assert up == {f"k{i:02d}" for i in range(2, 12)}  # 10 hops up: k11 .. k02
    assert down == {f"k{i:02d}" for i in range(13, 21)}  # 8 hops down: k13 .. k20


def test_same_graph_same_bytes(run_cli, claims_db):
    a = build(run_cli, claims_db, "c09", "--max-tokens", "1500")
    b = build(run_cli, claims_db, "c09", "--max-tokens", "1500")
    assert a == b
