"""`ctx build` on small graphs written here: ranking, depth, fields, not-found, blending, caps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from build_graphs import chain_graph, hub_graph, import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context
from ctx.errors import EXIT_NOT_FOUND, EXIT_USAGE, UsageError
from ctx.tokens import count_tokens
from json_contract import smallest_build_json


@pytest.fixture
def chain(tmp_path: Path, db_path: Path):
    return import_into(db_path, write_jsonl(tmp_path / "chain.jsonl", chain_graph()))


def build(conn, *topics: str, **kw) -> tuple:
    result = build_context(conn, BuildRequest(tuple(topics), **kw))
    doc = json.loads(result.text) if kw.get("format") == "json" else None
    return result, doc


def nodes_by_id(doc: dict) -> dict[str, dict]:
    return {n["id"]: n for n in doc["nodes"]}


def test_one_hop_outranks_an_otherwise_identical_two_hop_node(chain):
    _, doc = build(chain, "seed", format="json")
    nodes = nodes_by_id(doc)
    assert nodes["twin1"]["distance"] == 1 and nodes["twin2"]["distance"] == 2
    assert nodes["twin1"]["score"] > nodes["twin2"]["score"]
    assert nodes["twin1"]["rank"] < nodes["twin2"]["rank"]
    assert nodes["near"]["score"] > nodes["far"]["score"]


def test_seed_ranks_first_and_is_in_the_topic_section(chain):
    _, doc = build(chain, "Seed", format="json")
    assert doc["nodes"][0]["id"] == "seed" and doc["nodes"][0]["distance"] == 0
    assert doc["sections"][0] == {"name": "Topic", "ids": ["seed"]}
    assert doc["meta"]["resolved"] == [{"topic": "Seed", "ids": ["seed"], "how": "title"}]


def test_json_has_the_contract_keys_and_every_score_part(chain):
    _, doc = build(chain, "seed", format="json")
    assert doc["meta"]["lens"] == "general"
    assert doc["meta"]["tokens"]["budget"] == 4000
    for node in doc["nodes"]:
        assert {"id", "title", "distance", "score", "tokens", "source_path", "path", "truncated"} <= set(node)
        assert set(node["score_parts"]) == {"distance", "similarity", "recency", "boost"}
    far = nodes_by_id(doc)["far"]
    assert [h["edge"] for h in far["path"]] == ["link", "link"]
    assert far["path"][0] == {"edge": "link", "from": "seed", "to": "near"}


def test_depth_limits_the_walk(chain):
    _, one = build(chain, "seed", depth=1, format="json")
    assert set(nodes_by_id(one)) == {"seed", "near", "twin1"}
    _, zero = build(chain, "seed", depth=0, format="json")
    assert set(nodes_by_id(zero)) == {"seed"}
    assert one["meta"]["depth"] == 1


def test_backlinks_are_walked_too(chain):
    _, doc = build(chain, "far", depth=1, format="json")
    near = nodes_by_id(doc)["near"]
    assert near["path"][0]["edge"] == "backlink"


def test_fields_are_included_unless_switched_off(chain):
    with_fields, _ = build(chain, "seed")
    assert "- status: active" in with_fields.text
    without, _ = build(chain, "seed", include_fields=False)
    assert "status: active" not in without.text
    _, doc = build(chain, "seed", format="json", include_fields=False)
    assert nodes_by_id(doc)["seed"]["fields"] == {}


def test_markdown_node_block_shows_id_type_distance_score_and_path(chain):
    result, _ = build(chain, "seed")
    assert "### Far (2024-05-08)\nid: far · type: note · distance: 2 (link > link) · score: " in result.text
    assert "### Seed (2024-05-10)\nid: seed · type: project · distance: 0 (topic)" in result.text


def test_header_reports_the_true_token_count(chain):
    for fmt in ("markdown", "json"):
        result, _ = build(chain, "seed", format=fmt, max_tokens=300)
        used = count_tokens(result.text)
        assert used <= 300
        if fmt == "json":
            assert json.loads(result.text)["meta"]["tokens"]["used"] == used
        else:
            assert f"{used}/300" in result.text.splitlines()[0] + result.text.splitlines()[1]


def test_no_wall_clock_recency_is_relative_to_the_newest_update(chain):
    _, doc = build(chain, "seed", format="json")
    assert doc["meta"]["scoring"]["recency_reference"] == "2024-05-10"
    assert nodes_by_id(doc)["seed"]["score_parts"]["recency"] == 1.0


def test_without_embeddings_weights_are_60_40_and_the_output_says_so(chain):
    result, _ = build(chain, "seed")
    assert "scoring: 0.6 distance + 0.4 recency; no embeddings" in result.text
    _, doc = build(chain, "seed", format="json")
    assert doc["meta"]["scoring"]["weights"] == {"distance": 0.6, "similarity": 0.0, "recency": 0.4}


def test_multiple_topics_blend_into_one_context(chain):
    _, doc = build(chain, "seed", "island", format="json")
    nodes = nodes_by_id(doc)
    assert nodes["seed"]["distance"] == 0 and nodes["island"]["distance"] == 0
    assert doc["sections"][0]["ids"] == ["seed", "island"] or set(doc["sections"][0]["ids"]) == {"seed", "island"}


def test_one_of_several_topics_missing_is_a_warning_not_a_failure(chain):
    result, doc = build(chain, "seed", "no such thing zzz", format="json")
    assert result.found
    assert any("no such thing zzz" in w for w in result.warnings)


def test_not_found_prints_an_empty_context_and_exits_3(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    result = run_cli("build", "qwertyuiop")
    assert result.exit_code == EXIT_NOT_FOUND == 3
    assert "No matching nodes found for 'qwertyuiop'." in result.stdout
    assert result.stderr.strip().splitlines()[-1] == "ctx: error: no node matches 'qwertyuiop'"
    as_json = run_cli("build", "qwertyuiop", "--format", "json")
    assert as_json.exit_code == 3
    doc = json.loads(as_json.stdout)
    assert doc["nodes"] == [] and doc["meta"]["found"] is False


@pytest.mark.parametrize("budget", [50, 60, 200])
def test_a_long_missing_topic_cannot_push_the_not_found_context_over_budget(tmp_path, run_cli, budget):
    # The not-found line used to repeat every topic whole: a 3,000-character topic printed
    # 388 tokens under --max-tokens 60.
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    from ctx.assemble import MAX_TOPICS

    many = [f"zzqq{i}" for i in range(MAX_TOPICS)]  # as many as one build takes
    for topics in (["x" * 3000], many):
        result = run_cli("build", *topics, "--max-tokens", str(budget))
        assert result.exit_code == EXIT_NOT_FOUND
        assert count_tokens(result.stdout) <= budget
        assert "No matching nodes found" in result.stdout


def test_usage_errors_exit_2(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    assert run_cli("build", "seed", "--max-tokens", "10").exit_code == EXIT_USAGE
    bad_format = run_cli("build", "seed", "--format", "yaml")
    assert bad_format.exit_code == EXIT_USAGE
    assert "--format must be markdown or json" in bad_format.stderr
    missing_lens = run_cli("build", "seed", "--lens", "nope")
    assert missing_lens.exit_code == EXIT_USAGE and "no lens named 'nope'" in missing_lens.stderr


def test_request_validation_in_the_core(chain):
    with pytest.raises(UsageError):
        build_context(chain, BuildRequest((), max_tokens=100))
    with pytest.raises(UsageError):
        build_context(chain, BuildRequest(("seed",), max_tokens=49))


def test_depth_above_the_lens_cap_is_capped_with_a_notice(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    result = run_cli("build", "seed", "--depth", "9", "--format", "json")
    assert result.exit_code == 0
    assert "ctx: warning: --depth 9 capped to 5" in result.stderr
    assert json.loads(result.stdout)["meta"]["depth"] == 5


def test_fan_out_cap_keeps_top_n_and_reports_the_rest(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "hub.jsonl", hub_graph(120)))
    result, doc = build(conn, "hub", format="json", max_tokens=20000)
    fan = doc["meta"]["fan_out"]
    assert fan == {"cap": 50, "capped_nodes": 1, "neighbours_left_out": 70,
                   "capped": [{"id": "hub", "kept": 50, "left_out": 70}]}
    assert doc["meta"]["counts"]["full"] + doc["meta"]["counts"]["omitted"] <= 51
    assert any("fan-out capped at 50" in w for w in result.warnings)
    md, _ = build(conn, "hub")
    assert "fan-out capped at 50 neighbours per node for 1 node(s); 70 neighbour link(s) left out" in md.text
    # The kept children are the most recent ones (recency is part of the pre-score).
    kept = {n["id"] for n in doc["nodes"]} - {"hub"}
    left_out_sample = "child027"  # updated 2024-05-28: among the newest, so kept
    assert left_out_sample in kept


def test_explain_lists_every_candidate_with_its_fate(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    result = run_cli("build", "seed", "--explain", "--max-tokens", "120")
    assert result.exit_code == 0
    table = result.stderr
    for node_id in ("seed", "near", "far", "twin1", "twin2"):
        assert f"  {node_id}  " in table or f"{node_id} " in table
    assert "decision" in table and "reason" in table
    assert "summarized" in table or "dropped" in table
    # stdout carries only the context.
    assert "decision" not in result.stdout


def test_every_omitted_node_in_json_says_why_as_explain_does(tmp_path, db_path):
    """The JSON ``omitted`` list is counted into the budget before the audit writes reasons, so a
    node the budget alone left out was listed with "reason": "" (926b9cf): an agent learnt nothing."""
    conn = import_into(db_path, write_jsonl(tmp_path / "hub.jsonl", hub_graph(40)))
    result, doc = build(conn, "hub", format="json", max_tokens=700, explain=True)
    assert doc["omitted"] and doc["omitted_count"] > len(doc["omitted"])
    explained = {r["id"]: r["reason"] for r in result.candidates}
    for entry in doc["omitted"]:
        assert entry["reason"] and entry["reason"] == explained[entry["id"]], entry
    assert len(result.text) and count_tokens(result.text) <= 700


def test_explain_rows_from_the_core(chain):
    result, _ = build(chain, "seed", max_tokens=4000, explain=True)
    rows = {r["id"]: r for r in result.candidates}
    assert rows["seed"]["decision"] == "full" and rows["seed"]["reason"] == "the topic"
    assert rows["far"]["path"] == "link > link"
    assert "explain" in result.meta


def test_summary_only_below_500_warns(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    result = run_cli("build", "seed", "--max-tokens", "200")
    assert result.exit_code == 0
    assert "below 500: summary-first context" in result.stderr
    assert count_tokens(result.stdout) <= 200


def test_output_is_byte_identical_across_runs(tmp_path, run_cli):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    for fmt in ("markdown", "json"):
        first = run_cli("build", "seed", "--format", fmt, "--max-tokens", "700")
        second = run_cli("build", "seed", "--format", fmt, "--max-tokens", "700")
        assert first.stdout == second.stdout and first.exit_code == 0


def test_piped_stdout_is_exactly_the_core_text(tmp_path, run_cli, db_path):
    run_cli("import", str(write_jsonl(tmp_path / "g.jsonl", chain_graph())))
    from ctx.store import open_graph

    expected = build_context(open_graph(db_path), BuildRequest(("seed",), max_tokens=900)).text
    assert run_cli("build", "seed", "--max-tokens", "900").stdout == expected


def test_seed_is_shortened_not_dropped(tmp_path, db_path):
    long_body = " ".join(f"Sentence number {i} about the launch." for i in range(400))
    conn = import_into(db_path, write_jsonl(tmp_path / "big.jsonl", [
        {"id": "big", "title": "Big note", "body": long_body, "updated": "2024-05-01", "links": ["small"]},
        {"id": "small", "title": "Small", "body": "Short.", "updated": "2024-05-01"},
    ]))
    for budget in (50, 120, 600, 1500):
        for fmt in ("markdown", "json"):
            result, _ = build(conn, "big", max_tokens=budget, format=fmt)
            assert count_tokens(result.text) <= budget
            # In JSON every node carries the schema's keys: where even those do not fit, no node.
            fits = fmt == "markdown" or count_tokens(smallest_build_json(conn, "big", "general", budget)) <= budget
            assert "Big note" in result.text if fits else '"nodes":[]' in result.text
    assert count_tokens(smallest_build_json(conn, "big", "general", 50)) > 50  # the case is under test
    result, doc = build(conn, "big", max_tokens=1500, format="json")
    seed = nodes_by_id(doc)["big"]
    assert seed["truncated"] is True
    assert seed["content"].endswith("…") and seed["content"].rstrip(" …").endswith(".")  # at a sentence end
    assert count_tokens(result.text) >= 0.9 * 1500


def test_private_nodes_never_appear(tmp_path, db_path):
    conn = import_into(db_path, write_jsonl(tmp_path / "p.jsonl", [
        {"id": "pub", "title": "Public", "body": "Open.", "links": ["sec"]},
        {"id": "sec", "title": "Secret", "body": "MARKER-4711", "tags": ["private"], "links": ["behind"]},
        {"id": "behind", "title": "Behind", "body": "Only reachable through the secret."},
    ]))
    for fmt in ("markdown", "json"):
        result, _ = build(conn, "pub", format=fmt, depth=3)
        assert "MARKER-4711" not in result.text and "Secret" not in result.text
        assert "Behind" not in result.text
    missing, _ = build(conn, "sec")
    assert not missing.found
