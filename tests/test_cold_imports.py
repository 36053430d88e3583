"""What a cold `ctx build` loads: on a graph without embeddings, whatever the topic and lens,
never numpy, Typer, Click, pydantic or Rich; with warm caches, not PyYAML or the tiktoken package
either (their parsed results come from the cache folder), nor hashlib (OpenSSL's constructors: the
build's digests come from CPython's own modules, ``ctx.digest``) or the import engine (the
freshness check needs only the list of sources)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import json, sys
sys.argv = ["ctx", *sys.argv[1:]]
import ctx.entry

def leave(code):  # the fast path ends with os._exit: end with SystemExit instead, to look around
    raise SystemExit(code)

ctx.entry._leave = leave
try:
    ctx.entry.main()
except SystemExit as exc:
    code = exc.code
watched = ("numpy", "typer", "click", "pydantic", "rich", "yaml", "tiktoken", "torch", "mcp", "hashlib",
           "ctx.importers.engine")
sys.stderr.write(json.dumps({"code": code, "loaded": [m for m in watched if m in sys.modules]}) + "\n")
"""


def _probe(args: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120)
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "topic, lens",
    [
        ("Project Apollo", None),  # a title: auto -> general
        ("what blocks the launch?", None),  # a question: auto -> answer (passages)
        ("what blocks the launch?", "general"),
        ("what blocks the launch?", "question"),
        ("launch risks", "research"),
        ("Project Apollo", "workspace"),
    ],
)
def test_a_cold_build_loads_nothing_it_does_not_need(topic, lens, demo_db, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": str(tmp_path / "home"), "CTX_CACHE_DIR": str(tmp_path / "cache")})
    args = ["build", topic, "--db", str(demo_db), *(["--lens", lens] if lens else [])]
    first = _probe(args, env)  # fills the caches
    warm = _probe(args, env)
    assert first["code"] == warm["code"] == 0
    assert set(first["loaded"]) <= {"yaml", "tiktoken", "hashlib"}  # tiktoken checks its files' SHA-256
    assert warm["loaded"] == []


@pytest.mark.parametrize("extra", [[], ["--format", "json", "-n", "3"]])
def test_a_cold_search_loads_neither_typer_nor_the_tokenizer(extra, demo_db, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": str(tmp_path / "home"), "CTX_CACHE_DIR": str(tmp_path / "cache")})
    result = _probe(["search", "launch", "--db", str(demo_db), *extra], env)
    assert result["code"] == 0
    assert result["loaded"] == []  # a search counts no tokens: not even a first run loads tiktoken


def test_the_mcp_server_answers_without_the_sdk_pydantic_or_typer(demo_db, tmp_path):
    """What an agent waits for at start-up: the handshake, the listing and a first `context`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": str(tmp_path / "home"), "CTX_CACHE_DIR": str(tmp_path / "cache")})
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    session = "".join(json.dumps(message) + "\n" for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": envelope}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "context", "arguments": {"topic": "Project Apollo"}, "_meta": envelope}},
    ))
    for _ in range(2):  # the first run fills the caches
        proc = subprocess.run([sys.executable, "-c", PROBE, "mcp", "--db", str(demo_db)], input=session,
                              capture_output=True, text=True, env=env, timeout=120)
        result = json.loads(proc.stderr.strip().splitlines()[-1])
        answers = [json.loads(line) for line in proc.stdout.splitlines()]
        assert result["code"] == 0
        assert sorted(answer["id"] for answer in answers) == [1, 2, 3]
        assert not any(answer["result"].get("isError") for answer in answers)
    assert result["loaded"] == []
