"""docs/context.schema.json: a valid JSON Schema that every JSON output follows; node keys at every
budget. (The budget property test validates every build it generates against it as well.)"""

from __future__ import annotations

import json

from json_contract import SCHEMA, validator
from jsonschema import Draft202012Validator

from ctx.assemble import BuildRequest, build_context
from ctx.schema import SCHEMA_VERSION
from ctx.store import connect

def _json_of(result) -> dict:
    """A command's JSON document; a failed command shows its exit code and stderr, not a decode
    error (CI once saw `ctx stats --format json` print nothing here, under load 8; not reproduced)."""
    assert result.exit_code == 0 and result.stdout, (result.exit_code, result.stderr)
    return json.loads(result.stdout)


def _valid(kind: str, document: dict) -> None:
    errors = list(validator(kind).iter_errors(document))
    assert not errors, [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]


def test_the_schema_is_a_valid_json_schema_of_this_version():
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$defs"]["version"] == {"const": SCHEMA_VERSION}


def test_search_show_and_stats_follow_the_schema(demo_db, run_cli):
    search = _json_of(run_cli("search", "apollo", "--format", "json", db=demo_db))
    _valid("search", search)
    assert search["schema"] == SCHEMA_VERSION and search["count"] > 0
    show = _json_of(run_cli("show", "Project Apollo", "--format", "json", db=demo_db))
    _valid("show", show)
    assert {e["direction"] for e in show["edges"]} == {"in", "out"}
    _valid("stats", _json_of(run_cli("stats", "--format", "json", db=demo_db)))
    # Any of the four validates against the whole schema too.
    assert Draft202012Validator(SCHEMA).is_valid(show)


def test_the_schema_rejects_what_it_does_not_document(demo_db, run_cli):
    build = _json_of(run_cli("build", "Project Apollo", "--format", "json", db=demo_db))
    _valid("build", build)
    dropped = json.loads(json.dumps(build))
    del dropped["nodes"][0]["score"]
    assert not validator("build").is_valid(dropped)
    extra = json.loads(json.dumps(build))
    extra["nodes"][0]["undocumented"] = 1
    assert not validator("build").is_valid(extra)


def test_node_keys_are_the_same_at_every_budget(demo_db):
    required = SCHEMA["$defs"]["node"]["required"]
    conn = connect(demo_db)
    seen_sizes = set()
    for budget in (50, 60, 70, 80, 100, 150, 250, 400, 600, 1000, 4000):
        for lens in ("general", "planning", "research", "workspace"):
            text = build_context(conn, BuildRequest(("Project Apollo",), lens=lens, max_tokens=budget, format="json")).text
            document = json.loads(text)
            _valid("build", document)
            for node in document["nodes"]:
                assert all(key in node for key in required), (budget, lens, sorted(node))
                seen_sizes.add(len(node))
    # Both the smallest form (required keys only) and the full one occurred in this sweep.
    assert min(seen_sizes) == len(required) and max(seen_sizes) > len(required)
