"""`ctx mcp`: serve the graph to AI agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated

import typer

from ctx.commands.common import (
    DbOption,
    TextOrJson,
    handle_errors,
    print_json,
    warn,
    write_stdout,
)
from ctx.config import resolve_db_path


def register(app: typer.Typer) -> None:
    app.command(
        "mcp",
        epilog=(
            "Register it with an agent: `ctx mcp --print-config` prints the JSON for an MCP client's\n"
            "config file and the `claude mcp add` line, with absolute paths.\n\n"
            "Tools: context (= ctx build), search, show, lenses; context_map and expand, under one\n"
            "token budget per session. The server reads the graph on every call, so imports made\n"
            "while it runs are seen at once."
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
    print_config: Annotated[
        bool,
        typer.Option(
            "--print-config",
            help="Print the client config (JSON) and the `claude mcp add` line for this graph, then exit.",
        ),
    ] = False,
    format: Annotated[
        TextOrJson, typer.Option("--format", "-f", help="With --print-config: text (both) or json (the JSON only).")
    ] = TextOrJson.text,
) -> None:
    """Serve the graph as MCP tools over stdin/stdout (for Claude Desktop, Claude Code, ...)."""
    resolved = resolve_db_path(db)
    db_path = resolved if isinstance(resolved, str) else resolved.absolute()
    if print_config:
        from ctx.agent_setup import client_config, setup_text

        if not isinstance(db_path, str) and not db_path.exists():
            # Printed all the same (an agent may be set up before the first import), but not silently.
            warn(f"no graph at {db_path} yet: run `ctx import PATH --db {db_path}` before the server is used")

        if format == "json":
            print_json(client_config(db_path, include_private=include_private))
        else:
            write_stdout(setup_text(db_path, include_private=include_private))
        return
    from ctx.mcp_server import run_stdio

    # A graph that does not exist yet is not fatal: tools say so until an import creates it.
    run_stdio(db_path, include_private=include_private)
