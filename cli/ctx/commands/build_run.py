"""What `ctx build` does once its arguments are known, free of Typer: the Typer command and the
fast path in ``ctx.entry`` both call ``run_build``, so they print and fail alike."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctx.commands.console import set_plain, stdout_is_terminal, warn, write_stdout
from ctx.errors import EXIT_NOT_FOUND


def run_build(*, topics: tuple[str, ...] | list[str], include_private: bool, db: Path | None, plain: bool,
              **values: Any) -> int:
    """Print the context (and its notices on stderr); return the exit code. Core errors raise.
    ``values`` are BuildRequest's other options; None where the config file gives the default."""
    from ctx.assemble import BuildRequest
    from ctx.commands.waiting import waits_shown
    from ctx.freshness import check_before_build, graph_freshness
    from ctx.graph import Graph
    from ctx.options import with_config_defaults
    from ctx.config import resolve_db_path

    if plain:
        set_plain(True)
    named = values.get("lens")
    resolved = with_config_defaults(BuildRequest, values)
    lens_why = f"--lens {named}" if named is not None else _configured_lens_why(resolved.get("lens"))
    request = BuildRequest(topics=tuple(topics), lens_why=lens_why, **resolved)
    graph = Graph.open(resolve_db_path(db), include_private=include_private)
    # Closed here rather than at interpreter exit: the console script may leave without
    # tearing the interpreter down (ctx.entry), and SQLite tidies its WAL on close.
    try:
        refreshed = check_before_build(graph.store)
        for line in refreshed.warnings if refreshed is not None else ():
            warn(line)
        # The check's outcome (a sync skipped because the graph was busy) is part of what the
        # context says about its freshness.
        with waits_shown():
            result = graph.build(replace(request, freshness=graph_freshness(graph.store, refreshed, include_private=include_private)))
        if not result.found:
            from ctx.errors import CtxError

            if graph.reader.is_empty():
                raise CtxError(f"the graph at {graph.path} is empty (nothing imported yet); run `ctx import PATH` first")
        _print(result.text, request.format)
        for line in result.warnings:
            warn(line)
        if request.explain and result.candidates:
            _print_explain(result.candidates, result.meta, graph.path)
        if not result.found:
            sys.stderr.write("ctx: error: no node matches " + ", ".join(repr(t) for t in request.topics) + "\n")
            return EXIT_NOT_FOUND
        return 0
    finally:
        graph.close()


def _configured_lens_why(lens: str | None) -> str:
    return "" if lens is None else f"build.lens {lens} in the config file"


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


def _print_explain(rows: list[dict[str, Any]], meta: dict[str, Any], graph_path: Path | str) -> None:
    from ctx.paths import shown

    from ctx.assemble.explain import EXPLAIN_COLUMNS, explain_caption, explain_cells, explain_text

    # Which graph answered: the user's and the project's config can each name one.
    caption = explain_caption(meta) + f"graph: {shown(graph_path)}\n"

    if not sys.stderr.isatty():
        sys.stderr.write(explain_text(rows) + caption)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="ctx build --explain", caption=caption.strip() or None, show_lines=False)
    for _, title in EXPLAIN_COLUMNS:
        table.add_column(title, overflow="fold")
    for row in rows:
        table.add_row(*explain_cells(row))
    Console(stderr=True).print(table)
