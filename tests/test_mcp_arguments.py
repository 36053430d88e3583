"""MCP tool arguments are checked the way the CLI checks its flags: an unknown argument is refused,
a missing or mistyped one is a one-line `ctx: error:` naming it (never pydantic's text or a URL),
and a mistake never costs the session. Through the MCP SDK's own stdio client, like an agent."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp", reason="the MCP SDK is the mcp extra")

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


def _calls(db: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, list[str]], list[Any]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    results: list[Any] = []
    schemas: dict[str, list[str]] = {}

    async def main() -> None:
        params = StdioServerParameters(command=CTX or "ctx", args=["mcp", "--db", str(db)])
        async with Client(params, read_timeout_seconds=120) as client:
            for tool in (await client.list_tools()).tools:
                schemas[tool.name] = list(tool.input_schema.get("properties", {}))
            for name, arguments in calls:
                results.append(await client.call_tool(name, arguments))
            alive = await client.call_tool("search", {"query": "apollo"})
            assert not alive.is_error  # the session survived every mistake

    anyio.run(main)
    return schemas, results


def test_unknown_missing_and_mistyped_arguments_are_one_line_cli_errors(demo_db):
    long_name = "x" * 300
    calls = [
        ("context", {"topic": "Project Apollo", "maxtokens": 100}),
        ("search", {"query": "apollo", "bogus": 1, "also": 2}),
        ("lenses", {long_name: "general"}),
        ("context", {}),
        ("context", {"topic": "Project Apollo", "max_tokens": "plenty"}),
        ("context", {"topic": 5}),
        ("show", {"node": ["Project Apollo"]}),
    ]
    schemas, results = _calls(demo_db, calls)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    for text in texts:
        assert len(text.splitlines()) == 1 and text.startswith("ctx: error: ")
        assert "http" not in text and "pydantic" not in text and "validation error" not in text.lower()
    assert texts[0] == f"ctx: error: context: unknown argument 'maxtokens' (it takes: {', '.join(schemas['context'])})"
    assert texts[1] == f"ctx: error: search: unknown argument 'also', 'bogus' (it takes: {', '.join(schemas['search'])})"
    # A hostile argument name is clipped, not echoed whole.
    assert texts[2] == f"ctx: error: lenses: unknown argument '{'x' * 39}…' (it takes: {', '.join(schemas['lenses'])})"
    assert texts[3] == "ctx: error: context needs 'topic'"
    assert texts[4] == "ctx: error: max_tokens must be an integer, not a string"
    assert texts[5] == "ctx: error: topic must be a string or a list, not an integer"
    assert texts[6] == "ctx: error: node must be a string, not a list"
