"""The plan: fill each section of the document from its members, before the exact fit.

Costs are the counts of each node's rendered block. A share of the room may be reserved for
one-line summaries ("also related"); the rest is split by the lens's section shares, and what a
section leaves unused flows to the next. Inside a section:

1. take whole nodes in packing order, skipping (not stopping at) those that do not fit; a node
   that does not fit whole may get a useful slice at once (``packing.min_slice``), and a
   protected seed always gets something (it is shortened, never dropped);
2. or, for a lens that packs passages and a topic that matched some, passage by passage
   (``focused_fill``);
3. then shorten the best node left out into what is left of the section.

The rest are listed as one-line summaries while they fit. Below ``output.summary_below`` tokens
the plan is summary-first: one line per related node, the seeds' text cut to what is left.
"""

from __future__ import annotations

from ctx.assemble import focus, outline_view
from ctx.assemble.candidate import Candidate
from ctx.assemble.dedup import normalise
from ctx.assemble.packer import Packer
from ctx.assemble.packing_order import CORE, REST, WIDE, packing_order, shown_units
from ctx.assemble.document import FULL, SHORTENED, SUMMARY, Item
from ctx.assemble.sizing import shortened_item, won_item
from ctx.lenses import Lens
from ctx.lenses.model import Section

ALSO_RELATED_TITLE = "## Also related\n"


def plan(p: Packer, avail: int) -> None:
    """Fill the sections (or, at small budgets, the summary-first form) within ``avail`` tokens."""
    pool = [c for c in p.ranked if c.section is not None]
    p.doc.summary_only = p.budget < p.lens.output.summary_below
    if p.doc.summary_only:
        plan_summary_only(p, pool, avail)
    else:
        plan_sections(p, pool, avail)


# ---------------------------------------------------------------------------------------------
# Sections


def plan_sections(p: Packer, pool: list[Candidate], avail: int) -> None:
    lens = p.lens
    reserve = also_related_reserve(lens, pool, avail)
    content = avail - reserve
    split = unshared_split(lens)
    carry = 0
    skipped: list[Candidate] = []
    for section in lens.sections:
        allot = allotment(section, content, split)
        members = section_members(pool, section, lens.packing.strategy)
        if not members:
            carry += 0 if section.reserve else allot
            continue
        heading = p.heading_cost(section.name)
        room = fill_section(p, members, allot + (0 if section.reserve else carry) - heading)
        skipped.extend(c for c in members if c.id not in p.placed)
        # A section that showed nothing does not print its heading either.
        unused = room + (0 if any(c.id in p.placed for c in members) else heading)
        if section.reserve:
            content -= allot - unused
        else:
            carry = unused
    # Membership by id: comparing Candidate dataclasses field by field was quadratic (10k claims).
    skipped_ids = {c.id for c in skipped}
    skipped += [c for c in pool if c.id not in p.placed and c.id not in skipped_ids and not c.reason]
    fill_summaries(p, sorted(skipped, key=lambda c: c.rank), reserve + carry)


def also_related_reserve(lens: Lens, pool: list[Candidate], avail: int) -> int:
    """The room kept for one-line summaries: only when not everything could be shown whole."""
    total_store = sum(c.store_tokens for c in pool)
    if lens.output.also_related and total_store > avail:
        return int(avail * lens.output.also_related_share)
    return 0


def unshared_split(lens: Lens) -> float:
    """The share of each section that names none: what the named shares leave, split evenly.
    ``reserve`` sections are filled first; the others' shares then apply to what they leave."""
    given = sum(s.share for s in lens.sections if s.share is not None and not s.reserve)
    unshared = [s for s in lens.sections if s.share is None and not s.reserve]
    return max(0.0, 1.0 - given) / len(unshared) if unshared else 0.0


def allotment(section: Section, content: int, split: float) -> int:
    if section.reserve:
        return int(content * section.share) if section.share is not None else content
    return int(content * (section.share if section.share is not None else split))


def section_members(pool: list[Candidate], section: Section, strategy: str) -> list[Candidate]:
    """The section's candidates in packing order, cut to its ``max_nodes`` (seeds always kept)."""
    members = packing_order([c for c in pool if c.section == section.name], strategy)
    if section.max_nodes is None:
        return members
    seeds = [c for c in members if c.seed]
    others = [c for c in members if not c.seed]
    keep = max(0, section.max_nodes - len(seeds))
    for c in others[keep:]:
        c.reason = f"beyond the section's max_nodes ({section.max_nodes})"
    return seeds + others[:keep]


def fill_section(p: Packer, members: list[Candidate], room: int) -> int:
    """Place what fits of ``members`` in ``room`` tokens; the room left."""
    if p.lens.passages and any(c.pieces_matched() for c in members):
        room, left_out = focused_fill(p, members, room)
    else:
        room, left_out = fill_whole(p, members, room)
    return fill_tail(p, left_out, room)


def fill_whole(p: Packer, members: list[Candidate], room: int) -> tuple[int, list[Candidate]]:
    """Whole nodes in packing order, skipping those that do not fit; a seed that does not fit gets
    its share of the room shortened, another node a first slice. The room left, and who got
    nothing."""
    left_out: list[Candidate] = []
    seeds_left = sum(1 for c in members if c.seed)
    for c in members:
        if c.id not in p.has_body:
            left_out.append(c)
            continue
        item = Item(c, FULL, c.body or "")
        if p.fits(item, room):  # counted whole (and kept) only when it fits
            p.place(item)
            room -= p.cost(item)
        else:
            short = seed_share(p, c, room, seeds_left) if c.seed else first_slice(p, c, room)
            if short is not None:
                p.place(short)
                room -= p.cost(short)
            else:
                left_out.append(c)
        if c.seed:
            seeds_left -= 1
    return room, left_out


def seed_share(p: Packer, c: Candidate, room: int, seeds_left: int) -> Item:
    """A seed shortened to its share of the room: something of it, however little room."""
    short = shortened_item(p, c, max(room // max(seeds_left, 1), 0), force=True)
    assert short is not None  # forced
    return short


def first_slice(p: Packer, c: Candidate, room: int) -> Item | None:
    """Rank first: a node that does not fit whole gets a useful slice now (at least
    packing.min_slice tokens, or half the room left), before nodes ranked below it take the room
    whole; one that cannot get that much waits (None)."""
    least = p.lens.packing.min_slice
    if least and room >= least:
        return shortened_item(p, c, max(least, room // 2), min_tokens=least // 2)
    return None


def fill_tail(p: Packer, left_out: list[Candidate], room: int) -> int:
    """The best node that did not fit whole, cut to what is left of the section."""
    for c in left_out:
        if c.id not in p.has_body or room < p.min_short + 20:
            continue
        short = shortened_item(p, c, room)
        if short is not None:
            p.place(short)
            room -= p.cost(short) - sum(i.tokens for i in drop_repeated(p))
            break
    return room


# ---------------------------------------------------------------------------------------------
# Passage by passage


def focused_fill(p: Packer, members: list[Candidate], room: int) -> tuple[int, list[Candidate]]:
    """Pack a section passage by passage, skipping what does not fit: a node shows the passages
    it won (whole when it won them all); seeds always get something. Returns the room left and
    the members shown nothing. See ``passage_units`` for what a passage is worth."""
    won = win_passages(p, members, room)
    room, left_out = place_won(p, members, won, room)
    return fill_unmatched(p, left_out, room)


def win_passages(p: Packer, members: list[Candidate], room: int) -> dict[str, dict[int, int]]:
    """id -> the passages it wins (ord -> what it shows of it: ``CORE``, ``WIDE`` or ``REST``, the
    whole passage), best first while their estimated cost fits. A passage with a core is won as
    its core first, its wider core and rest only after (``shown_units``)."""
    won: dict[str, dict[int, int]] = {}
    for _, _, ord_, part, c in shown_units([c for c in members if c.id in p.has_body]):
        piece = next(piece for piece in c.pieces or [] if piece.ord == ord_)
        mine = won.get(c.id, {})
        # Each test is ``cost <= room``, a passage's count asked only as far as that needs
        # (``focus.Piece.within``): most passages tried here do not fit.
        if part != CORE:
            if mine.get(ord_, REST) >= part:
                continue  # not won yet, or already shown this far
            shown = piece.wide_tokens if mine[ord_] == WIDE else piece.core_tokens
            if part == WIDE:
                cost = piece.wide_tokens - shown
                if cost > room:
                    continue
            else:
                whole = piece.within(room + shown)
                if whole is None:
                    continue
                cost = whole - shown
        else:
            extra = focus.LINE_OVERHEAD
            if c.id not in won:
                extra += p.cost(Item(c, SHORTENED, ""))
            if piece.core is not None:
                cost = piece.core_tokens + extra
                if cost > room:
                    continue
            else:
                whole = piece.within(room - extra)
                if whole is None:
                    continue
                cost = whole + extra
        won.setdefault(c.id, {})[ord_] = part if piece.core is not None else REST
        room -= cost
    return won


def place_won(
    p: Packer, members: list[Candidate], won: dict[str, dict[int, int]], room: int,
) -> tuple[int, list[Candidate]]:
    """Each member as the passages it won; a seed that won none gets its share shortened."""
    left_out: list[Candidate] = []
    seeds_left = sum(1 for c in members if c.id in p.has_body and c.seed and c.id not in won)
    for c in members:
        shown = won.get(c.id)
        if shown is not None:
            cores = {ord_ for ord_, part in shown.items() if part == CORE}
            wides = {ord_ for ord_, part in shown.items() if part == WIDE}
            item = won_item(p, c, sorted(shown), room, cores, wides)
            if item is not None:
                p.place(item)
                room -= p.cost(item)
                continue
        if c.seed and c.id in p.has_body:
            short = seed_share(p, c, room, seeds_left)
            p.place(short)
            room -= p.cost(short)
            seeds_left -= 1
            continue
        left_out.append(c)
    return room, left_out


def fill_unmatched(p: Packer, left_out: list[Candidate], room: int) -> tuple[int, list[Candidate]]:
    """Room the passages did not use goes to whole nodes the topic did not match, best first;
    never to a block its page already shows (``shown_in_page``)."""
    rest = []
    for c in left_out:
        if shown_in_page(p, c):
            # Nor shortened into the tail: its words are in the context already.
            c.reason = f"shown in its page {c.page}"
            continue
        if c.id in p.has_body and not c.pieces_matched():
            item = Item(c, FULL, c.body or "")
            if p.fits(item, room):
                p.place(item)
                room -= p.cost(item)
                continue
        rest.append(c)
    return room, rest


def shown_in_page(p: Packer, c: Candidate, item: Item | None = None) -> bool:
    """Whether ``c`` is a block whose text (``item``, else the whole block with its sub-blocks)
    its page, as placed, already shows. An outliner's day page enters as its matching entries
    while each entry is also a node of its own: shown twice, the same words would be paid twice
    (a block's own heading, its page and date, is ~25 tokens: ~5% of a 1,000-token context on a
    journal graph). The page's copy is the one kept: it is already paid for, it carries the
    entry's parent bullet (the ``[[Page]]`` it sits under) and the page's date heading. A seed is
    never left out for this (it is what the topic named). Only where a lens packs passages: a
    lens of sections places a page's block in a section of its own for what it is (a task, a
    linked note), and its page shows it as part of an outline."""
    if c.seed or c.page is None or c.page == c.id or not p.lens.passages:
        return False
    held = p.placed.get(c.page)
    if held is None:
        return False
    shown = item if item is not None else Item(c, FULL, c.body or "")
    # A block's text is its title when it has no body beyond it (``render.strip_title_heading``).
    mine = _shown_lines(shown) + ([] if shown.text.strip() else [normalise(c.title)])
    page = " ".join(_shown_lines(held))
    return all(line in page for line in mine)


def _shown_lines(item: Item) -> list[str]:
    """An item's text and outline as lines, case and spaces folded, bullets and indents off."""
    text = item.text + "\n" + outline_view.markdown(item.cand, item.outline_shown())
    lines = (normalise(line).removeprefix("- ").removeprefix("* ") for line in text.splitlines())
    return [line for line in lines if line]


def drop_repeated(p: Packer) -> list[Item]:
    """A page placed (or grown) to show an entry that is also placed as a block of its own: the
    block goes, its words being in the page now (``plan.shown_in_page``); the items taken out,
    for the undo to put back."""
    repeated = [i for i in p.placed.values() if shown_in_page(p, i.cand, i)]
    for i in repeated:
        p.unplace(i.cand)
        i.cand.reason = f"shown in its page {i.cand.page}"
    return repeated


# ---------------------------------------------------------------------------------------------
# Summaries


def plan_summary_only(p: Packer, pool: list[Candidate], avail: int) -> None:
    seeds = [c for c in pool if c.seed]
    seed_overhead = sum(p.cost(Item(c, SHORTENED, "")) for c in seeds)
    # At tiny budgets the seed's metadata lines would crowd out everything: title and id only.
    p.compact_seeds = 1 if seed_overhead > avail * 0.4 else 0
    if p.compact_seeds:
        seed_overhead = sum(p.cost(Item(c, SHORTENED, "", compact=1)) for c in seeds)
    headings = sum(p.heading_cost(n) for n in {c.section for c in seeds if c.section is not None})
    room = avail - seed_overhead - headings
    others = [c for c in pool if not c.seed]
    used = fill_summaries(p, others, int(room * 0.6))
    left = room - used
    per_seed = seed_overhead // max(len(seeds), 1) + max(left, 0) // max(len(seeds), 1)
    for c in seeds:
        short = shortened_item(p, c, per_seed, force=True, compact=p.compact_seeds)
        assert short is not None
        p.place(short)


def fill_summaries(p: Packer, skipped: list[Candidate], room: int) -> int:
    """One line each for ``skipped`` while they fit ``room``; the tokens used."""
    if not p.lens.output.also_related:
        return 0
    used = 0
    title = p.counter.count(ALSO_RELATED_TITLE)
    for c in skipped:
        # Priced first (most lines cannot fit what is left, told from a floor of their cost);
        # both tests only skip, so their order does not change what is listed.
        if p.summary_exceeds(c, room - used - (title if not p.doc.also else 0)) or shown_in_page(p, c):
            continue
        item = Item(c, SUMMARY)
        cost = p.cost(item) + (title if not p.doc.also else 0)
        p.doc.also.append(item)
        used += cost
    return used
