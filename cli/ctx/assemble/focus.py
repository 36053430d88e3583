"""Query-focused text: a long node shown as its passages most relevant to the topic.

Instead of a node's first N tokens, the passages that answer the topic, in document order, each
under its heading path, with a gap marker wherever text was left out. Passages are chosen by
relevance (those the topic matched), then by closeness to a chosen one (the text around an answer
often finishes it), then in reading order.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx.passages import nest_headings, top_heading_level

if TYPE_CHECKING:
    from ctx.assemble.counter import Tally

GAP = "[…]"
PATH_SEP = " › "
# What a passage's heading-path line and the blank lines around it cost, about (planning only:
# the packer counts the rendered text exactly).
LINE_OVERHEAD = 4
# What the rest of a passage is worth beside its core (the paragraphs holding the topic's words)
# when full text placed the passage first: a weaker match's rest is worth more of it (its matched
# words are likelier incidental), one the vectors alone found all of it (``passage_view``).
REST_DECAY = 0.5
# What a day page's other entries holding the topic's words (``Piece.wide``) are worth beside its
# core, the fewest entries covering those words: the same words again, in entries one line long,
# an answer sharing only a name with its question among them (``passage_view``).
WIDE_WORTH = 0.2


@dataclass(frozen=True)
class Piece:
    """One passage as rendering sees it."""

    ord: int
    heading: tuple[str, ...]
    text: str
    # The exact count of ``text`` in the build's encoding, or one counted as far as asked
    # (``counter.Tally``): ask ``tokens`` or ``within``, never this field.
    size: int | Tally
    relevance: float  # 0 when the topic did not match it
    # A long passage's paragraphs that hold the topic's words, gaps marked (``matching_lines``),
    # and its exact count; None when the passage is shown whole or not at all.
    core: str | None = None
    core_tokens: int = 0
    rest_worth: float = REST_DECAY  # the rest's share of the passage's worth (``passage_view``)
    # The power its note's standing counts to beside its relevance (``packing_order``): 1 for a
    # page about one thing, less for a log of unrelated entries (``passage_view``).
    standing: float = 1.0
    # A day page's core widened to every entry holding the topic's words (``matching_lines.Core.
    # wide``), offered between the core and the rest at ``WIDE_WORTH`` of the passage's worth;
    # None when there is no such step.
    wide: str | None = None
    wide_tokens: int = 0
    # Whether its note (a file log, where full text alone ranked) stands no lower than its best
    # passage says (``packing_order.passage_units``, ``passage_view``).
    floored: bool = False

    @property
    def tokens(self) -> int:
        """The exact count of ``text``."""
        size = self.size
        return size if isinstance(size, int) else size.exact()

    def within(self, limit: int) -> int | None:
        """``tokens`` when it is at most ``limit``, else None, counted no further than that needs."""
        size = self.size
        if isinstance(size, int):
            return size if size <= limit else None
        return size.within(limit)


def _starts_with_heading(text: str) -> bool:
    return text.lstrip().startswith("#")


def excerpt(
    pieces: Sequence[Piece], chosen: Sequence[int], cores: Container[int] = (), wides: Container[int] = (),
) -> str:
    """The chosen passages (by ``ord``) in reading order, headings nested under the node's own;
    those in ``cores`` as their core (``Piece.core``: the paragraphs that matched, gaps marked),
    those in ``wides`` as their wider core (``Piece.wide``)."""
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
    open_gap = False  # the last text shown was a core ending in a gap marker
    for ord_ in keep:
        piece = by_ord[ord_]
        gap = (previous is None and ord_ > 0) or (previous is not None and ord_ != previous + 1)
        as_wide = ord_ in wides and piece.wide is not None
        as_core = as_wide or (ord_ in cores and piece.core is not None)
        text = (piece.wide if as_wide else piece.core if as_core else None) or piece.text
        if gap and not open_gap:  # a core ending in a gap already says so
            out.append(GAP)
        if as_core and (gap or open_gap):
            # One marker for what was left out between: the passages skipped, the last core's
            # closing gap, this core's opening gap (two adjacent cores printed "[…]" twice).
            text = text.removeprefix(GAP).lstrip("\n")
        # A core opening on a heading of its own (a log's entry further down the passage: its
        # time, its sender) says where it sits; the passage's opening heading would mislead.
        opening = text.removeprefix(GAP).lstrip("\n") if as_core else piece.text
        path = piece.heading[:-1] if _starts_with_heading(opening) else piece.heading
        # The heading path says where a passage sits, once per jump (adjacent passages share it).
        if path and (previous is None or gap):
            out.append("#### " + PATH_SEP.join(path))
        out.append(nest_headings(text, top))
        open_gap = as_core and text.endswith(GAP)
        previous = ord_
    if keep[-1] < last_ord and not open_gap:
        out.append(GAP)
    return "\n\n".join(out)


def shown_as_core(
    pieces: Sequence[Piece], chosen: Sequence[int], cores: Container[int], wides: Container[int] = (),
) -> tuple[int, ...]:
    """Those of ``chosen`` that ``excerpt`` shows cut, as their core or wider core (a passage
    without one is whole)."""
    has_core = {p.ord for p in pieces if p.core is not None}
    has_wide = {p.ord for p in pieces if p.wide is not None}
    return tuple(sorted(o for o in set(chosen) if (o in cores and o in has_core) or (o in wides and o in has_wide)))


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
    fits: Callable[[list[int], set[int]], bool] | None = None,
    *,
    relevant_only: bool = False,
) -> tuple[list[int], set[int]]:
    """The most valuable passages whose estimated size fits ``allowance`` tokens: their ords, and
    those of them shown as their core only (``Piece.core``).

    Relevant passages come by relevance, a passage with a core as two parts: its core at its
    relevance, the rest of it at ``Piece.rest_worth`` of that (taken only after its core), as the
    packer values them across notes (``packing_order.shown_units``); then the passages the topic did not
    match, in ``priority`` order. Parts are taken best first, skipping (not stopping at) one that
    does not fit. ``fits`` (when given) checks the real rendered cost and gives back the least
    valuable part taken until it holds.
    """
    units: list[tuple[tuple[int, float, int, int], Piece, bool]] = []
    for rank, ord_ in enumerate(priority(pieces)):
        piece = next(p for p in pieces if p.ord == ord_)
        if piece.relevance > 0:
            units.append(((0, -piece.relevance, 0, piece.ord), piece, False))
            if piece.core is not None:
                units.append(((0, -piece.relevance * piece.rest_worth, 1, piece.ord), piece, True))
        elif not relevant_only:
            units.append(((1, 0.0, rank, piece.ord), piece, False))
    units.sort(key=lambda u: u[0])
    taken: list[tuple[int, bool]] = []  # (ord, rest) in the order taken
    shown: dict[int, bool] = {}  # ord -> whole
    used = 0
    for _, piece, rest in units:
        # Each test is ``used + cost <= allowance``, a passage's count asked only as far as
        # that needs (``Piece.within``).
        if rest:
            if piece.ord not in shown:
                continue
            whole = piece.within(allowance - used + piece.core_tokens)
            if whole is None:
                continue
            cost = whole - piece.core_tokens
        elif piece.core is not None and piece.relevance > 0:
            cost = piece.core_tokens + LINE_OVERHEAD
            if used + cost > allowance:
                continue
        else:
            whole = piece.within(allowance - used - LINE_OVERHEAD)
            if whole is None:
                continue
            cost = whole + LINE_OVERHEAD
        taken.append((piece.ord, rest))
        shown[piece.ord] = rest or piece.core is None or piece.relevance <= 0
        used += cost

    def cores() -> set[int]:
        return {o for o, whole in shown.items() if not whole}

    if fits is not None:
        while taken and not fits(sorted(shown), cores()):
            ord_, rest = taken.pop()  # the least valuable part taken
            if rest:
                shown[ord_] = False
            else:
                del shown[ord_]
    return sorted(shown), cores()
