"""`ctx mcp` end to end: the SDK's own client talks to `ctx mcp` in a subprocess over stdio.

Every answer is checked against the real CLI run as a subprocess with stdout piped (so it prints the
plain text the budget counts), on real SQLite files built by `ctx import`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is an optional extra: pip install 'ctx-graph[mcp]'")

import anyio  # noqa: E402  - only after we know the SDK (which brings anyio) is there
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")

NODES = [
    {
        "id": "apollo",
        "title": "Project Apollo",
        "type": "project",
        "tags": ["project"],
        "body": "Apollo is the launch project. The launch is blocked by the heat shield review.\n\n"
        "Jane Doe owns engineering; the review waits on thermal test data.",
        "links": ["jane", "shield"],
        "status": "at risk",
        "updated": "2026-03-01",
    },
    {
        "id": "jane",
        "title": "Jane Doe",
        "type": "person",
        "aliases": ["Jane"],
        "body": "Jane leads Apollo engineering and chairs the weekly launch review.",
        "updated": "2026-02-20",
    },
    {
        "id": "shield",
        "title": "Heat shield review",
        "body": "Review of the heat shield design. Waiting on thermal test data from the lab.",
        "links": ["lab"],
        "status": "open",
        "updated": "2026-02-25",
    },
    {
        "id": "lab",
        "title": "Thermal lab",
        "body": "The thermal lab runs the heat shield tests. Next slot: March.",
        "updated": "2026-01-10",
    },
]

NEW_NODE = {
    "id": "budget",
    "title": "Apollo budget",
    "body": "The Apollo budget was cut by ten percent; the zeppelin option is off the table.",
    "links": ["apollo"],
    "updated": "2026-03-05",
}


def write_graph(path: Path, nodes: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(node) + "\n" for node in nodes), encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: no user lenses, no project folder, no model hub, no colour."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CTX_HOME": str(home / "ctx"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "NO_COLOR": "1",
        "COLUMNS": "120",
    }


@pytest.fixture
def graph(tmp_path: Path, env: dict[str, str]) -> Path:
    db = tmp_path / "graph.db"
    source = write_graph(tmp_path / "graph.jsonl", NODES)
    run_ctx(env, tmp_path, "import", str(source), "--db", str(db), "--quiet")
    return db


def run_ctx(env: dict[str, str], cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """The real CLI in a subprocess, stdout piped: exactly what a script or `| llm` receives."""
    assert CTX, "the ctx console script is not installed"
    result = subprocess.run([CTX, *args], cwd=cwd, env=env, capture_output=True, timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"ctx {' '.join(args)} exited {result.returncode}: {result.stderr.decode()}")
    return result


def with_server(
    db: Path,
    env: dict[str, str],
    cwd: Path,
    scenario: Callable[[Client], Awaitable[None]],
    extra_args: list[str] | None = None,
) -> str:
    """Run ``scenario`` against `ctx mcp --db DB` in a subprocess; return what the server logged."""
    args = ["mcp", "--db", str(db), *(extra_args or [])]
    params = StdioServerParameters(command=CTX or "ctx", args=args, env=env, cwd=cwd)
    errlog_path = cwd / "server-stderr.log"

    async def main() -> None:
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
                await scenario(client)

    anyio.run(main)
    return errlog_path.read_text()


def text_of(result: Any) -> str:
    assert result.content, result
    return result.content[0].text


def test_lists_the_four_tools_with_cli_named_arguments(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        listing = await client.list_tools()
        seen.update({tool.name: tool for tool in listing.tools})

    with_server(graph, env, tmp_path, scenario)
    assert set(seen) == {"context", "search", "show", "lenses", "context_map", "expand"}
    context_args = set(seen["context"].input_schema["properties"])
    assert {"topic", "lens", "depth", "max_tokens", "format", "include_fields", "encoding"} <= context_args
    assert seen["context"].input_schema["required"] == ["topic"]
    assert seen["search"].input_schema["required"] == ["query"]
    assert seen["show"].input_schema["required"] == ["node"]
    for tool in seen.values():
        assert len(tool.description) > 200, f"{tool.name} needs a description a model can act on"
        assert tool.annotations.read_only_hint is True


CONTEXT_CASES = [
    ({"topic": "Project Apollo"}, ["Project Apollo"]),
    (
        {"topic": ["apollo", "Jane Doe"], "depth": 1, "max_tokens": 600, "include_fields": False},
        ["apollo", "Jane Doe", "--depth", "1", "--max-tokens", "600", "--no-include-fields"],
    ),
    (
        {"topic": "heat shield", "format": "json", "max_tokens": 900},
        ["heat shield", "--format", "json", "--max-tokens", "900"],
    ),
    (
        {"topic": "apollo", "max_tokens": 300, "encoding": "cl100k_base"},
        ["apollo", "--max-tokens", "300", "--encoding", "cl100k_base"],
    ),
]


def test_context_returns_exactly_what_ctx_build_prints(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    require_build()
    answers: list[list[str]] = []

    async def scenario(client: Client) -> None:
        for arguments, _ in CONTEXT_CASES:
            result = await client.call_tool("context", arguments)
            assert not result.is_error, text_of(result)
            answers.append([block.text for block in result.content])

    with_server(graph, env, tmp_path, scenario)
    for (arguments, argv), (context, *notices) in zip(CONTEXT_CASES, answers, strict=True):
        cli = run_ctx(env, tmp_path, "build", *argv, "--db", str(graph))
        assert context.encode("utf-8") == cli.stdout, f"MCP and CLI differ for {arguments}"
        assert "".join(notices).encode("utf-8") == cli.stderr, f"stderr differs for {arguments}"


def test_search_and_show_match_the_cli(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    calls = [
        ("search", {"query": "heat shield"}, ["search", "heat shield"]),
        ("search", {"query": "thermal", "limit": 1, "format": "json"}, ["search", "thermal", "-n", "1", "--format", "json"]),
        ("search", {"query": "zzzz"}, ["search", "zzzz"]),
        ("show", {"node": "Jane"}, ["show", "Jane"]),
        ("show", {"node": "shield", "format": "json"}, ["show", "shield", "--format", "json"]),
        ("lenses", {"name": "planning"}, ["lens", "show", "planning"]),
    ]
    answers: list[str] = []

    async def scenario(client: Client) -> None:
        for name, arguments, _ in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, text_of(result)
            answers.append(text_of(result))

    with_server(graph, env, tmp_path, scenario)
    for (_, _, argv), answer in zip(calls, answers, strict=True):
        db_args = [] if argv[0] == "lens" else ["--db", str(graph)]
        assert answer.encode("utf-8") == run_ctx(env, tmp_path, *argv, *db_args).stdout


def test_lenses_lists_every_lens_with_its_whole_description(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    answers: list[str] = []

    async def scenario(client: Client) -> None:
        answers.append(text_of(await client.call_tool("lenses", {})))

    with_server(graph, env, tmp_path, scenario)
    listed = json.loads(run_ctx(env, tmp_path, "lens", "list", "--format", "json").stdout)["lenses"]
    assert answers[0].splitlines() == [
        f"- {lens['name']} ({lens['source']}): {' '.join(lens['description'].split())}" for lens in listed
    ]
    assert {"general", "writing", "coding", "planning", "meeting-prep"} <= {lens["name"] for lens in listed}


def test_bad_arguments_are_tool_errors_with_the_cli_message(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    # (tool, arguments, the same call on the command line or None where only MCP can express it)
    calls: list[tuple[str, dict[str, Any], list[str] | None]] = [
        ("show", {"node": "no such node"}, ["show", "no such node"]),
        ("search", {"query": "x", "format": "yaml"}, ["search", "x", "--format", "yaml"]),
        ("context", {"topic": "apollo", "lens": "no-such-lens"}, ["build", "apollo", "--lens", "no-such-lens"]),
        # Over MCP a lens is a name only (the CLI, the user's own shell, also takes a path).
        ("context", {"topic": "apollo", "lens": "missing/lens.yaml"}, None),
        ("lenses", {"name": "../lenses/general"}, None),
        ("context", {"topic": "apollo", "encoding": "klingon"}, ["build", "apollo", "--encoding", "klingon"]),
        ("context", {"topic": "apollo", "max_tokens": "plenty"}, None),
        ("context", {"topic": []}, None),
        ("context", {"topic": "apollo", "max_tokens": 10}, None),
        ("context", {"topic": "apollo", "format": "yaml"}, ["build", "apollo", "--format", "yaml"]),
        ("lenses", {"name": "no-such-lens"}, ["lens", "show", "no-such-lens"]),
    ]
    if not has_build():
        calls = [call for call in calls if call[0] != "context"]
    results: list[Any] = []

    async def scenario(client: Client) -> None:
        for name, arguments, _ in calls:
            results.append(await client.call_tool(name, arguments))
        # The server survived all of it.
        alive = await client.call_tool("show", {"node": "apollo"})
        assert not alive.is_error

    with_server(graph, env, tmp_path, scenario)
    for (name, arguments, argv), result in zip(calls, results, strict=True):
        assert result.is_error, f"{name} {arguments} should fail"
        message = text_of(result)
        assert "Traceback" not in message and "internal error" not in message, message
        if argv is None:
            continue
        db_args = [] if argv[0] == "lens" else ["--db", str(graph)]
        cli = run_ctx(env, tmp_path, *argv, *db_args, check=False)
        assert cli.returncode != 0
        cli_errors = [line for line in cli.stderr.decode().splitlines() if line.startswith("ctx: error:")]
        assert message.splitlines() == cli_errors, f"{name} {arguments}"


def test_explain_comes_as_a_second_block_after_the_exact_context(
    graph: Path, env: dict[str, str], tmp_path: Path
) -> None:
    require_build()
    results: list[Any] = []

    async def scenario(client: Client) -> None:
        results.append(await client.call_tool("context", {"topic": "apollo", "explain": True}))

    with_server(graph, env, tmp_path, scenario)
    cli = run_ctx(env, tmp_path, "build", "apollo", "--explain", "--db", str(graph))
    context, explanation = (block.text for block in results[0].content)
    assert context.encode() == cli.stdout
    assert explanation.encode() in cli.stderr


def test_cli_warnings_follow_the_exact_context_in_their_own_block(
    graph: Path, env: dict[str, str], tmp_path: Path
) -> None:
    require_build()
    results: list[Any] = []
    calls = [({"topic": "apollo", "depth": 9}, ["--depth", "9"]), ({"topic": "apollo", "max_tokens": 200}, ["-t", "200"])]

    async def scenario(client: Client) -> None:
        for arguments, _ in calls:
            results.append(await client.call_tool("context", arguments))

    with_server(graph, env, tmp_path, scenario)
    for (_, argv), result in zip(calls, results, strict=True):
        cli = run_ctx(env, tmp_path, "build", "apollo", *argv, "--db", str(graph))
        context, notices = (block.text for block in result.content)
        assert context.encode() == cli.stdout
        assert notices.encode() == cli.stderr
        assert notices.startswith("ctx: warning: ")
        assert result.meta["ctx/warnings"]


def test_private_nodes_stay_private_unless_the_server_is_started_to_include_them(
    env: dict[str, str], tmp_path: Path
) -> None:
    db = tmp_path / "private.db"
    secret = {"id": "diary", "title": "Diary", "tags": ["private"], "body": "The zeppelin plan is a secret."}
    source = write_graph(tmp_path / "private.jsonl", [*NODES, secret])
    run_ctx(env, tmp_path, "import", str(source), "--db", str(db), "--quiet")
    hidden: list[Any] = []

    async def default_server(client: Client) -> None:
        hidden.append(await client.call_tool("search", {"query": "zeppelin"}))
        hidden.append(await client.call_tool("show", {"node": "diary"}))

    with_server(db, env, tmp_path, default_server)
    assert text_of(hidden[0]) == "no matches for 'zeppelin'\n"
    assert hidden[0].meta is None or not hidden[0].meta.get("ctx/warnings")
    assert hidden[1].is_error and text_of(hidden[1]) == "ctx: error: no node with id, title or alias 'diary'"

    shown: list[Any] = []

    async def opted_in(client: Client) -> None:
        shown.append(await client.call_tool("show", {"node": "diary"}))

    params_args = ["--include-private"]
    with_server(db, env, tmp_path, opted_in, extra_args=params_args)
    assert not shown[0].is_error
    assert text_of(shown[0]).encode() == run_ctx(env, tmp_path, "show", "diary", "--include-private", "--db", str(db)).stdout


def test_unknown_topic_is_a_tool_error(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    require_build()
    results: list[Any] = []

    async def scenario(client: Client) -> None:
        results.append(await client.call_tool("context", {"topic": "qwxzv nothing like it"}))

    with_server(graph, env, tmp_path, scenario)
    cli = run_ctx(env, tmp_path, "build", "qwxzv nothing like it", "--db", str(graph), check=False)
    assert cli.returncode == 3
    assert results[0].is_error
    # The first block is the CLI's stdout (a valid, empty context); the second its error line.
    assert text_of(results[0]).encode() == cli.stdout
    cli_errors = [line for line in cli.stderr.decode().splitlines() if line.startswith("ctx: error:")]
    assert results[0].content[1].text.splitlines() == cli_errors


def test_sees_an_import_made_while_it_runs(graph: Path, env: dict[str, str], tmp_path: Path) -> None:
    source = tmp_path / "graph.jsonl"

    async def scenario(client: Client) -> None:
        before = await client.call_tool("search", {"query": "zeppelin"})
        assert text_of(before) == "no matches for 'zeppelin'\n"
        if has_build():
            first = text_of(await client.call_tool("context", {"topic": "apollo"}))
            assert "zeppelin" not in first

        # An incremental import into the same file, from another process.
        write_graph(source, [*NODES, NEW_NODE])
        await anyio.to_thread.run_sync(
            lambda: run_ctx(env, tmp_path, "import", str(source), "--db", str(graph), "--quiet")
        )
        after = await client.call_tool("search", {"query": "zeppelin"})
        assert "[budget]" in text_of(after)
        if has_build():
            second = await client.call_tool("context", {"topic": "apollo"})
            assert "zeppelin" in text_of(second)
            printed = run_ctx(env, tmp_path, "build", "apollo", "--db", str(graph)).stdout
            assert text_of(second).encode() == printed

        # The file replaced by a new one (deleted, imported again): a different inode.
        for suffix in ("", "-wal", "-shm"):
            Path(f"{graph}{suffix}").unlink(missing_ok=True)
        gone = await client.call_tool("show", {"node": "apollo"})
        assert gone.is_error
        assert text_of(gone).startswith("ctx: error: no graph at ")
        write_graph(source, [NEW_NODE | {"links": []}])
        await anyio.to_thread.run_sync(
            lambda: run_ctx(env, tmp_path, "import", str(source), "--db", str(graph), "--quiet")
        )
        fresh = await client.call_tool("show", {"node": "budget"})
        assert not fresh.is_error, text_of(fresh)
        assert (await client.call_tool("show", {"node": "apollo"})).is_error

    log = with_server(graph, env, tmp_path, scenario)
    assert "Traceback" not in log


def test_starts_without_a_graph_and_says_how_to_make_one(env: dict[str, str], tmp_path: Path) -> None:
    db = tmp_path / "later.db"
    result: Any = None

    def same_error_as_cli() -> None:
        cli = run_ctx(env, tmp_path, "search", "apollo", "--db", str(db), check=False)
        assert cli.returncode == 1
        assert text_of(result) == cli.stderr.decode().rstrip("\n")

    async def scenario(client: Client) -> None:
        nonlocal result
        result = await client.call_tool("search", {"query": "apollo"})
        assert result.is_error
        same_error_as_cli()
        # Not a graph at all: one clear line, the server carries on.
        db.write_bytes(b"this is not a database" * 100)
        result = await client.call_tool("search", {"query": "apollo"})
        assert result.is_error and "not a usable ctx graph" in text_of(result)
        same_error_as_cli()
        db.unlink()
        source = write_graph(tmp_path / "g.jsonl", NODES)
        await anyio.to_thread.run_sync(
            lambda: run_ctx(env, tmp_path, "import", str(source), "--db", str(db), "--quiet")
        )
        assert not (await client.call_tool("search", {"query": "apollo"})).is_error

    with_server(db, env, tmp_path, scenario)


def require_build() -> None:
    if not has_build():
        pytest.skip("ctx build (ctx.assemble.build_context) is not in this tree yet")


def has_build() -> bool:
    try:
        from ctx.assemble import build_context  # noqa: F401
    except ImportError:
        return False
    return True
