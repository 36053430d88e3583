"""Query-focused text: a long node shown as its passages most relevant to the topic.

Instead of a node's first N tokens, the passages that answer the topic, in document order, each
under its heading path, with a gap marker wherever text was left out. Passages are chosen by
relevance (those the topic matched), then by closeness to a chosen one (the text around an answer
often finishes it), then in reading order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctx.passages import nest_headings, top_heading_level

GAP = "[…]"
PATH_SEP = " › "
# What a passage's heading-path line and the blank lines around it cost, about (planning only:
# the packer counts the rendered text exactly).
LINE_OVERHEAD = 4


@dataclass(frozen=True)
class Piece:
    """One passage as rendering sees it."""

    ord: int
    heading: tuple[str, ...]
    text: str
    tokens: int  # exact count of ``text`` in the build's encoding
    relevance: float  # 0 when the topic did not match it


def _starts_with_heading(text: str) -> bool:
    return text.lstrip().startswith("#")


def excerpt(pieces: Sequence[Piece], chosen: Sequence[int]) -> str:
    """The chosen passages (by ``ord``) in reading order, headings nested under the node's own."""
    keep = sorted(set(chosen))
    if not keep:
        return ""
    by_ord = {p.ord: p for p in pieces}
    last_ord = max(p.ord for p in pieces)
    # One nesting for the whole node, so its headings keep their relative depth across passages.
    levels = [lv for p in pieces for lv in [top_heading_level(p.text)] if lv is not None]
    top = min(levels) if levels else None
    out: list[str] = []
    previous: int | None = None
    for ord_ in keep:
        piece = by_ord[ord_]
        gap = (previous is None and ord_ > 0) or (previous is not None and ord_ != previous + 1)
        if gap:
            out.append(GAP)
        path = piece.heading[:-1] if _starts_with_heading(piece.text) else piece.heading
        # The heading path says where a passage sits, once per jump (adjacent passages share it).
        if path and (previous is None or gap):
            out.append("#### " + PATH_SEP.join(path))
        out.append(nest_headings(piece.text, top))
        previous = ord_
    if keep[-1] < last_ord:
        out.append(GAP)
    return "\n\n".join(out)


def priority(pieces: Sequence[Piece]) -> list[int]:
    """Passage ords, most worth showing first: relevant ones by relevance, then their neighbours
    (nearest first), then the rest in reading order."""
    relevant = [p.ord for p in pieces if p.relevance > 0]
    def key(p: Piece) -> tuple[int, float, int]:
        if p.relevance > 0:
            return (0, -p.relevance, p.ord)
        if relevant:
            return (1, float(min(abs(p.ord - r) for r in relevant)), p.ord)
        return (1, 0.0, p.ord)

    return [p.ord for p in sorted(pieces, key=key)]


def choose(
    pieces: Sequence[Piece],
    allowance: int,
    fits: Callable[[list[int]], bool] | None = None,
    *,
    relevant_only: bool = False,
) -> list[int]:
    """The most valuable passages whose estimated size fits ``allowance`` tokens (by ``ord``).

    Passages are taken in ``priority`` order, skipping (not stopping at) one that does not fit.
    ``fits`` (when given) checks the real rendered cost and drops the least valuable chosen
    passage until it holds.
    """
    order = priority(pieces)
    by_ord = {p.ord: p for p in pieces}
    chosen: list[int] = []
    used = 0
    for ord_ in order:
        piece = by_ord[ord_]
        if relevant_only and piece.relevance <= 0:
            break
        cost = piece.tokens + LINE_OVERHEAD
        if used + cost <= allowance:
            chosen.append(ord_)
            used += cost
    if fits is not None:
        while chosen and not fits(sorted(chosen)):
            chosen.pop()  # the least valuable of those chosen
    return sorted(chosen)
