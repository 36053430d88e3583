"""The ctx JSON graph format: nodes, edges, claims relations, errors with line numbers."""

from __future__ import annotations

import json
from pathlib import Path

from ctx.errors import EXIT_USAGE


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


CLAIMS = [
    {"id": "c1", "content": "Remote work raises output. Three firms saw it.", "confidence": 0.7,
     "state": "open", "type": "claim", "tags": ["work"]},
    {"id": "c2", "content": "Fewer interruptions at home.", "supports": ["c1"], "confidence": 0.8,
     "type": "claim"},
    {"id": "c3", "content": "Commutes waste time.", "supports": ["c1", "missing"], "type": "claim"},
    {"id": "c4", "content": "Quiet rooms help focus.", "supported_by": [], "supports": ["c2"],
     "type": "claim"},
    {"source": "c1", "target": "c3", "type": "link"},
]


def test_claims_graph_imports_nodes_edges_and_unresolved(tmp_path, run_cli):
    src = _write_jsonl(tmp_path / "claims.jsonl", CLAIMS)
    result = run_cli("import", str(src))
    assert result.exit_code == 0, result.stderr
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    assert stats["nodes_by_type"] == {"claim": 4, "tag": 1}
    # supports: c2->c1, c3->c1, c3->missing, c4->c2; one link; one tag edge.
    assert stats["edges"] == {"link": 1, "supports": 4, "tag": 1}
    assert stats["unresolved_links"] == 1


def test_supports_from_both_ends_is_one_edge(tmp_path, run_cli):
    records = [
        {"id": "a", "content": "A.", "supports": ["b"]},
        {"id": "b", "content": "B.", "supported_by": ["a"]},
    ]
    run_cli("import", str(_write_jsonl(tmp_path / "g.jsonl", records)))
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    assert stats["edges"] == {"supports": 1}


def test_claim_fields_and_title_from_content(tmp_path, run_cli):
    run_cli("import", str(_write_jsonl(tmp_path / "claims.jsonl", CLAIMS)))
    shown = json.loads(run_cli("show", "c1", "--format", "json").stdout)
    assert shown["title"] == "Remote work raises output."
    assert shown["fields"] == {"confidence": ["0.7"], "state": ["open"]}
    kinds = sorted((e["type"], e["direction"], e["id"]) for e in shown["edges"])
    assert ("supported_by", "in", "c2") in kinds and ("link", "out", "c3") in kinds


def test_malformed_jsonl_line_is_a_warning_naming_it_and_the_rest_imports(tmp_path, run_cli):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"id": "a"}\n\n{"id": "b", oops}\n{"id": "c"}\n', encoding="utf-8")
    result = run_cli("import", str(src), "--format", "json")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("ctx: warning:")]
    assert len(warnings) == 1 and "bad.jsonl:3: invalid JSON" in warnings[0]
    assert run_cli("show", "a").exit_code == 0 and run_cli("show", "c").exit_code == 0


def test_record_error_in_json_document_names_the_line(tmp_path, run_cli):
    src = tmp_path / "graph.json"
    src.write_text(
        '{"nodes": [\n  {"id": "a", "title": "A"},\n  {"title": "no id"}\n], "edges": []}\n',
        encoding="utf-8",
    )
    result = run_cli("import", str(src))
    assert result.exit_code == 0, result.stderr
    assert "graph.json:3" in result.stderr and "nodes[1]" in result.stderr and "record skipped" in result.stderr
    assert run_cli("show", "a").exit_code == 0


def test_an_unparseable_file_fails_the_import_and_leaves_previous_state(tmp_path, run_cli):
    src = tmp_path / "graph.json"
    src.write_text(json.dumps({"nodes": CLAIMS}), encoding="utf-8")
    run_cli("import", str(src))
    before = run_cli("stats", "--format", "json").stdout
    src.write_text(src.read_text()[:-20], encoding="utf-8")  # truncated
    result = run_cli("import", str(src))
    assert result.exit_code == EXIT_USAGE and "graph.json:1: invalid JSON" in result.stderr
    after = run_cli("stats", "--format", "json").stdout
    assert json.loads(after)["nodes"] == json.loads(before)["nodes"]


def test_a_first_import_that_fails_leaves_no_graph_behind(tmp_path, db_path, run_cli):
    src = tmp_path / "graph.json"
    src.write_text('{"nodes": [{"id": "a"', encoding="utf-8")
    assert run_cli("import", str(src), "--format", "json").exit_code == EXIT_USAGE
    # Nothing is created on failure: no graph file, so a later command says there is no graph
    # rather than answering from an empty one.
    assert not db_path.exists()
    stats = run_cli("stats", "--format", "json")
    assert stats.exit_code == 1 and "no graph at" in stats.stderr


def test_a_failed_import_of_a_new_source_leaves_no_source_behind(tmp_path, run_cli):
    good = tmp_path / "good.json"
    good.write_text('{"nodes": [{"id": "a", "title": "A"}]}', encoding="utf-8")
    assert run_cli("import", str(good), "--format", "json").exit_code == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [{"id": "b"', encoding="utf-8")
    assert run_cli("import", str(bad), "--format", "json").exit_code == EXIT_USAGE
    sources = json.loads(run_cli("stats", "--format", "json").stdout)["sources"]
    assert [s["root"] for s in sources] == [str(good)]


def test_tag_spelled_two_ways_names_its_node_the_same_every_run(tmp_path, run_cli):
    records = [
        {"id": "a", "title": "A", "tags": ["todo"]},
        {"id": "b", "title": "B", "tags": ["TODO"]},
        {"id": "c", "title": "C", "tags": ["ToDo"]},
    ]
    run_cli("import", str(_write_jsonl(tmp_path / "g.jsonl", records)))
    shown = json.loads(run_cli("show", "tag:todo", "--format", "json").stdout)
    # Sorted case-folded then exactly: "TODO" < "ToDo" < "todo".
    assert shown["title"] == "#TODO"
    assert {e["id"] for e in shown["edges"]} == {"a", "b", "c"}
