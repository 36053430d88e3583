"""What `ctx search`, `ctx show` and `ctx stats` answer, as text or JSON.

The CLI and the MCP server both print these reports, so an agent and a person at a terminal get
the same bytes for the same question and DB state.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctx.errors import UsageError, printable
from ctx.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from ctx.graph import Graph
    from ctx.store.protocols import GraphReader, GraphStore

FORMATS = ("text", "json")
# Most hits one search returns (`--limit`, the MCP `limit`): past this a search is an export.
MAX_SEARCH_LIMIT = 1000


@dataclass
class Report:
    text: str  # exactly what goes to stdout
    data: Any = None  # the JSON document, when the format is json
    warnings: list[str] = field(default_factory=list)  # one-line notices for stderr


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise UsageError(f"--format must be text or json, not {fmt!r}")


def json_document(data: Any) -> str:
    from ctx.jsonout import dumps

    return dumps(data, indent=2, sort_keys=False) + "\n"


def _when(epoch: float | None, zone: str = " UTC") -> str:
    if epoch is None:
        return "-"
    try:
        return dt.datetime.fromtimestamp(epoch, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M") + zone
    except (ValueError, OverflowError, OSError):  # stored by a ctx that did not check dates yet
        return "-"


def _report(fmt: str, data: dict[str, Any], text: str, warnings: list[str] | None = None) -> Report:
    if fmt == "json":
        return Report(json_document(data), data, [])
    # Text goes to a terminal: no control character of a name or a note (an escape sequence, a
    # carriage return) reaches it as itself; JSON escapes them by its own rules.
    return Report("\n".join(printable(line) for line in text.split("\n")), None, warnings or [])


def search_report(graph: Graph, query: str, *, limit: int, fmt: str) -> Report:
    check_format(fmt)
    if limit < 1 or limit > MAX_SEARCH_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_SEARCH_LIMIT}, not {limit}")
    from ctx.freshness import graph_freshness, last_refresh

    hits = graph.search(query, limit=limit)
    freshness = graph_freshness(graph.store, last_refresh(), include_private=graph.include_private)
    data = {
        "schema": SCHEMA_VERSION,
        "query": query,
        "count": len(hits),
        "freshness": freshness.as_meta(),
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
    lines = []
    for rank, hit in enumerate(hits, start=1):
        lines.append(f"{rank:>2}. {printable(hit.title)}  [{printable(hit.id)}]  score {hit.score:.2f}")
        if hit.snippet:
            lines.append("    " + " ".join(hit.snippet.split()))
    text = "\n".join(lines) + "\n" if lines else f"no matches for {query!r}\n"
    # Nothing is said about private nodes: any count of those a query matches would tell a reader
    # without access which words private notes hold (4* -> 1, 43* -> 1, 4322 -> 0).
    report = _report(fmt, data, text)
    if freshness.stale:  # on stderr whatever the format, as a build's
        report.warnings.append(freshness.line())
    return report


def show_report(graph: Graph, node: str, *, fmt: str) -> Report:
    from ctx import tokens

    check_format(fmt)
    from ctx.assemble.block_refs import resolve

    shown = graph.show(node)
    found, edges = shown.node, shown.edges
    # Block references as the text they name, with its page (the `ref` edges keep the ids).
    body, title = resolve([found.body, found.title], graph.reader.block_texts)
    data = {
        "schema": SCHEMA_VERSION,
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
        # Counted now: the graph stores an estimate (what a build plans with).
        "tokens": tokens.count_tokens(f"{found.title}\n{found.body}"),
        "body": body,
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
    lines = [f"# {printable(title)}", "", f"id: {printable(found.id)}", f"type: {printable(found.type)}"]
    if found.tags:
        lines.append("tags: " + ", ".join(f"#{t}" for t in found.tags))
    if found.aliases:
        lines.append("aliases: " + ", ".join(found.aliases))
    if found.source_path:
        lines.append(f"source: {printable(found.source_path)}")
    # A source's own date is kept as written, its zone dropped (importers/dates.py); a file's
    # modified time is an instant, shown in UTC.
    lines.append(f"created: {_when(found.created, '')}  updated: {_when(found.updated)}")
    lines += [f"{name}: {', '.join(str(v) for v in values)}" for name, values in found.fields.items()]
    if body.strip():
        lines += ["", body.rstrip()]
    if edges:
        lines += ["", "## Edges"]
        for e in edges:
            arrow = "->" if e.direction == "out" else "<-"
            other = (
                f"{printable(e.other_title or '')} ({printable(e.other_id)})" if e.other_id
                else f"{printable(e.target or '')} (unresolved)"
            )
            lines.append(f"- {e.type} {arrow} {other}")
    return _report(fmt, data, "\n".join(lines) + "\n")


def stats_report(graph: Graph, *, fmt: str) -> Report:
    check_format(fmt)
    include_private = graph.include_private
    # The graph in use first: the user's and the project's config can each name one.
    from ctx.paths import shown

    data = {"schema": SCHEMA_VERSION, "graph": shown(graph.path), **graph.stats()}
    data["embeddings"] = embedding_coverage(graph.reader)
    # A log's long passages' paragraphs, each its own vector (``ctx.assemble.paragraph_vectors``).
    from ctx.assemble.paragraph_vectors import visible_count

    data["embeddings"]["paragraph_vectors"] = visible_count(graph.reader, data["embeddings"]["model"])
    _first_stage(graph.reader, data["embeddings"])
    lines = [f"graph: {data['graph']}", f"nodes: {data['nodes']}"]
    lines += [f"  {t}: {n}" for t, n in data["nodes_by_type"].items()]
    if data["private_nodes"] and not include_private:
        lines.append(f"  (private, by type withheld): {data['private_nodes']}")
    lines.append(f"edges: {data['edges_total']}")
    lines += [f"  {t}: {n}" for t, n in data["edges"].items()]
    if data["private_edges"] and not include_private:
        lines.append(f"  (touching private nodes, by type withheld): {data['private_edges']}")
    lines.append(f"unresolved links: {data['unresolved_links']}")
    lines.append(f"private nodes: {data['private_nodes']} (withheld from every output by default)")
    lines.append(f"sources: {len(data['sources'])}")
    lines += [
        f"  [{s['id']}] {printable(s['root'])} ({s['format']}): {s['nodes']} nodes from {s['files']} files,"
        f" imported {_when(s['imported_at'])}"
        for s in data["sources"]
    ]
    lines.append(f"last import: {_when(data['last_import'])}")
    lines.append(_coverage_line(data["embeddings"]))
    if data["embeddings"]["paragraph_vectors"]:
        lines.append(f"  paragraph vectors: {data['embeddings']['paragraph_vectors']} (paragraphs of long log passages)")
    return _report(fmt, data, "\n".join(lines) + "\n")


def embedding_coverage(reader: GraphReader) -> dict[str, Any]:
    """How many nodes have a vector from the graph's model: fresh (from the node's current text),
    stale (from older text or another model) and missing."""
    return reader.embedding_coverage()


def _first_stage(reader: GraphReader, coverage: dict[str, Any]) -> None:
    """A graph left at `ctx embed --fast`'s first stage has none of the model's node vectors by
    design (each question embeds its candidates), and `ctx sync` keeps it there: what it can lack
    is its passages' static vectors, counted by nodes as builds' freshness line counts them
    (``ctx.freshness.graph_freshness``). Stats said "0/N fresh; N missing (`ctx embed` or
    `ctx sync` updates them)" of every such graph, and a sync changed nothing."""
    from ctx.freshness import FIRST_STAGE_KEY

    static = reader.setting(FIRST_STAGE_KEY) if coverage["model"] else None
    coverage["first_stage"] = (
        {"model": static, "nodes_without_static_vectors": reader.nodes_without_static_vectors(static)}
        if static else None
    )


def _coverage_line(coverage: dict[str, Any]) -> str:
    if coverage["model"] is None:
        return "embeddings: none (`ctx embed` adds similarity scoring and semantic search)"
    first = coverage.get("first_stage")
    if first:
        lacking = first["nodes_without_static_vectors"]
        line = (
            f"embeddings: first stage ({first['model']}), {coverage['fresh']}/{coverage['nodes']} nodes with"
            f" {coverage['model']}'s own vectors (each question embeds its candidates; `ctx embed` computes them all)"
        )
        if lacking:
            line += f"; {lacking} nodes with passages lacking static vectors (`ctx sync` or `ctx embed` gives them)"
        return line
    line = f"embeddings: {coverage['fresh']}/{coverage['nodes']} nodes fresh ({coverage['model']})"
    if coverage["stale"] or coverage["missing"]:
        line += f"; {coverage['stale']} stale, {coverage['missing']} missing (`ctx embed` or `ctx sync` updates them)"
    return line


def sources_report(store: GraphStore, *, fmt: str) -> Report:
    """`ctx sources`: every registered source with its format, size, last import and vectors."""
    from pathlib import Path

    from ctx.store import as_store

    check_format(fmt)
    reader = as_store(store).reader(include_private=True)
    model = reader.active_model()
    sources = reader.sources(counted=True)
    rows: list[dict[str, Any]] = [
        {
            "id": s.id,
            "root": s.root,
            "name": s.name,
            "format": s.format,
            "exists": Path(s.root).exists(),
            "nodes": s.nodes,
            "files": s.files,
            "imported_at": s.imported_at,
            "embeddings": {"model": model, "fresh": s.embedded, "stale_or_missing": (s.nodes or 0) - (s.embedded or 0)}
            if model
            else None,
        }
        for s in sources
    ]
    data: dict[str, Any] = {"embedding_model": model, "sources": rows}
    if not rows:
        return _report(fmt, data, "no sources yet; add one with `ctx import PATH`\n")
    table = [("id", "format", "nodes", "files", "last import", "vectors", "path")]
    for row in rows:
        vectors = f"{row['embeddings']['fresh']}/{row['nodes']}" if row["embeddings"] else "-"
        path = row["root"] + ("" if row["exists"] else "  (missing)")
        table.append(
            (str(row["id"]), row["format"], str(row["nodes"]), str(row["files"]), _when(row["imported_at"]), vectors, path)
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    numeric = {0, 2, 3, 5}
    lines = [
        "  ".join(
            [cell.rjust(w) if i in numeric else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths))]
            + [r[-1]]
        )
        for r in table
    ]
    footer = f"vectors: fresh/nodes for {model}" if model else "vectors: none (run `ctx embed` for similarity)"
    from ctx.freshness import FIRST_STAGE_KEY

    static = reader.setting(FIRST_STAGE_KEY) if model else None
    if static:
        # `ctx embed --fast`: "0/N" alone read as a graph nobody embedded (as `ctx stats` said).
        footer += f"; first stage ({static}): each question embeds its candidates, `ctx embed` computes them all"
    return _report(fmt, data, "\n".join(lines) + "\n" + footer + "\n")
