"""What `ctx search` does once its arguments are known, free of Typer: the Typer command and the
fast path in ``ctx.entry`` both call ``run_search``, so they print and fail alike."""

from __future__ import annotations

from pathlib import Path


def run_search(*, query: str, db: Path | None, limit: int, format: str, include_private: bool, plain: bool) -> int:
    """Print the hits (and their notices on stderr); return the exit code. Core errors raise."""
    from ctx.commands.console import emit_report
    from ctx.graph import Graph
    from ctx.inspection import search_report
    from ctx.config import resolve_db_path

    graph = Graph.open(resolve_db_path(db), include_private=include_private)
    # Closed here rather than at interpreter exit: the fast path leaves without tearing the
    # interpreter down (ctx.entry), and SQLite tidies its WAL on close.
    try:
        emit_report(search_report(graph, query, limit=limit, fmt=format), plain)
    finally:
        graph.close()
    return 0
