"""`ctx search` accepts anything a person or an agent might type."""

from __future__ import annotations

import json

import pytest

HOSTILE = [
    '"', '""', '"unbalanced', "it's", "AND", "OR", "NOT", "NEAR", "NEAR(apollo sync)", "apollo AND",
    "OR risk", "NOT launch", "*", "apollo*", "*apollo", "-", "-apollo", "--", "(", ")", "(apollo",
    "apollo)", "((()", ":", "title:apollo", "body:", "^", "^apollo",
    "Tomás Herrera", "日本語のテキスト", "emoji 🚀 launch", "a" * 5000, "apollo " * 500,
    "{curly}", "[brackets]", "a+b", "a/b\\c", "%_", "';--", "\x00", "NULL", "apollo NOT",
]


@pytest.mark.parametrize("query", HOSTILE, ids=[repr(q[:20]) for q in HOSTILE])
def test_hostile_queries_return_normally(query, demo_db, run_cli):
    for extra in ([], ["--format", "json"]):
        # `--` ends the options, so a query starting with '-' is still a query (as in any shell).
        result = run_cli("search", *extra, "--db", str(demo_db), "--", query)
        assert result.exit_code == 0, (query, result.stderr)
        if extra:
            json.loads(result.stdout)


@pytest.mark.parametrize("query", ["", "   ", "\t"], ids=repr)
def test_a_blank_query_is_a_usage_error(query, demo_db, run_cli):
    """As `ctx build ""` is (until dc7f3bd a blank search printed "no matches" and exited 0)."""
    for extra in ([], ["--format", "json"]):
        result = run_cli("search", *extra, "--db", str(demo_db), "--", query)
        assert result.exit_code == 2 and result.stdout == "", (query, result.stdout)
        assert result.stderr == "ctx: error: give some text to search for\n"


def test_search_finds_demo_notes(demo_db, run_cli):
    hits = json.loads(run_cli("search", "conflict resolution", "--format", "json", db=demo_db).stdout)["results"]
    assert hits[0]["id"] == "Tasks/Finish conflict resolution"
    assert hits[0]["source_path"] == "Tasks/Finish conflict resolution.md"
    accented = json.loads(run_cli("search", "Tomas", "--format", "json", db=demo_db).stdout)["results"]
    assert "People/Tomás Herrera" in [h["id"] for h in accented]
