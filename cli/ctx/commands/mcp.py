"""`ctx mcp`: serve the graph to AI agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from ctx.commands.common import DbOption, handle_errors
from ctx.errors import CtxError
from ctx.paths import resolve_db_path


def register(app: typer.Typer) -> None:
    app.command(
        "mcp",
        epilog=(
            "Register it with an MCP client, e.g. in its JSON config:\n\n"
            '  {"mcpServers": {"ctx": {"command": "ctx", "args": ["mcp", "--db", "/path/graph.db"]}}}\n\n'
            "Tools: context (= ctx build), search, show, lenses. The server reads the graph on every\n"
            "call, so imports made while it runs are seen at once."
        ),
    )(mcp_command)


@handle_errors
def mcp_command(
    db: DbOption = None,
    include_private: Annotated[
        bool,
        typer.Option(
            "--include-private",
            help="Let the tools use and show nodes marked private (withheld by default).",
        ),
    ] = False,
) -> None:
    """Serve the graph as MCP tools over stdin/stdout (for Claude Desktop, Claude Code, ...)."""
    try:
        from ctx.mcp_server import run_stdio
    except ImportError as exc:  # the SDK is an optional extra
        if not (exc.name or "").startswith("mcp"):
            raise
        raise CtxError("the MCP SDK is not installed; pip install 'ctx-graph[mcp]'") from None
    # A graph that does not exist yet is not fatal: tools say so until an import creates it.
    run_stdio(resolve_db_path(db), include_private=include_private)
