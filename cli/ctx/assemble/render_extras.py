"""Rendering pieces that lens options switch on: tree layout, neighbour lists, citations, the
closing summary and empty-section notices. ``render.py`` calls these at fixed points; they only
format, never decide what is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from ctx.assemble.candidate import Candidate
from ctx.assemble.citations import Citation, number_sources


class _Section(Protocol):
    name: str
    items: list[Any]


def tree_prefix(c: Candidate) -> str:
    """Indentation for ``layout: tree``: one step per hop, so a chain reads as a hierarchy."""
    if c.seed or not c.path:
        return ""
    return "  " * (len(c.path) - 1) + "↳ "


def relation_line(c: Candidate) -> str | None:
    """``relation: supports → c06``: the node this one hangs from in the tree, and how."""
    if not c.path:
        return None
    last = c.path[-1]
    return f"relation: {last.reversed_edge.replace('_', ' ')} → {last.src}"


def neighbour_lines(c: Candidate) -> list[str]:
    return [
        f"- {name.replace('_', ' ')}: {', '.join(ids)}"
        for name, ids in c.neighbours.items()
        if ids
    ]


def citations_for(shown_in_order: Iterable[Candidate]) -> dict[str, Citation]:
    return number_sources(shown_in_order)


def citation_number(cites: dict[str, Citation], c: Candidate) -> int:
    """The node's source number; a node not placed yet gets the next free number (for costing)."""
    found = cites.get(c.document)
    return found.number if found is not None else len(cites) + 1


def cited_heading(c: Candidate, number: int) -> str:
    where = f" — {c.source_path}" if c.source_path else ""
    return f"[{number}] {c.title}{where}"


def empty_section_text(name: str, why: str | None) -> str:
    return f"## {name}\n_Nothing here: {why or 'no node matched this section'}._"


def _section_rows(sections: Sequence[_Section]) -> list[tuple[str, int, int]]:
    return [(s.name, len(s.items), sum(i.tokens for i in s.items)) for s in sections]


def closing_summary_markdown(sections: Sequence[_Section], also: int, used: int, budget: int) -> str:
    """Seed 000's context summary: how many nodes each section holds and what they cost."""
    lines = ["## Context summary"]
    for name, count, tokens in _section_rows(sections):
        lines.append(f"- {name}: {count} node(s), {tokens} tokens")
    if also:
        lines.append(f"- also related (one line each): {also}")
    lines.append(f"- total: {used}/{budget} tokens")
    return "\n".join(lines)


def closing_summary_json(sections: Sequence[_Section], also: int, used: int, budget: int) -> dict[str, Any]:
    return {
        "sections": [{"name": n, "nodes": k, "tokens": t} for n, k, t in _section_rows(sections)],
        "also_related": also,
        "tokens": {"used": used, "budget": budget},
    }


def grouped_by_document(items: Sequence[Any]) -> list[Any]:
    """Order ``grouped``: whole documents, best document first; inside one, reading order."""
    best: dict[str, int] = {}
    for item in items:
        key = item.cand.document
        best[key] = min(best.get(key, item.cand.rank), item.cand.rank)
    return sorted(
        items,
        key=lambda i: (best[i.cand.document], i.cand.document, i.cand.position is None,
                       i.cand.position or 0, i.cand.rank),
    )
