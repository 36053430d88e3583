"""`ctx mcp` speaks the protocol itself (ctx.mcp_wire): the MCP SDK's own client works against it
in both protocol eras, and what a client may send wrong gets a JSON-RPC error, never a dead
server or a byte on stdout that is not a protocol message."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctx.commands.mcp_argv import parse_mcp

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _sdk_session(db: Path, mode: str) -> dict[str, Any]:
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp", reason="the MCP SDK's client is the mcp extra")
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    seen: dict[str, Any] = {}

    async def main() -> None:
        params = StdioServerParameters(command=CTX or "ctx", args=["mcp", "--db", str(db)])
        async with Client(params, read_timeout_seconds=120, mode=mode) as client:
            seen["tools"] = [tool.name for tool in (await client.list_tools()).tools]
            seen["context"] = await client.call_tool("context", {"topic": "Project Apollo", "max_tokens": 400})
            seen["capped"] = await client.call_tool("context", {"topic": "Project Apollo", "depth": 9, "max_tokens": 400})
            seen["unknown"] = await client.call_tool("no_such_tool", {})

    anyio.run(main)
    return seen


def test_the_sdk_client_works_in_both_protocol_eras(demo_db: Path) -> None:
    legacy = _sdk_session(demo_db, "legacy")  # the initialize handshake (clients before 2026)
    modern = _sdk_session(demo_db, "auto")  # server/discover and the per-request envelope
    cli = subprocess.run([CTX or "ctx", "build", "Project Apollo", "-t", "400", "--db", str(demo_db)],
                         capture_output=True, timeout=120)
    for seen in (legacy, modern):
        assert seen["tools"] == ["context", "search", "show", "lenses", "context_map", "expand"]
        assert not seen["context"].is_error
        assert seen["context"].content[0].text.encode() == cli.stdout
        assert seen["capped"].meta["ctx/warnings"] and len(seen["capped"].content) == 2
        assert seen["unknown"].is_error
        assert seen["unknown"].content[0].text == (
            "ctx: error: unknown tool 'no_such_tool' (tools: context, search, show, lenses, context_map, expand)"
        )


def _raw(db: Path, messages: list[Any], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Send lines to `ctx mcp` on stdin, close it, and read every line it wrote to stdout."""
    lines = b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages)
    proc = subprocess.run([CTX or "ctx", "mcp", "--db", str(db)], input=lines, capture_output=True, timeout=120,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]  # every stdout line is a message


def _by_id(replies: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {reply.get("id"): reply for reply in replies}


def test_the_envelope_era_refuses_what_it_does_not_serve(demo_db: Path) -> None:
    replies = _by_id(_raw(demo_db, [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}},
        b"{not json\n",
        {"jsonrpc": "2.0", "method": "notifications/whatever"},  # a notification: no answer
        {"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {"_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list",
         "params": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "apollo", "limit": "lots"}, "_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search", "arguments": [], "_meta": ENVELOPE}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": "apollo"}, "_meta": ENVELOPE}},
    ]))
    discover = replies[1]["result"]
    assert discover["supportedVersions"] == ["2026-07-28"] and discover["resultType"] == "complete"
    assert discover["capabilities"] == {"tools": {"listChanged": False}}
    assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "ctx"
    assert replies[None]["error"]["code"] == -32700  # the line that was not JSON
    assert replies[2]["error"]["code"] == -32601
    assert replies[3]["error"]["code"] == -32022 and replies[3]["error"]["data"]["supported"] == ["2026-07-28"]
    assert replies[4]["error"]["code"] == -32602  # no envelope on an envelope connection
    assert replies[5]["error"] == {"code": -32022, "message": "Unsupported protocol version",
                                   "data": {"supported": ["2026-07-28"], "requested": "2099-01-01"}}
    assert replies[6]["result"]["isError"]
    assert replies[6]["result"]["content"][0]["text"] == "ctx: error: limit must be an integer, not a string"
    assert replies[7]["error"]["code"] == -32602
    assert not replies[8]["result"]["isError"] and replies[8]["result"]["resultType"] == "complete"
    assert len(replies) == 9


def test_a_request_of_the_wrong_shape_is_answered_by_its_id(demo_db: Path) -> None:
    replies = _by_id(_raw(demo_db, [
        {"jsonrpc": "2.0", "id": 1, "method": 123},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": "string"},
        {"jsonrpc": "2.0", "id": 3, "method": None, "params": {}},
        {"jsonrpc": "2.0", "method": 7},  # a notification of the wrong shape: nothing to answer
        {"jsonrpc": "2.0", "id": 4, "result": {}},  # a response: nothing to answer
        {"jsonrpc": "2.0", "id": 6},  # neither a request nor a response
        {"jsonrpc": "2.0", "id": 5, "method": "ping"},
    ]))
    for ident in (1, 2, 3, 6):
        assert replies[ident]["error"] == {"code": -32600, "message": "Invalid Request"}
    assert replies[5]["result"] == {}
    assert set(replies) == {1, 2, 3, 5, 6}


def test_the_handshake_era_negotiates_a_version_it_knows(demo_db: Path) -> None:
    def opened_with(version: str) -> dict[str, Any]:
        replies = _by_id(_raw(demo_db, [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": ENVELOPE}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "show", "arguments": {"node": "nobody"}}},
        ]))
        assert replies[2]["result"] == {}
        assert replies[3]["error"]["code"] == -32600  # an envelope on a handshake connection
        assert replies[4]["result"]["isError"] and "resultType" not in replies[4]["result"]
        return replies[1]["result"]

    assert opened_with("2025-03-26")["protocolVersion"] == "2025-03-26"
    opened = opened_with("1999-01-01")
    assert opened["protocolVersion"] == "2025-11-25"  # the newest it speaks; the client decides
    assert opened["serverInfo"]["name"] == "ctx" and "`context`" in opened["instructions"]


def test_the_server_runs_the_same_without_the_typer_bypass(demo_db: Path) -> None:
    env = {**os.environ, "CTX_NO_FAST_PATH": "1"}
    replies = _by_id(_raw(demo_db, [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "apollo"}}},
    ], env=env))
    assert not replies[2]["result"]["isError"]


@pytest.mark.parametrize("argv, expected", [
    (["mcp"], {"include_private": False, "db": None}),
    (["mcp", "--db", "g.db"], {"include_private": False, "db": Path("g.db")}),
    (["mcp", "--db=g.db", "--include-private"], {"include_private": True, "db": Path("g.db")}),
    (["--db", "g.db", "mcp"], {"include_private": False, "db": Path("g.db")}),
    (["mcp", "--print-config"], None),
    (["mcp", "--help"], None),
    (["mcp", "extra"], None),
    (["mcp", "--db"], None),
    (["--plain", "mcp"], None),
    (["build", "x"], None),
])
def test_what_the_typer_bypass_reads(argv: list[str], expected: dict[str, Any] | None, monkeypatch) -> None:
    for name in ("CTX_DB", "CTX_PLAIN", "CTX_NO_FAST_PATH"):
        monkeypatch.delenv(name, raising=False)
    assert parse_mcp(argv) == expected
