"""The `workspace` (seed 001) and `research` (seed 002) lenses: real imports, real CLI, tiktoken counts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import corpus_path
from ctx.tokens import count_tokens

WORKSPACE_SECTIONS = [
    "## Focused content", "## Ancestors", "## Siblings", "## Children",
    "## Related content", "## Connected items", "## Recent activity",
]


def outline_records() -> list[dict]:
    """root > a1 > a2 > page > b1..b8 (positions); b4 has c1..c7; links, and an activity window."""
    day = "2026-05-{:02d}T{:02d}:00:00Z"
    recs = [
        {"id": "root", "title": "Workspace root", "body": "Top of the workspace.", "updated": day.format(1, 9)},
        {"id": "a1", "title": "Area", "parent": "root", "body": "An area of work.", "updated": day.format(1, 9)},
        {"id": "a2", "title": "Project", "parent": "a1", "body": "A project in the area.", "updated": day.format(1, 9)},
        {"id": "page", "title": "Design page", "parent": "a2", "body": "The design page.", "updated": day.format(1, 9)},
    ]
    for i in range(1, 9):
        recs.append({"id": f"b{i}", "title": f"Block {i}", "parent": "page", "position": i,
                     "body": f"Design block number {i}.", "updated": day.format(2, 9)})
    for i in range(1, 8):
        recs.append({"id": f"c{i}", "title": f"Sub-block {i}", "parent": "b4", "position": i,
                     "body": f"Detail {i} of block four.", "updated": day.format(2, 9)})
    recs[recs.index(next(r for r in recs if r["id"] == "b4"))].update(
        {"links": ["spec"], "body": "Block four: the caching design. It keeps hot reads in memory. "
                                    "Writes go through a log. The log is compacted nightly."})
    recs += [
        {"id": "spec", "title": "Cache spec", "body": "The cache specification.", "updated": day.format(3, 9)},
        {"id": "review", "title": "Review notes", "body": "Review of the design.", "links": ["b4"],
         "updated": day.format(3, 9)},
        {"id": "fresh", "title": "Fresh edit", "body": "Edited an hour before the newest change.",
         "updated": day.format(10, 8)},
        {"id": "newest", "title": "Newest edit", "body": "The graph's newest change.", "updated": day.format(10, 9)},
        {"id": "stale", "title": "Stale edit", "body": "Edited four days before.", "updated": day.format(6, 9)},
    ]
    return recs


@pytest.fixture(scope="module")
def outline_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ctx.importers.engine import import_path
    from ctx.store import connect

    folder = tmp_path_factory.mktemp("outline")
    path = folder / "workspace.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in outline_records()) + "\n", encoding="utf-8")
    conn = connect(folder / "g.db", create=True)
    import_path(conn, path)
    conn.close()
    return folder / "g.db"


def build(run_cli, db: Path, *args: str) -> str:
    result = run_cli("build", *args, db=db)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def ids_in(doc: dict, section: str) -> list[str]:
    return next((s["ids"] for s in doc["sections"] if s["name"] == section), [])


# -- workspace ------------------------------------------------------------------------------------


def test_workspace_sections_present_and_in_order(run_cli, outline_db):
    out = build(run_cli, outline_db, "b4", "--lens", "workspace", "--max-tokens", "4000")
    positions = [out.index(s) for s in WORKSPACE_SECTIONS]
    assert positions == sorted(positions)


def test_workspace_focus_ancestors_siblings_children(run_cli, outline_db):
    doc = json.loads(build(run_cli, outline_db, "b4", "--lens", "workspace", "--format", "json"))
    assert ids_in(doc, "Focused content") == ["b4"]
    assert ids_in(doc, "Ancestors") == ["page", "a2", "a1"]  # up to 3, nearest first: not root
    assert ids_in(doc, "Siblings") == ["b2", "b3", "b5", "b6"]  # 2 before and 2 after, by position
    assert len(ids_in(doc, "Children")) == 5  # up to 5 of c1..c7
    assert ids_in(doc, "Children") == sorted(ids_in(doc, "Children"))  # in document order
    assert set(ids_in(doc, "Connected items")) == {"spec", "review"}  # a link and a backlink


def test_workspace_activity_is_relative_to_the_newest_update(run_cli, outline_db):
    doc = json.loads(build(run_cli, outline_db, "b4", "--lens", "workspace", "--format", "json"))
    assert ids_in(doc, "Recent activity") == ["newest", "fresh"]  # newest first; "stale" is 96 h old


def test_workspace_semantic_section_says_why_it_is_empty(run_cli, outline_db):
    out = build(run_cli, outline_db, "b4", "--lens", "workspace")
    block = out[out.index("## Related content") :].split("\n\n")[0]
    assert "_Nothing here:" in block


@pytest.mark.parametrize("strategy", ["keep-start", "keep-end", "extractive"])
def test_truncation_strategy_is_chosen_by_the_lens(run_cli, outline_db, tmp_path, strategy):
    import yaml

    from ctx.lenses import builtin_lens_dir

    data = yaml.safe_load((builtin_lens_dir() / "workspace.yaml").read_text(encoding="utf-8"))
    data["truncation"] = {"strategy": strategy}
    data["output"] = {"summary_below": 50, "empty_sections": False, "also_related": False}
    lens = tmp_path / "ws.yaml"
    lens.write_text(yaml.safe_dump(data), encoding="utf-8")
    # The largest budget that still cuts the block (the header and the node's keys, its date
    # among them, take the rest): the strategy then decides which part stays.
    for budget in range(240, 99, -5):
        doc = json.loads(build(run_cli, outline_db, "b4", "log compacted", "--lens", str(lens),
                               "--format", "json", "--max-tokens", str(budget), "--depth", "0"))
        seed = next(n for n in doc["nodes"] if n["id"] == "b4")
        if seed["truncated"]:
            break
    text = seed["content"]
    assert seed["truncated"] and text
    if strategy == "keep-start":
        assert text.startswith("Block four") and text.endswith("…")
    elif strategy == "keep-end":
        assert text.startswith("…") and text.endswith("compacted nightly.")
    else:  # the sentence with the topic's words, wherever it is
        assert "The log is compacted nightly." in text


def test_workspace_on_the_demo_vault(run_cli, demo_db):
    out = build(run_cli, demo_db, "Apollo Launch Plan", "--lens", "workspace", "--max-tokens", "3000")
    for name in ("## Focused content", "## Connected items", "## Recent activity"):
        assert name in out
    assert count_tokens(out) <= 3000


@pytest.mark.parametrize("budget", [900, 1500, 4000])
def test_workspace_section_budgets_follow_the_seed_defaults(run_cli, demo_db, budget):
    doc = json.loads(build(run_cli, demo_db, "Project Apollo", "--lens", "workspace", "--format", "json",
                           "--max-tokens", str(budget)))
    assert doc["meta"]["tokens"]["used"] <= budget
    by_section: dict[str, int] = {}
    for n in doc["nodes"]:
        by_section[n["section"]] = by_section.get(n["section"], 0) + n["tokens"]
    # Activity has 8% of the content budget and nothing flows into it from later sections.
    assert by_section.get("Recent activity", 0) <= 0.08 * budget + 60


# -- research -------------------------------------------------------------------------------------

QUESTION = "What did the architecture review decide about sync?"


def test_research_numbers_sources_with_title_and_path(run_cli, demo_db):
    out = build(run_cli, demo_db, QUESTION, "--lens", "research", "--max-tokens", "3000")
    numbers = [int(n) for n in re.findall(r"^### \[(\d+)\] ", out, re.M)]
    assert numbers[0] == 1 and sorted(set(numbers)) == list(range(1, max(numbers) + 1))
    assert "### [1] 2026-02-03 Architecture Review — Meetings/2026-02-03 Architecture Review.md" in out


def test_research_json_has_citation_map_truncated_and_total_tokens(run_cli, demo_db):
    raw = build(run_cli, demo_db, QUESTION, "--lens", "research", "--max-tokens", "3000", "--format", "json")
    doc = json.loads(raw)
    cites = doc["citations"]
    assert list(cites) == [str(i) for i in range(1, len(cites) + 1)]
    for entry in cites.values():
        assert set(entry) == {"id", "title", "source_path", "score"}
    scores = [c["score"] for c in cites.values()]
    assert scores == sorted(scores, reverse=True)  # best source first
    assert {n["citation"] for n in doc["nodes"]} == {int(k) for k in cites}
    assert isinstance(doc["truncated"], bool)
    assert doc["total_tokens"] == doc["meta"]["tokens"]["used"] == count_tokens(raw)


def test_research_truncates_to_the_budget_and_says_so(run_cli, demo_db):
    raw = build(run_cli, demo_db, QUESTION, "--lens", "research", "--max-tokens", "700", "--format", "json")
    doc = json.loads(raw)
    assert count_tokens(raw) <= 700 and doc["truncated"] is True


def test_research_blocks_of_one_document_share_one_citation(run_cli, tmp_path):
    pages = tmp_path / "graph" / "pages"
    pages.mkdir(parents=True)
    (pages / "Harbour.md").write_text(
        "- The harbour crane lifts containers.\n- The harbour crane was serviced in May.\n"
        "- Unrelated block about lunch.\n", encoding="utf-8")
    (pages / "Crane vendors.md").write_text("- Crane vendors: two quotes for a new harbour crane.\n",
                                           encoding="utf-8")
    db = tmp_path / "g.db"
    assert run_cli("import", str(tmp_path / "graph"), "--format", "logseq", db=db).exit_code == 0
    doc = json.loads(build(run_cli, db, "harbour crane", "--lens", "research", "--format", "json"))
    by_path: dict[str, set[int]] = {}
    for n in doc["nodes"]:
        by_path.setdefault(n["source_path"], set()).add(n["citation"])
    assert all(len(numbers) == 1 for numbers in by_path.values())
    assert len(doc["citations"]) == len(by_path)
    harbour = next(c for c in doc["citations"].values() if c["source_path"].endswith("Harbour.md"))
    best = max(n["score"] for n in doc["nodes"] if n["source_path"].endswith("Harbour.md"))
    assert harbour["score"] == best


def test_research_same_question_same_bytes(run_cli, demo_db):
    a = build(run_cli, demo_db, QUESTION, "--lens", "research", "--max-tokens", "1200")
    assert a == build(run_cli, demo_db, QUESTION, "--lens", "research", "--max-tokens", "1200")


# -- real corpora ---------------------------------------------------------------------------------


def test_workspace_and_research_on_logseq_docs(run_cli, tmp_path):
    source = corpus_path("logseq-docs")
    db = tmp_path / "logseq.db"
    assert run_cli("import", str(source), db=db).exit_code == 0
    for lens, topic in (("workspace", "Queries"), ("research", "how do I write an advanced query")):
        for fmt in ("markdown", "json"):
            result = run_cli("build", topic, "--lens", lens, "--format", fmt, "--max-tokens", "2500", db=db)
            assert result.exit_code == 0, result.stderr
            assert count_tokens(result.stdout) <= 2500
    doc = json.loads(run_cli("build", "how do I write an advanced query", "--lens", "research",
                             "--format", "json", db=db).stdout)
    paths = [c["source_path"] for c in doc["citations"].values()]
    assert len(paths) == len(set(paths))  # one citation per document
