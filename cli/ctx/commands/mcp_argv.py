"""`ctx mcp` as an agent starts it, read and run without loading Typer (see ``ctx.entry``).

An agent spawns the server with the command `ctx mcp --print-config` printed -- `ctx mcp --db
PATH`, perhaps with `--include-private` -- and waits for its first answer: Typer, Click and Rich
would be a third of that wait. The rules are `ctx build`'s (``build_argv.read_command``): only
these options in these spellings and no argument; anything else (``--print-config``, ``--help``,
a typo) goes to the Typer app, which reads and reports it as it always has.
"""

from __future__ import annotations

from typing import Any

from ctx.commands.build_argv import GRAPH_VALUE_OPTIONS, Spellings, read_command

MCP_SPELLINGS = Spellings(
    values=dict(GRAPH_VALUE_OPTIONS),
    flags={"--include-private": ("include_private", True)},
    bounds={},
    defaults={"include_private": False},
    argument="",
)


def parse_mcp(argv: list[str]) -> dict[str, Any] | None:
    """``serve``'s keyword arguments for ``argv`` (without the program name), or None."""
    read = read_command(argv, "mcp", MCP_SPELLINGS)
    if read is None:
        return None
    options, arguments = read
    if arguments or options.pop("plain"):
        return None  # an argument is Typer's usage error; the root's --plain its to honour
    return {**MCP_SPELLINGS.defaults, **options}


def serve(options: dict[str, Any]) -> int:
    """Run the server with ``parse_mcp``'s result until the client leaves; the exit code."""
    try:
        from ctx.config import resolve_db_path
        from ctx.mcp_server import run_stdio

        resolved = resolve_db_path(options["db"])
        # A graph that does not exist yet is not fatal: tools say so until an import creates it.
        run_stdio(resolved if isinstance(resolved, str) else resolved.absolute(), include_private=options["include_private"])
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported as the CLI always does
        from ctx.commands.console import exit_code_for

        return exit_code_for(exc)
    return 0
