"""Bounds that keep one request within bounded time and memory, and the MCP server serving calls
side by side (issue 24, M5)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from conftest import CliResult


def cli(*args: str) -> CliResult:
    from typer.testing import CliRunner

    from ctx.app import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


def test_max_tokens_has_a_documented_maximum(demo_db: Path) -> None:
    from ctx.assemble import MAX_TOKENS

    for argv in (("build", "Project Apollo", "--max-tokens", str(MAX_TOKENS + 1)),
                 ("build", "Project Apollo", "--max-tokens", "1" + "0" * 30)):
        result = cli(*argv, "--db", str(demo_db))
        assert result.exit_code == 2
        assert result.stderr.startswith("ctx: error: --max-tokens must be at most 1,000,000")
    assert cli("build", "Project Apollo", "--max-tokens", str(MAX_TOKENS), "--db", str(demo_db)).exit_code == 0
    docs = (Path(__file__).resolve().parent.parent / "docs" / "building.md").read_text(encoding="utf-8")
    assert "at most 1,000,000" in docs


def test_mcp_arguments_are_bounded_and_answer_with_a_tool_error(demo_db: Path) -> None:
    from ctx.mcp_server import CtxTools

    tools = CtxTools(demo_db)
    try:
        for reply in (tools.context("Project Apollo", max_tokens=10**30), tools.search("apollo", 10**30),
                      tools.search("apollo", 0), tools.context(["x"] * 1000)):
            assert reply.is_error and reply.text.startswith("ctx: error: ") and "internal error" not in reply.text
    finally:
        tools.close()


def test_a_call_in_flight_does_not_hold_up_the_others(demo_db: Path) -> None:
    """While a call holds its connection (a slow build), the others are served on theirs."""
    from ctx.mcp_server import MAX_CONCURRENT_CALLS, CtxTools

    tools = CtxTools(demo_db)
    try:
        busy = [tools._checkout() for _ in range(MAX_CONCURRENT_CALLS - 1)]  # calls in flight
        answers: list[str] = []
        worker = threading.Thread(target=lambda: answers.append(tools.search("apollo", 3).text))
        worker.start()
        worker.join(timeout=60)
        assert answers and "Apollo" in answers[0]
        assert len({id(h) for h in tools._all}) == MAX_CONCURRENT_CALLS  # each on its own connection
        for handle in busy:
            tools._checkin(handle)
    finally:
        tools.close()


@pytest.mark.parametrize("limit", ["0", "1001"])
def test_search_limit_is_bounded_on_the_command_line_too(demo_db: Path, limit: str) -> None:
    result = cli("search", "apollo", "--limit", limit, "--db", str(demo_db))
    assert result.exit_code == 2


def test_a_lone_surrogate_is_a_tool_error_not_an_internal_one(demo_db: Path) -> None:
    """JSON can carry "\\ud800"; the audit's fuzzing got internal errors from such arguments."""
    from ctx.mcp_server import CtxTools

    tools = CtxTools(demo_db)
    try:
        for reply in (tools.context("\x00\ud800"), tools.context("ok", lens="\udfff"), tools.search("\ud800"),
                      tools.show("\ud800"), tools.lenses("\ud800"), tools.context(["fine", "\ud800"])):
            assert reply.is_error and "not valid Unicode text" in reply.text and "internal error" not in reply.text
    finally:
        tools.close()
