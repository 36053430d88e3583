"""`ctx stats`, `ctx show`, `ctx search`: look at what is in the graph."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ctx.commands.common import DbOption, PlainOption, TextOrJson, handle_errors
from ctx.commands.completion import values
from ctx.commands.console import emit_report
from ctx.commands.declared import declare
from ctx.options import SearchRequest
from ctx.config import resolve_db_path

# search and show are MCP tools too: their --format is checked by the core (ctx.inspection), so a
# bad value fails with the same message on both sides; stats is the CLI's alone.
FormatOption = Annotated[str, typer.Option("--format", "-f", autocompletion=values("text", "json"), help="text or json.")]
StatsFormatOption = Annotated[TextOrJson, typer.Option("--format", "-f", help="Output format.")]
IncludePrivateOption = Annotated[
    bool,
    typer.Option(
        "--include-private",
        help="Also show nodes marked private (tag #private, field private: true, or below one).",
    ),
]


def register(app: typer.Typer) -> None:
    app.command("stats", epilog="Examples:\n\n  ctx stats\n\n  ctx stats --format json | jq .edges")(
        stats_command
    )
    app.command(
        "show",
        epilog="Examples:\n\n  ctx show 'Project Apollo'\n\n  ctx show projects/apollo --format json",
    )(show_command)
    app.command(
        "search",
        epilog=(
            "Examples:\n\n  ctx search 'launch checklist'\n\n  ctx search 'apollo AND (risk' --limit 5\n\n"
            "Any text works: words are matched as words, a trailing * matches a prefix. Only function"
            " words (\"how do I\") is a usage error (exit 2), unless a note is named by them."
        ),
    )(search_command)


@handle_errors
def stats_command(
    db: DbOption = None,
    format: StatsFormatOption = TextOrJson.text,
    include_private: IncludePrivateOption = False,
    plain: PlainOption = False,
) -> None:
    """Counts of nodes and edges by type, unresolved links, sources and the last import."""
    from ctx.graph import Graph
    from ctx.inspection import stats_report

    emit_report(stats_report(Graph.open(resolve_db_path(db), include_private=include_private), fmt=format), plain)


@handle_errors
def show_command(
    node: Annotated[str, typer.Argument(help="Node id, or its exact title or alias.")],
    db: DbOption = None,
    format: FormatOption = "text",
    include_private: IncludePrivateOption = False,
    plain: PlainOption = False,
) -> None:
    """One node: its text, fields and edges."""
    from ctx.graph import Graph
    from ctx.inspection import show_report

    graph = Graph.open(resolve_db_path(db), include_private=include_private)
    emit_report(show_report(graph, node, fmt=format), plain)


def search_command(**values: Any) -> None:
    """Full-text search (BM25) over titles, aliases and bodies."""
    from ctx.commands.search_run import run_search

    run_search(**values)


# The parameters are SearchRequest's declared options (ctx.options), then the graph handle's.
search_command = declare(
    handle_errors(search_command), SearchRequest,
    ("db", DbOption, None), ("include_private", IncludePrivateOption, False), ("plain", PlainOption, False),
)
