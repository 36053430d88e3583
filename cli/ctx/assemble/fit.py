"""The exact fit: render, count the real string, and adjust until the text fits the budget.

While over, shrink the least valuable thing (``shrink``); while under, try the ways to use the
slack in turn (``GROWTHS``), undoing one that overshoots. The header's "used" figure is the true
count of the text it is in (``render_exact``: a fixed point).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ctx.assemble.candidate import NO_ROOM, Candidate
from ctx.assemble.packer import Packer
from ctx.assemble.plan import drop_repeated, fill_summaries, shown_in_page
from ctx.assemble.document import FULL, SHORTENED, Item
from ctx.assemble.focus import GAP
from ctx.assemble.truncate import ELLIPSIS
from ctx.assemble.render import Rendering, omitted_text
from ctx.assemble.sizing import shortened_item

Undo = Callable[[], None]
Growth = Callable[[int], "Undo | None"]  # slack -> an undo, or None if it could not help

FIXED_POINT_TRIES = 8
MAX_GROWTHS = 16
OVERSHOOT_RETRIES = 3


def render_exact(p: Packer) -> tuple[str, int]:
    """Render with a "used" figure equal to the true token count of the text it is in. The
    tries differ in that figure alone: the body is laid out and counted once (``Rendering``)."""
    rendering = Rendering(p.doc)
    used = p.budget
    seen: list[int] = []
    for _ in range(FIXED_POINT_TRIES):
        chunks = rendering.chunks(used)
        n = p.counter.count_chunks(chunks)
        if n == used:
            return "".join(chunks), n
        seen.append(n)
        used = n
    for guess in sorted(set(seen)):
        for delta in (-2, -1, 0, 1, 2):
            chunks = rendering.chunks(guess + delta)
            if p.counter.count_chunks(chunks) == guess + delta:
                return "".join(chunks), guess + delta
    return "".join(chunks), p.counter.count_chunks(chunks)


def fit(p: Packer) -> tuple[str, int]:
    """The final text and its exact token count, within the budget."""
    growths = grow_options(p)
    tries = retries = last_slack = 0
    best: tuple[str, int] | None = None
    undo_last: Undo | None = None
    while True:
        text, n = render_exact(p)
        if n > p.budget:
            if best is None:
                if not shrink(p, n - p.budget):
                    return last_resort(p)
                continue
            # The last growth overshot (joining blocks can cost a token or two more than
            # the blocks did alone): undo it and retry it a little smaller, then move on.
            assert undo_last is not None
            undo_last()
            overshoot = n - p.budget
            if retries < OVERSHOOT_RETRIES and last_slack - overshoot - 2 > 2:
                retries += 1
                last_slack = last_slack - overshoot - 2
                undo = growths[0](last_slack)
                if undo is not None:
                    undo_last = undo
                    continue
            growths = growths[1:]
            retries = 0
            if not growths:
                # Re-render the state that fitted: it is what the undo restored.
                return render_exact(p)
            slack = p.budget - best[1]
        else:
            best = (text, n)
            slack = p.budget - n
            retries = 0
        tries += 1
        if slack < 3 or not growths or tries > MAX_GROWTHS:
            return render_exact(p) if best is not None and best[1] != n else (text, n)
        undo, growths = grow(growths, slack)
        if undo is None:
            return render_exact(p)
        last_slack = slack
        undo_last = undo


def grow(growths: list[Growth], slack: int) -> tuple[Undo | None, list[Growth]]:
    """The first growth that uses some of ``slack``, and the growths from it on."""
    while growths:
        undo = growths[0](slack)
        if undo is not None:
            return undo, growths
        growths = growths[1:]
    return None, growths


def last_resort(p: Packer) -> tuple[str, int]:
    doc = p.doc
    doc.sections = [type(s)(s.name, s.order, s.group_by) for s in doc.sections]
    doc.also, doc.omitted, doc.notes = [], [], []
    doc.header_level, doc.label = 3, doc.label[:12]
    return render_exact(p)


# ---------------------------------------------------------------------------------------------
# Over: shrink


def shrink(p: Packer, over: int) -> bool:
    """Remove about ``over`` tokens, least valuable first. False when nothing is left to cut."""
    return drop_listed(p, over) or shrink_a_node(p, over) or shrink_a_seed(p, over) or shrink_the_frame(p)


def drop_listed(p: Packer, over: int) -> bool:
    """The JSON list of omitted nodes goes first, then the one-line summaries, lowest first."""
    doc = p.doc
    if doc.fmt == "json" and doc.omitted:
        drop = 0
        while doc.omitted and drop < over:
            drop += p.counter.count(omitted_text(doc.omitted.pop()))
        return True
    if doc.also:
        drop = 0
        while doc.also and drop < over:
            drop += p.cost(doc.also.pop())
        return True
    return False


def by_value(p: Packer) -> list[Item]:
    """The shown items, least valuable (lowest ranked) first."""
    return sorted(p.placed.values(), key=lambda i: i.cand.rank, reverse=True)


def shrink_a_node(p: Packer, over: int) -> bool:
    """The least valuable shortened node, else whole one, other than a seed: cut, or dropped."""
    shown = by_value(p)
    for variant in (SHORTENED, FULL):
        for item in shown:
            if item.cand.seed or item.variant != variant:
                continue
            smaller = shortened_item(p, item.cand, p.cost(item) - over - 1)
            if smaller is None or smaller.extent() == item.extent():
                p.unplace(item.cand)
                item.cand.reason = "no room left"
            else:
                p.place(smaller)
            return True
    return False


def shrink_a_seed(p: Packer, over: int) -> bool:
    """Only seeds are left: cut their text (and outline), then their metadata (the title and id
    still say what the topic is)."""
    shown = by_value(p)
    for item in shown:
        if item.extent():
            smaller = shortened_item(p, item.cand, p.cost(item) - over - 1, force=True, compact=item.compact)
            if smaller is not None and smaller.extent() != item.extent():
                p.place(smaller)
                return True
            p.place(Item(item.cand, SHORTENED, "", compact=item.compact))
            return True
    for item in shown:
        if not item.compact:
            p.place(Item(item.cand, SHORTENED, "", compact=1))
            return True
        if item.compact == 1 and p.doc.header_level >= 3:
            p.place(Item(item.cand, SHORTENED, "", compact=2))
            return True
    return False


def shrink_the_frame(p: Packer) -> bool:
    """The header, its notes, the empty-section notices, then a seed, then the label."""
    doc = p.doc
    if doc.header_level < 3:
        doc.header_level += 1
        return True
    if doc.notes:
        doc.notes.clear()
        return True
    if doc.empty_sections:
        doc.empty_sections = False  # "nothing here" notices are the first thing to give up
        return True
    if p.placed:
        dropped = sorted(p.placed.values(), key=lambda i: i.cand.rank)[-1].cand
        p.unplace(dropped)
        dropped.reason = dropped.reason or "no room left, even for its id and title"
        return True
    if len(doc.label) > 12:
        doc.label = doc.label[:12]
        return True
    return False


# ---------------------------------------------------------------------------------------------
# Under: grow


def grow_options(p: Packer) -> list[Growth]:
    """Ways to use slack, best first; each returns an undo, or None if it could not help.

    Nothing else may take the room a seed could not fit in: the output then stays short.
    """
    return [partial(enlarge_shortened, p), partial(add_shortened, p), partial(add_summaries, p), partial(add_omitted, p)]


def enlarge_shortened(p: Packer, slack: int) -> Undo | None:
    """The best shortened node, shown larger."""
    for item in sorted(p.placed.values(), key=lambda i: i.cand.rank):
        if item.variant != SHORTENED:
            continue
        bigger = shortened_item(p, item.cand, p.cost(item) + slack - 1, force=item.cand.seed, compact=item.compact)
        if bigger is not None and bigger.extent() > item.extent() and keeps_text(item, bigger):
            p.place(bigger)
            repeated = drop_repeated(p)
            return partial(_unenlarge, p, item, repeated)
    return None


def keeps_text(item: Item, bigger: Item) -> bool:
    """Whether ``bigger`` still shows every paragraph ``item`` shows (a cut one as far as it went)
    when it is a choice of passages: growing trades no text for other passages. A note cut to
    the passage holding its answer (``sizing.won_cut``) was "grown" into its smaller unmatched
    passages, more characters but not the answer (an embedded meeting log, issue 23). A longer
    cut of the same text (no passages chosen) always keeps it."""
    if bigger.passages is None:
        return True
    shown = " ".join(bigger.text.split())
    paragraphs = (" ".join(para.split()).removesuffix(ELLIPSIS).removeprefix(ELLIPSIS).strip()
                  for para in item.text.split("\n\n"))
    return all(para in shown for para in paragraphs if para and para != GAP)


def _unenlarge(p: Packer, item: Item, repeated: list[Item]) -> None:
    p.place(item)
    for i in repeated:
        p.place(i)


def add_shortened(p: Packer, slack: int) -> Undo | None:
    """The best node not shown, shortened into the slack (in place of its summary line)."""
    # Also in summary-only mode: once every related node has its line, spare room is
    # better spent on the best node's text than left empty.
    if p.seeds_missing():
        return None
    tried = 0
    for c in p.ranked:
        if c.id in p.placed or c.section is None or c.id not in p.has_body or c.reason.startswith("beyond"):
            continue
        if shown_in_page(p, c):
            continue
        tried += 1
        if tried > 8:
            return None
        heading = 0 if p.section_of[c.section].items else p.heading_cost(c.section)
        freed = sum(p.cost(i) for i in p.doc.also if i.cand.id == c.id)
        # The tail takes a shorter excerpt than a planned node would: it only fills space.
        short = shortened_item(p, c, slack + freed - heading - 1, min_tokens=min(p.min_short, 15))
        if short is None:
            continue
        also_before = list(p.doc.also)
        p.doc.also = [i for i in p.doc.also if i.cand.id != c.id]
        p.place(short)
        return partial(_unadd, p, c, also_before, drop_repeated(p))
    return None


def _unadd(p: Packer, c: Candidate, also: list[Item], repeated: list[Item]) -> None:
    p.unplace(c)
    p.doc.also = also
    for i in repeated:
        p.place(i)


def add_summaries(p: Packer, slack: int) -> Undo | None:
    """One-line summaries of nodes neither shown nor listed yet."""
    if p.seeds_missing():
        return None
    listed = {i.cand.id for i in p.doc.also}
    rest = [c for c in p.ranked if c.id not in p.placed and c.id not in listed
            and c.section is not None and not c.reason.startswith("beyond")]
    before = list(p.doc.also)
    if not fill_summaries(p, rest, slack - 1):
        return None
    return partial(setattr, p.doc, "also", before)


def add_omitted(p: Packer, slack: int) -> Undo | None:
    """JSON: list more of the nodes left out, best first, while they fit."""
    if p.doc.fmt != "json":
        return None
    before = list(p.doc.omitted)
    room, listed = slack - 1, {c.id for c in before}
    for c in p.dropped():
        if c.id in listed:
            continue
        # Listed with its reason, as the audit will give it: left empty here, every entry the
        # budget alone dropped said "reason": "" (the audit runs after this text is counted).
        c.reason = c.reason or NO_ROOM
        cost = p.counter.count(omitted_text(c))
        if cost > room:
            break
        p.doc.omitted.append(c)
        room -= cost
    if len(p.doc.omitted) == len(before):
        return None
    return partial(setattr, p.doc, "omitted", before)
