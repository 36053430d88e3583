"""The audit of a build: what the budget did with each candidate, and the ``--explain`` table.

``record_decisions`` writes each candidate's decision, tokens and reason once packing is done;
``explain_rows`` turns the ranking into the rows ``BuildResult.candidates`` carries (the JSON of
``--explain``, the MCP tool's extra text); the rest prints those rows as plain text (the CLI draws a
rich table on a terminal from the same rows and columns).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctx.assemble import outline_view
from ctx.assemble.candidate import NO_ROOM, Candidate
from ctx.assemble.document import FULL, SUMMARY, Document, Item
from ctx.assemble.render import clip


def record_decisions(doc: Document, ranked: list[Candidate], placed: dict[str, Item], cost: Callable[[Item], int]) -> None:
    """Each candidate's decision, tokens and reason, from what the packer placed (``placed``) and
    listed (``doc.also``); ``cost`` is the packer's price of a block in the final document."""
    also = {i.cand.id: i for i in doc.also}
    for c in ranked:
        item = placed.get(c.id)
        if item is not None:
            c.decision = item.variant
            c.tokens = cost(item)
            c.reason = (
                "the topic" if c.seed and item.variant == FULL
                else "fits whole" if item.variant == FULL
                else "the topic, shortened to fit" if c.seed
                else "shortened to fill the remaining budget"
            )
        elif c.id in also:
            c.decision, c.tokens = SUMMARY, cost(also[c.id])
            c.reason = "summary-only mode" if doc.summary_only else "no room for its text; one-line summary"
        else:
            c.decision, c.tokens = "dropped", 0
            if not c.reason:
                c.reason = NO_ROOM
    outline_view.record(ranked, placed, FULL)


def explain_rows(ranked: list[Candidate]) -> list[dict[str, Any]]:
    return [
        {
            "rank": c.rank,
            "id": c.id,
            "title": c.title,
            "section": c.section,
            "distance": c.hops,
            "path": " > ".join(c.path_names) or "-",
            "distance_term": c.parts.get("distance"),
            "similarity": c.parts.get("similarity"),
            "recency": c.parts.get("recency"),
            "boost": c.parts.get("boost"),
            "score": c.score,
            "decision": c.decision,
            "tokens": c.tokens,
            "reason": c.reason,
        }
        for c in ranked
    ]



EXPLAIN_COLUMNS = (
    ("rank", "#"), ("id", "id"), ("section", "section"), ("distance", "hops"), ("path", "path"),
    ("distance_term", "1/dist"), ("similarity", "sim"), ("recency", "recency"), ("boost", "boost"),
    ("score", "score"), ("decision", "decision"), ("tokens", "tokens"), ("reason", "reason"),
)


def explain_cells(row: dict[str, Any]) -> list[str]:
    cells = []
    for key, _ in EXPLAIN_COLUMNS:
        value = row.get(key)
        if isinstance(value, float):
            cells.append(f"{value:.3f}")
        else:
            cells.append("-" if value is None else str(value))
    return cells


def pool_note(pool: dict[str, Any], depth: int) -> str:
    """What the candidate pool and the walk left out (``meta.pool``), in one line."""
    walk = pool["walk"]
    parts = [f"candidates: the best {pool['kept']} of {pool['reached']} reached (pool of {pool['size']} for this budget)"]
    if walk["stopped"] == "bound":
        parts.append(f"walk stopped after hop {walk['hops']} of {depth}: nothing further away could rank among them")
    elif walk["stopped"] == "cap":
        parts.append(f"walk stopped after hop {walk['hops']} of {depth} with {pool['reached']} nodes reached")
    if walk["unexpanded"]:
        parts.append(f"{walk['unexpanded']} frontier node(s) left unexpanded, the nearest taken first")
    return "; ".join(parts)


def explain_caption(meta: dict[str, Any]) -> str:
    """The line under the --explain table that says what the pool left out ("" when nothing)."""
    pool = meta.get("pool")
    return pool_note(pool, int(meta.get("depth", 0))) + "\n" if pool else ""


def explain_text(rows: list[dict[str, Any]]) -> str:
    table = [[title for _, title in EXPLAIN_COLUMNS]] + [explain_cells(r) for r in rows]
    widths = [min(max(len(r[i]) for r in table), 40) for i in range(len(EXPLAIN_COLUMNS))]
    lines = []
    for r in table:
        lines.append("  ".join(clip(cell, widths[i]).ljust(widths[i]) for i, cell in enumerate(r)).rstrip())
    return "\n".join(lines) + "\n"
