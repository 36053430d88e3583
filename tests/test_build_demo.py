"""Seed 003's success criteria on the demo vault (fixtures/demo-vault), through the real CLI."""

from __future__ import annotations

import json

import pytest

from ctx.assemble import BuildRequest, build_context
from ctx.store import connect, open_graph
from ctx.tokens import count_tokens
from json_contract import assert_valid_build, smallest_build_json


def cli(run_cli, demo_db, *args):
    return run_cli(*args, db=demo_db)


def test_topic_by_title_gives_a_structured_context(run_cli, demo_db):
    result = cli(run_cli, demo_db, "build", "Project Apollo")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "# Context: Project Apollo"
    assert lines[1].startswith("lens: general · tokens: ")
    # The heading carries the note's own date (frontmatter created: 2025-12-04).
    assert "## Topic\n\n### Project Apollo (2025-12-04)\nid: Projects/Project Apollo · type: project" in result.stdout
    assert "## Related" in result.stdout
    assert count_tokens(result.stdout) <= 4000


def test_node_id_depth_3_and_8000_tokens_are_respected(run_cli, demo_db):
    result = cli(run_cli, demo_db, "build", "Projects/Project Apollo", "--depth", "3", "--max-tokens", "8000",
                 "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["meta"]["depth"] == 3 and doc["meta"]["tokens"]["budget"] == 8000
    assert max(n["distance"] for n in doc["nodes"]) <= 3
    # Depth 3 walks a third hop where the graph has one: a person's notes reach further out.
    conn = open_graph(demo_db)
    far = build_context(conn, BuildRequest(("People/Priya Raman",), depth=3, max_tokens=8000)).candidates
    near = build_context(conn, BuildRequest(("People/Priya Raman",), depth=2, max_tokens=8000)).candidates
    assert max(r["distance"] for r in far) == 3 and max(r["distance"] for r in near) == 2
    assert {r["id"] for r in near} < {r["id"] for r in far}
    assert count_tokens(result.stdout) <= 8000 == doc["meta"]["tokens"]["budget"]
    assert doc["meta"]["tokens"]["used"] == count_tokens(result.stdout)


@pytest.mark.parametrize("budget", [50, 200, 499, 500, 1000, 4000, 8000])
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_output_never_exceeds_the_budget(run_cli, demo_db, budget, fmt):
    result = cli(run_cli, demo_db, "build", "Project Apollo", "--max-tokens", str(budget), "--format", fmt)
    assert result.exit_code == 0
    assert count_tokens(result.stdout) <= budget
    if fmt == "json":
        assert_valid_build(json.loads(result.stdout))
        if budget < 70:
            # The keys every JSON node carries do not fit 50 tokens for this topic: no node then.
            assert count_tokens(smallest_build_json(connect(demo_db), "Projects/Project Apollo", "general", budget)) > budget
            assert json.loads(result.stdout)["nodes"] == []
            return
    assert "Project Apollo" in result.stdout  # the seed is never dropped


def test_meeting_prep_lens_follows_attendees_and_puts_people_first(run_cli, demo_db):
    result = cli(run_cli, demo_db, "build", "2026-03-10 Apollo Weekly Sync", "--lens", "meeting-prep",
                 "--format", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["meta"]["lens"] == "meeting-prep"
    sections = [s["name"] for s in doc["sections"]]
    assert sections[:2] == ["Topic", "People"]
    people = next(s for s in doc["sections"] if s["name"] == "People")["ids"]
    assert {"People/Maya Chen", "People/Tomás Herrera"} & set(people)
    by_id = {n["id"]: n for n in doc["nodes"]}
    person = by_id[people[0]]
    assert person["path"][0]["edge"] == "field:attendees"
    assert person["score_parts"]["boost"] > 1
    general = json.loads(cli(run_cli, demo_db, "build", "2026-03-10 Apollo Weekly Sync", "--format", "json").stdout)
    assert [s["name"] for s in general["sections"]] == ["Topic", "Related"]


def test_planning_lens_boosts_tasks_with_deadlines(demo_db):
    doc = json.loads(build_context(open_graph(demo_db), BuildRequest(("Project Apollo",), lens="planning",
                                                                     format="json", max_tokens=3000)).text)
    nodes = [n for n in doc["nodes"] if n["distance"] > 0]
    assert nodes and nodes[0]["type"] == "task"
    assert doc["sections"][1]["name"] == "Goals, milestones and tasks"


def test_fields_are_shown_for_traversed_nodes(run_cli, demo_db):
    on = cli(run_cli, demo_db, "build", "Project Apollo", "--max-tokens", "3000")
    assert "- owner: [[Maya Chen]]" in on.stdout and "- status: active" in on.stdout
    off = cli(run_cli, demo_db, "build", "Project Apollo", "--max-tokens", "3000", "--no-include-fields")
    assert "- owner: [[Maya Chen]]" not in off.stdout


def test_directly_connected_nodes_rank_above_two_hop_nodes_with_the_same_boost(demo_db):
    result = build_context(open_graph(demo_db), BuildRequest(("Project Apollo",), format="json", max_tokens=20000))
    rows = [r for r in result.candidates if not r["id"].startswith("tag:")]
    one = [r for r in rows if r["distance"] == 1 and r["boost"] == 1.0 and r["distance_term"] == 1.0]
    two = [r for r in rows if r["distance"] == 2 and r["boost"] == 1.0]
    assert one and two
    assert min(r["score"] for r in one) > max(r["score"] for r in two)


def test_budget_is_used_when_candidates_exceed_it(demo_db):
    conn = open_graph(demo_db)
    for budget in (500, 1000, 2000, 3000):
        for fmt in ("markdown", "json"):
            result = build_context(conn, BuildRequest(("Project Apollo",), format=fmt, max_tokens=budget, depth=2))
            assert result.meta["store_tokens"] > budget
            used = count_tokens(result.text)
            assert 0.9 * budget <= used <= budget, (budget, fmt, used)


def test_two_topics_blend(run_cli, demo_db):
    result = cli(run_cli, demo_db, "build", "Project Apollo", "Maya Chen", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["meta"]["topic"] == ["Project Apollo", "Maya Chen"]
    assert set(doc["sections"][0]["ids"]) == {"Projects/Project Apollo", "People/Maya Chen"}


def test_same_bytes_every_time(run_cli, demo_db):
    args = ("build", "Project Apollo", "--lens", "planning", "--max-tokens", "1500")
    assert cli(run_cli, demo_db, *args).stdout == cli(run_cli, demo_db, *args).stdout


def test_every_lens_builds_within_budget(demo_db):
    conn = open_graph(demo_db)
    for lens in ("general", "writing", "coding", "planning", "meeting-prep"):
        for fmt in ("markdown", "json"):
            result = build_context(conn, BuildRequest(("Project Apollo",), lens=lens, format=fmt, max_tokens=1200))
            assert count_tokens(result.text) <= 1200 and result.found
