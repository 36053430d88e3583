"""`ctx search` with plain arguments, read and run without loading Typer (see ``ctx.entry``).

A search needs no tokenizer, so Typer, Click and pydantic were most of its cold cost. The rules
are `ctx build`'s (``build_argv.read_command``): only these options in these spellings and one
query; anything else goes to the Typer app.
"""

from __future__ import annotations

from typing import Any

from ctx.commands.build_argv import read_command, spellings

def parse_search(argv: list[str]) -> dict[str, Any] | None:
    """``run_search``'s keyword arguments for ``argv`` (without the program name), or None."""
    from ctx.options import SearchRequest

    spelled = spellings(SearchRequest)
    read = read_command(argv, "search", spelled)
    if read is None:
        return None
    options, arguments = read
    if len(arguments) != 1:
        return None  # none or several: Typer's usage error
    return {spelled.argument: arguments[0], **spelled.defaults, **options}


def run_parsed(options: dict[str, Any]) -> int:
    """Run `ctx search` with ``parse_search``'s result; errors reported as Typer's are."""
    from ctx.commands.console import exit_code_for
    from ctx.commands.search_run import run_search

    try:
        return run_search(**options)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported as the CLI always does
        return exit_code_for(exc)


def fast_search(argv: list[str]) -> int | None:
    """The exit code of `ctx search` run here, or None when the Typer app must handle ``argv``."""
    options = parse_search(argv)
    return None if options is None else run_parsed(options)
