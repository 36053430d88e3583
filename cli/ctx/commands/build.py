"""`ctx build`: the context for one or more topics, within an exact token budget."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ctx.assemble import DEFAULT_LENS, FORMATS, MIN_TOKENS, BuildRequest
from ctx.commands.common import (
    DbOption,
    PlainOption,
    handle_errors,
    set_plain,
    stdout_is_terminal,
    warn,
    write_stdout,
)
from ctx.errors import EXIT_NOT_FOUND
from ctx.paths import resolve_db_path

EPILOG = """Examples:

  ctx build "Project Apollo"

  ctx build "Project Apollo" --lens planning --max-tokens 4000 | llm -s "What blocks the launch?"

  ctx build projects/apollo "Jane Doe" --depth 3 --max-tokens 8000 --format json

  ctx build "weekly sync" --lens meeting-prep --explain

  ctx build "parser rewrite" --lens ./my-lens.yaml

Built-in lenses: {lenses}; `ctx lens list` shows all, including your own in
~/.config/ctx/lenses and .ctx/lenses. --max-tokens bounds the whole stdout, counted with tiktoken.
Exit codes: 0 ok, 1 error, 2 usage error or invalid lens, 3 topic not found.
"""


def register(app: typer.Typer) -> None:
    from ctx.lenses import builtin_lens_names

    names = ["auto (default: question for a question or phrase, general for a node's id or title)",
             *builtin_lens_names()]
    app.command("build", epilog=EPILOG.format(lenses=", ".join(names)))(build_command)


@handle_errors
def build_command(
    topics: Annotated[
        list[str],
        typer.Argument(help="Node ids, exact titles or aliases, or search words; several blend into one context.", show_default=False),
    ],
    lens: Annotated[
        str | None,
        typer.Option("--lens", "-l", help=f"Lens name or path to a lens .yaml file. Default: build.lens in the config file, else {DEFAULT_LENS}: 'question' for a question or phrase, 'general' for a node's id or title.", show_default=False),
    ] = None,
    depth: Annotated[
        int | None,
        typer.Option("--depth", "-d", min=0, show_default=False,
                     help="Hops to walk from the topic (default: the lens's, 2; capped at the lens's max_depth, 5 for most)."),
    ] = BuildRequest.depth,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", "-t", min=MIN_TOKENS, help=f"Token budget for the whole output. Default: build.max_tokens in the config file, else {BuildRequest.max_tokens}.", show_default=False),
    ] = None,
    # Checked by the core, not by the parser: the MCP tool takes the same argument and must fail
    # with the very same message.
    format: Annotated[str, typer.Option("--format", "-f", help=f"{' or '.join(FORMATS)}.")] = BuildRequest.format,
    include_fields: Annotated[
        bool, typer.Option("--include-fields/--no-include-fields", help="Show node fields (status, owner, ...).")
    ] = BuildRequest.include_fields,
    encoding: Annotated[
        str | None,
        typer.Option("--encoding", help=f"tiktoken encoding the budget is counted in. Default: build.encoding in the config file, else {BuildRequest.encoding}.", show_default=False),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Print every candidate's score parts and fate to stderr.")
    ] = BuildRequest.explain,
    include_private: Annotated[
        bool,
        typer.Option("--include-private", help="Also use nodes marked private (withheld by default)."),
    ] = BuildRequest.include_private,
    db: DbOption = None,
    plain: PlainOption = False,
) -> None:
    """Build LLM context about TOPICS from the graph: walk it as the lens says, rank, fit the budget."""
    from ctx.config import build_defaults
    from ctx.freshness import refresh_if_enabled
    from ctx.graph import Graph

    if plain:
        set_plain(True)
    lens, max_tokens, encoding = build_defaults(lens, max_tokens, encoding)
    graph = Graph.open(resolve_db_path(db), include_private=include_private)
    for line in refresh_if_enabled(graph.conn):
        warn(line)
    request = BuildRequest(
        topics=tuple(topics),
        lens=lens,
        depth=depth,
        max_tokens=max_tokens,
        format=format,
        include_fields=include_fields,
        encoding=encoding,
        explain=explain,
        include_private=include_private,
    )
    result = graph.build(request)
    _print(result.text, format)
    for line in result.warnings:
        warn(line)
    if explain and result.candidates:
        _print_explain(result.candidates)
    if not result.found:
        sys.stderr.write("ctx: error: no node matches " + ", ".join(repr(t) for t in topics) + "\n")
        raise typer.Exit(code=EXIT_NOT_FOUND)


def _print(text: str, fmt: str) -> None:
    """The exact text when piped (what the budget counted); rendered on a terminal."""
    if not stdout_is_terminal():
        write_stdout(text)
        return
    from rich.console import Console

    console = Console(soft_wrap=fmt == "json")
    if fmt == "json":
        console.print_json(text)
    else:
        from rich.markdown import Markdown

        console.print(Markdown(text))


def _print_explain(rows: list[dict]) -> None:
    from ctx.assemble.render import EXPLAIN_COLUMNS, explain_cells, explain_text

    if not sys.stderr.isatty():
        sys.stderr.write(explain_text(rows))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="ctx build --explain", show_lines=False)
    for _, title in EXPLAIN_COLUMNS:
        table.add_column(title, overflow="fold")
    for row in rows:
        table.add_row(*explain_cells(row))
    Console(stderr=True).print(table)


