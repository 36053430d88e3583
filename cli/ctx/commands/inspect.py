"""`ctx stats`, `ctx show`, `ctx search`: look at what is in the graph."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer

from ctx.commands.common import DbOption, handle_errors, print_json, warn, write_stdout
from ctx.errors import NotFoundError, UsageError
from ctx.paths import resolve_db_path

FormatOption = Annotated[str, typer.Option("--format", help="text or json.")]
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
            "Any text works: words are matched as words, a trailing * matches a prefix."
        ),
    )(search_command)


def _check_format(fmt: str) -> None:
    if fmt not in ("text", "json", "markdown"):
        raise UsageError(f"--format must be text or json, not {fmt!r}")


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@handle_errors
def stats_command(db: DbOption = None, format: FormatOption = "text") -> None:
    """Counts of nodes and edges by type, unresolved links, sources and the last import."""
    from ctx.store import open_graph
    from ctx.store.reads import stats

    _check_format(format)
    data = stats(open_graph(resolve_db_path(db)))
    if format == "json":
        print_json(data)
        return
    lines = [f"nodes: {data['nodes']}"]
    lines += [f"  {t}: {n}" for t, n in data["nodes_by_type"].items()]
    lines.append(f"edges: {data['edges_total']}")
    lines += [f"  {t}: {n}" for t, n in data["edges"].items()]
    lines.append(f"unresolved links: {data['unresolved_links']}")
    lines.append(f"private nodes: {data['private_nodes']} (withheld from every output by default)")
    lines.append(f"sources: {len(data['sources'])}")
    lines += [
        f"  [{s['id']}] {s['root']} ({s['format']}): {s['nodes']} nodes from {s['files']} files,"
        f" imported {_when(s['imported_at'])}"
        for s in data["sources"]
    ]
    lines.append(f"last import: {_when(data['last_import'])}")
    write_stdout("\n".join(lines) + "\n")


@handle_errors
def show_command(
    node: Annotated[str, typer.Argument(help="Node id, or its exact title or alias.")],
    db: DbOption = None,
    format: FormatOption = "text",
    include_private: IncludePrivateOption = False,
) -> None:
    """One node: its text, fields and edges."""
    from ctx.store import open_graph
    from ctx.store.reads import edges_of, get_node, resolve_one

    _check_format(format)
    conn = open_graph(resolve_db_path(db))
    node_id = resolve_one(conn, node, include_private=include_private)
    found = get_node(conn, node_id, include_private=include_private) if node_id else None
    if found is None:
        hidden = not include_private and resolve_one(conn, node, include_private=True) is not None
        suffix = " (a private node matches; --include-private shows it)" if hidden else ""
        raise NotFoundError(f"no node with id, title or alias {node!r}{suffix}")
    edges = edges_of(conn, found.id, include_private=include_private)
    if format == "json":
        print_json(
            {
                "id": found.id,
                "title": found.title,
                "type": found.type,
                "tags": found.tags,
                "aliases": found.aliases,
                "fields": found.fields,
                "source_path": found.source_path,
                "parent_id": found.parent_id,
                "created": found.created,
                "updated": found.updated,
                "tokens": found.tokens,
                "body": found.body,
                "edges": [
                    {
                        "type": e.type,
                        "direction": e.direction,
                        "id": e.other_id,
                        "title": e.other_title,
                        "unresolved": e.other_id is None,
                        "target": e.target,
                        "label": e.label,
                    }
                    for e in edges
                ],
            }
        )
        return
    lines = [f"# {found.title}", "", f"id: {found.id}", f"type: {found.type}"]
    if found.tags:
        lines.append("tags: " + ", ".join(f"#{t}" for t in found.tags))
    if found.aliases:
        lines.append("aliases: " + ", ".join(found.aliases))
    if found.source_path:
        lines.append(f"source: {found.source_path}")
    lines.append(f"created: {_when(found.created)}  updated: {_when(found.updated)}")
    for name, values in found.fields.items():
        lines.append(f"{name}: {', '.join(str(v) for v in values)}")
    if found.body.strip():
        lines += ["", found.body.rstrip()]
    if edges:
        lines += ["", "## Edges"]
        for e in edges:
            arrow = "->" if e.direction == "out" else "<-"
            other = f"{e.other_title} ({e.other_id})" if e.other_id else f"{e.target} (unresolved)"
            lines.append(f"- {e.type} {arrow} {other}")
    write_stdout("\n".join(lines) + "\n")


@handle_errors
def search_command(
    query: Annotated[str, typer.Argument(help="Words to find; any text is accepted.")],
    db: DbOption = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Most hits to show.")] = 20,
    format: FormatOption = "text",
    include_private: IncludePrivateOption = False,
) -> None:
    """Full-text search (BM25) over titles, aliases and bodies."""
    from ctx.store import open_graph
    from ctx.store.reads import count_private_matches, search

    _check_format(format)
    conn = open_graph(resolve_db_path(db))
    hits = search(conn, query, limit=limit, include_private=include_private)
    withheld = 0 if include_private else count_private_matches(conn, query)
    if withheld and format != "json":
        warn(f"{withheld} private node(s) matched and were withheld (--include-private shows them)")
    if format == "json":
        print_json(
            {
                "query": query,
                "count": len(hits),
                "withheld_private": withheld,
                "results": [
                    {
                        "id": h.id,
                        "title": h.title,
                        "type": h.type,
                        "source_path": h.source_path,
                        "score": round(h.score, 6),
                        "snippet": h.snippet,
                    }
                    for h in hits
                ],
            }
        )
        return
    if not hits:
        write_stdout(f"no matches for {query!r}\n")
        return
    lines = []
    for rank, h in enumerate(hits, start=1):
        lines.append(f"{rank:>2}. {h.title}  [{h.id}]  score {h.score:.2f}")
        if h.snippet:
            lines.append(f"    {' '.join(h.snippet.split())}")
    write_stdout("\n".join(lines) + "\n")
