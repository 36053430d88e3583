"""One node's size: the largest version of a candidate whose block fits an allowance.

In turn: the whole node; a page's outline cut to the most blocks that fit (before its own text);
the passages most relevant to the topic (``focus.py``); its text cut at a sentence end
(``truncate.py``), the cut re-aimed until the rendered block fits, since rendering can cost more
(JSON escapes) or less than the raw text.
"""

from __future__ import annotations

from ctx.assemble import focus, outline_view
from ctx.assemble.candidate import Candidate
from ctx.assemble.packer import Packer
from ctx.assemble.document import FULL, SHORTENED, Item
from ctx.assemble.truncate import shorten

CUT_TRIES = 8  # re-aimed cuts of one text before the best that fitted is taken


def shortened_item(
    p: Packer, c: Candidate, block_budget: int, *, force: bool = False, compact: int = 0,
    min_tokens: int | None = None,
) -> Item | None:
    """The largest version of ``c`` whose block fits ``block_budget`` (FULL if all of it does).

    ``force`` (seeds): return a version even if only the title and metadata fit.
    ``compact``: the title-and-id form of the block, for tiny budgets.
    ``min_tokens``: the least text worth showing (default: the lens's ``min_shortened_tokens``).
    """
    body = c.body or ""
    full = Item(c, FULL, body, compact=compact)
    if p.fits(full, block_budget) and not cut_outline(c):
        return full
    outlined = outline_cut(p, c, full, block_budget)
    if outlined is not None:
        return outlined
    empty = Item(c, SHORTENED, "", compact=compact)
    overhead = p.cost(empty)
    allowance = block_budget - overhead - 1
    if allowance < (p.min_short if min_tokens is None else min_tokens) and not force:
        return None
    if c.pieces and (len(c.pieces) > 1 or c.pieces[0].core is not None):
        focused = focused_item(p, c, allowance, block_budget, compact)
        if focused is not None:
            return focused
        # Not one passage fits: cut the most relevant one instead of the note's opening.
        body = focus.excerpt(c.pieces, focus.priority(c.pieces)[:1])
    best = cut_to_fit(p, c, body, allowance, block_budget, overhead, compact)
    if best is not None and best.text:
        return best
    return empty if force else None


def cut_outline(c: Candidate) -> bool:
    """Whether ``c`` "whole" would be less than its passages: an outliner page whose text is its
    blocks shows at most ``output.outline_max_nodes`` of them, so a day page of 70 entries shown
    "whole" is its first 30 and a gap, and the entries the topic matched further down are gone.
    A page the topic matched is shown as its passages instead, which hold all of its text."""
    return c.outline is not None and c.outline.truncated and c.pieces_matched()


def outline_cut(p: Packer, c: Candidate, full: Item, block_budget: int) -> Item | None:
    """A page's outline goes before its own text: the most blocks that still fit, or None (no
    outline, or the topic matched some of its passages: those are shown instead)."""
    if not full.outline_shown() or (c.pieces and c.pieces_matched()):
        return None
    body, compact = full.text, full.compact
    n = outline_view.largest_fitting(
        full.outline_shown(),
        lambda k: p.cost(Item(c, SHORTENED, body, compact=compact, outline_n=k)) <= block_budget,
    )
    if n is not None and (n or body.strip()):
        return Item(c, SHORTENED, body, compact=compact, outline_n=n)
    return None


def cut_to_fit(
    p: Packer, c: Candidate, body: str, allowance: int, block_budget: int, overhead: int, compact: int,
) -> Item | None:
    """The longest cut of ``body`` whose block fits ``block_budget``: cut at ``allowance``
    tokens, re-aimed from what the block really cost, a few times at most."""
    allowance = min(allowance, p.full_body_tokens(c) - 1)
    best: Item | None = None
    for _ in range(CUT_TRIES):
        if allowance <= 0:
            break
        item = Item(c, SHORTENED, shorten(body, allowance, p.strategy, p.counter, p.topic), compact=compact)
        cost = p.cost(item)
        if cost <= block_budget:
            if best is None or len(item.text) > len(best.text):
                best = item
            if block_budget - cost <= 2:
                break
        nxt = next_allowance(p, c, item, allowance, cost, block_budget, overhead)
        if nxt == allowance:
            break
        allowance = nxt
    return best


def next_allowance(
    p: Packer, c: Candidate, item: Item, allowance: int, cost: int, block_budget: int, overhead: int,
) -> int:
    """Rendering can cost more (JSON escapes) or less than the raw text: rescale the allowance."""
    body_cost = max(cost - overhead, 1)
    nxt = int(allowance * (block_budget - overhead) / body_cost)
    if cost > block_budget:
        # Cutting snaps to sentence ends, so aim below the text we got, not the allowance.
        shown = p.counter.count(item.text)
        nxt = min(nxt, shown - 1 - (cost - block_budget) * shown // body_cost)
    return min(nxt, p.full_body_tokens(c) - 1)


def focused_item(
    p: Packer, c: Candidate, allowance: int, block_budget: int, compact: int = 0, among: list[int] | None = None,
) -> Item | None:
    """``c`` as the passages most relevant to the topic that fit (focus.py), or None; ``among``:
    only those passages (by ord) are chosen from."""
    pieces = c.pieces or []

    def item_for(ords: list[int], cores: set[int]) -> Item:
        return Item(c, SHORTENED, focus.excerpt(pieces, ords, cores), compact=compact, passages=tuple(ords),
                    cores=focus.shown_as_core(pieces, ords, cores))

    offered = pieces if among is None else [pc for pc in pieces if pc.ord in among]
    chosen, cores = focus.choose(offered, allowance, lambda ords, cores: p.fits(item_for(ords, cores), block_budget))
    if not chosen:
        return None
    return item_for(chosen, cores)


def won_item(
    p: Packer, c: Candidate, ords: list[int], room: int, cores: set[int] | None = None, wides: set[int] | None = None,
) -> Item | None:
    """``c`` showing the passages it won (``ords``; those in ``cores`` as their core only, those
    in ``wides`` as their wider core): whole if it won them all whole and that fits, else those
    passages, else each as its core, else what fits of them (``won_cut``), else whatever version
    of it fits ``room``."""
    pieces = c.pieces or []
    cores = cores or set()
    wides = wides or set()
    if len(ords) == len(pieces) and not cores and not wides and not cut_outline(c):
        full = Item(c, FULL, c.body or "")
        if p.cost(full) <= room:
            return full
    item = Item(c, SHORTENED, focus.excerpt(pieces, ords, cores, wides), passages=tuple(ords),
                cores=focus.shown_as_core(pieces, ords, cores, wides))
    if p.cost(item) <= room:
        return item
    every = {pc.ord for pc in pieces if pc.core is not None and pc.ord in ords}
    if every - cores or wides:
        item = Item(c, SHORTENED, focus.excerpt(pieces, ords, every), passages=tuple(ords),
                    cores=focus.shown_as_core(pieces, ords, every))
        if p.cost(item) <= room:
            return item
    return won_cut(p, c, ords, room) or shortened_item(p, c, room)


def won_cut(p: Packer, c: Candidate, ords: list[int], room: int) -> Item | None:
    """``c`` as what fits of the passages it won (``ords``) when they do not fit whole: those of
    them that fit, else the best of them cut to the room; None if too little room. Winning
    prices a passage at an estimate (its tokens and a heading line; shown, a note also pays its
    gap markers and heading jumps), so the member placed last can find a few tokens less than it
    won. Its other passages, smaller but not won, are not what it won its place for: an embedded
    meeting log's session, 11 tokens short, showed three unmatched ~60-token passages instead
    of the 220-token one holding its answer (issue 23)."""
    won = [pc for pc in c.pieces or [] if pc.ord in ords]
    if not won:
        return None
    overhead = p.cost(Item(c, SHORTENED, ""))
    allowance = room - overhead - 1
    if allowance < p.min_short:
        return None
    focused = focused_item(p, c, allowance, room, among=ords)
    if focused is not None:
        return focused
    cut = cut_to_fit(p, c, focus.excerpt(c.pieces or [], focus.priority(won)[:1]), allowance, room, overhead, 0)
    return cut if cut is not None and cut.text else None
