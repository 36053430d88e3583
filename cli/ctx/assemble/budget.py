"""Budget: choose what goes into the output so that its real token count never exceeds the budget.

The candidates' text arrives ready (``prepare.py``: bodies loaded, title headings stripped,
duplicates removed) and the header is chosen (``choose_header``); the packer only packs. Plan with
counts of each node's rendered block (store-time counts pre-filter what is worth
counting), reserve the header exactly, split the rest by the lens's section shares (unused budget
flows to the next section), then:

1. take whole nodes in packing order, skipping (not stopping at) those that do not fit;
2. shorten the best node that did not fit into what is left of its section;
3. list the rest as one-line summaries ("also related") while they fit;
4. render, count the real string, and adjust: shrink the lowest-value item while over, grow the
   tail item into the slack while under, until the text fits and the header's "used" figure is
   the true count of the text it is in (a fixed point).

A protected seed (every seed, unless the lens's ``seeds.protect`` names how many) is never
dropped: it is shortened instead; other seeds compete like any node at distance 0. Below ``output.summary_below`` tokens the
output is summary-only: one line per related node, the seed's text cut to what is left.
"""

from __future__ import annotations

from collections.abc import Callable

from ctx.assemble import focus, outline_view
from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.explain import record_decisions
from ctx.assemble.render import (
    FULL,
    SHORTENED,
    SUMMARY,
    Document,
    Item,
    block_text,
    omitted_text,
    render,
)
from ctx.assemble.truncate import shorten
from ctx.lenses import HEADER_LEVELS, Lens

# A node the topic matched in none of its passages (reached by the walk) is worth its score for
# its first passage, and this much less for each further one.
UNMATCHED_DECAY = 0.5


def passage_units(members: list[Candidate]) -> list[tuple[float, int, int, Candidate]]:
    """(-value, rank, ord, candidate) for every passage worth packing, most valuable first.

    A passage is worth its node's score (a share of the best member's) times how it compares with
    the node's best passage for the topic: the best passages of the best nodes come first, and a
    long note's weaker passages compete with the next notes' best ones. A node the topic matched
    nowhere (a bridge the walk found) competes with its opening passages.
    """
    top = max((c.score for c in members), default=0.0) or 1.0
    units: list[tuple[float, int, int, Candidate]] = []
    for c in members:
        pieces = c.pieces or []
        share = max(c.score, 0.0) / top
        best = max((p.relevance for p in pieces), default=0.0)
        if best > 0:
            units.extend((-share * p.relevance / best, c.rank, p.ord, c) for p in pieces if p.relevance > 0)
        else:
            units.extend((-share * UNMATCHED_DECAY**k, c.rank, p.ord, c) for k, p in enumerate(pieces))
    units.sort(key=lambda u: u[:3])
    return units


# ---------------------------------------------------------------------------------------------
# Packing order inside a section (lens ``packing.strategy``).


def packing_order(members: list[Candidate], strategy: str) -> list[Candidate]:
    """``score``: best first. ``greedy``: whole documents at a time, best document first.
    ``interleaved``: round-robin across documents, best document first. ``density``: value per
    token (score over the square root of the store-time size), so many short, relevant nodes can
    beat one long one; seeds stay first."""
    if strategy == "score" or len(members) < 2:
        return members
    if strategy == "density":
        def per_token(c: Candidate) -> tuple[bool, float, int]:
            return (not c.seed, -c.score / max(c.store_tokens, 16) ** 0.5, c.rank)

        return sorted(members, key=per_token)
    groups: dict[str, list[Candidate]] = {}
    for c in members:  # members arrive best first, so each group is best first too
        groups.setdefault(c.document, []).append(c)
    ordered = sorted(groups.values(), key=lambda g: g[0].rank)
    if strategy == "greedy":
        return [c for g in ordered for c in g]
    out: list[Candidate] = []
    for i in range(max(len(g) for g in ordered)):
        out.extend(g[i] for g in ordered if i < len(g))
    return out


# ---------------------------------------------------------------------------------------------


def choose_header(doc: Document, lens: Lens, counter: TokenCounter) -> int:
    """Give ``doc`` the richest header the lens allows that leaves room for content; its cost."""
    for level in range(HEADER_LEVELS.index(lens.output.header), 3):
        doc.header_level = level
        cost = counter.count(render(doc, doc.budget))
        if level == 0 and cost <= doc.budget * 0.2:
            return cost
        if level == 1 and cost <= doc.budget * 0.3:
            return cost
    return cost


def content_room(doc: Document, header_cost: int) -> int:
    """Tokens left for the sections once the header is paid for."""
    return doc.budget - header_cost - 2


class Packer:
    """Fills a Document's sections from ranked candidates whose text is ready (``ready``: ids
    whose ``body`` is loaded and prepared, see ``ctx.assemble.prepare``): it only packs."""

    def __init__(
        self,
        doc: Document,
        ranked: list[Candidate],
        lens: Lens,
        counter: TokenCounter,
        ready: set[str],
    ) -> None:
        self.doc = doc
        self.ranked = ranked
        self.lens = lens
        self.counter = counter
        self.budget = doc.budget
        self.strategy = lens.truncation.strategy
        self.topic = " ".join(doc.topics)  # what extractive shortening keeps sentences about
        self.min_short = lens.output.min_shortened_tokens
        self.section_of = {s.name: s for s in doc.sections}
        self.placed: dict[str, Item] = {}  # id -> item shown in a section
        self.compact_seeds = 0
        self.has_body = ready
        self.body_tokens: dict[str, int] = {}

    # -- costs ---------------------------------------------------------------------------------

    def cost(self, item: Item) -> int:
        return self.counter.count(block_text(self.doc, item))

    def full_body_tokens(self, c: Candidate) -> int:
        if c.id not in self.body_tokens:
            self.body_tokens[c.id] = self.counter.count(c.body or "")
        return self.body_tokens[c.id]

    def shortened_item(
        self, c: Candidate, block_budget: int, *, force: bool = False, compact: int = 0,
        min_tokens: int | None = None,
    ) -> Item | None:
        """The largest version of ``c`` whose block fits ``block_budget`` (FULL if all of it does).

        ``force`` (seeds): return a version even if only the title and metadata fit.
        ``compact``: the title-and-id form of the block, for tiny budgets.
        """
        body = c.body or ""
        full = Item(c, FULL, body, compact=compact)
        if self.cost(full) <= block_budget:
            return full
        if full.outline_shown() and not (c.pieces and c.pieces_matched()):
            # A page's outline goes before its own text: keep the most blocks that still fit
            # (unless the topic matched some of its passages: those are shown instead).
            n = outline_view.largest_fitting(
                full.outline_shown(),
                lambda k: self.cost(Item(c, SHORTENED, body, compact=compact, outline_n=k)) <= block_budget,
            )
            if n is not None and (n or body.strip()):
                return Item(c, SHORTENED, body, compact=compact, outline_n=n)
        empty = Item(c, SHORTENED, "", compact=compact)
        overhead = self.cost(empty)
        allowance = block_budget - overhead - 1
        if allowance < (self.min_short if min_tokens is None else min_tokens) and not force:
            return None
        if c.pieces and len(c.pieces) > 1:
            focused = self.focused_item(c, allowance, block_budget, compact)
            if focused is not None:
                return focused
            # Not one passage fits: cut the most relevant one instead of the note's opening.
            body = focus.excerpt(c.pieces, focus.priority(c.pieces)[:1])
        allowance = min(allowance, self.full_body_tokens(c) - 1)
        best: Item | None = None
        room_for_body = block_budget - overhead
        for _ in range(8):
            if allowance <= 0:
                break
            item = Item(c, SHORTENED, shorten(body, allowance, self.strategy, self.counter, self.topic), compact=compact)
            cost = self.cost(item)
            body_cost = max(cost - overhead, 1)
            if cost <= block_budget:
                if best is None or len(item.text) > len(best.text):
                    best = item
                if block_budget - cost <= 2:
                    break
            # Rendering can cost more (JSON escapes) or less than the raw text: rescale and retry.
            nxt = int(allowance * room_for_body / body_cost)
            if cost > block_budget:
                # Cutting snaps to sentence ends, so aim below the text we got, not the allowance.
                shown = self.counter.count(item.text)
                nxt = min(nxt, shown - 1 - (cost - block_budget) * shown // body_cost)
            nxt = min(nxt, self.full_body_tokens(c) - 1)
            if nxt == allowance:
                break
            allowance = nxt
        if best is not None and best.text:
            return best
        return empty if force else None

    def focused_item(self, c: Candidate, allowance: int, block_budget: int, compact: int = 0) -> Item | None:
        """``c`` as the passages most relevant to the topic that fit (focus.py), or None."""
        pieces = c.pieces or []

        def item_for(ords: list[int]) -> Item:
            return Item(c, SHORTENED, focus.excerpt(pieces, ords), compact=compact, passages=tuple(ords))

        chosen = focus.choose(pieces, allowance, lambda ords: self.cost(item_for(ords)) <= block_budget)
        if not chosen:
            return None
        return item_for(chosen)

    def focused_fill(self, members: list[Candidate], room: int) -> tuple[int, list[Candidate]]:
        """Pack a section passage by passage, skipping what does not fit: a node shows the passages
        it won (whole when it won them all); seeds always get something. Returns the room left and
        the members shown nothing. See ``passage_units`` for what a passage is worth."""
        shown = [c for c in members if c.id in self.has_body]
        won: dict[str, list[int]] = {}
        planned = room
        for _, _, ord_, c in passage_units(shown):
            piece = next(p for p in c.pieces or [] if p.ord == ord_)
            cost = piece.tokens + focus.LINE_OVERHEAD
            if c.id not in won:
                cost += self.cost(Item(c, SHORTENED, ""))
            if cost <= planned:
                won.setdefault(c.id, []).append(ord_)
                planned -= cost
        left_out: list[Candidate] = []
        seeds_left = sum(1 for c in shown if c.seed and c.id not in won)
        for c in members:
            ords = won.get(c.id)
            if ords is not None:
                item = self.won_item(c, sorted(ords), room)
                if item is not None:
                    self.place(item)
                    room -= self.cost(item)
                    continue
            if c.seed and c.id in self.has_body:
                short = self.shortened_item(c, max(room // max(seeds_left, 1), 0), force=True)
                assert short is not None
                self.place(short)
                room -= self.cost(short)
                seeds_left -= 1
                continue
            left_out.append(c)
        # Room the passages did not use goes to whole nodes the topic did not match, best first.
        rest = []
        for c in left_out:
            if c.id in self.has_body and not c.pieces_matched():
                item = Item(c, FULL, c.body or "")
                cost = self.cost(item)
                if cost <= room:
                    self.place(item)
                    room -= cost
                    continue
            rest.append(c)
        return room, rest

    def won_item(self, c: Candidate, ords: list[int], room: int) -> Item | None:
        pieces = c.pieces or []
        if len(ords) == len(pieces):
            full = Item(c, FULL, c.body or "")
            if self.cost(full) <= room:
                return full
        item = Item(c, SHORTENED, focus.excerpt(pieces, ords), passages=tuple(ords))
        if self.cost(item) <= room:
            return item
        return self.shortened_item(c, room)

    # -- placing -------------------------------------------------------------------------------

    def place(self, item: Item) -> None:
        item.tokens = self.cost(item)
        self.placed[item.cand.id] = item
        assert item.cand.section is not None  # only candidates in a section are placed
        items = self.section_of[item.cand.section].items
        items[:] = [i for i in items if i.cand.id != item.cand.id] + [item]

    def unplace(self, c: Candidate) -> None:
        self.placed.pop(c.id, None)
        assert c.section is not None
        items = self.section_of[c.section].items
        items[:] = [i for i in items if i.cand.id != c.id]

    def heading_cost(self, name: str) -> int:
        if self.doc.fmt == "json":
            return self.counter.count(f'{{"name":"{name}","ids":[]}},') if self.doc.header_level == 0 else 0
        return self.counter.count(f"## {name}\n\n")

    # -- the plan ------------------------------------------------------------------------------

    def plan(self, header_cost: int) -> None:
        doc, lens = self.doc, self.lens
        avail = content_room(doc, header_cost)
        pool = [c for c in self.ranked if c.section is not None]
        doc.summary_only = self.budget < lens.output.summary_below
        if doc.summary_only:
            self.plan_summary_only(pool, avail)
        else:
            self.plan_sections(pool, avail)

    def plan_sections(self, pool: list[Candidate], avail: int) -> None:
        lens = self.lens
        total_store = sum(c.store_tokens for c in pool)
        reserve = int(avail * lens.output.also_related_share) if lens.output.also_related and total_store > avail else 0
        content = avail - reserve
        # ``reserve`` sections are filled first; the others' shares then apply to what they leave.
        given = sum(s.share for s in lens.sections if s.share is not None and not s.reserve)
        unshared = [s for s in lens.sections if s.share is None and not s.reserve]
        split = max(0.0, 1.0 - given) / len(unshared) if unshared else 0.0
        carry = 0
        skipped: list[Candidate] = []
        for section in lens.sections:
            if section.reserve:
                allot = int(content * section.share) if section.share is not None else content
            else:
                allot = int(content * (section.share if section.share is not None else split))
            members = packing_order([c for c in pool if c.section == section.name], lens.packing.strategy)
            if section.max_nodes is not None:
                seeds = [c for c in members if c.seed]
                others = [c for c in members if not c.seed]
                keep = max(0, section.max_nodes - len(seeds))
                for c in others[keep:]:
                    c.reason = f"beyond the section's max_nodes ({section.max_nodes})"
                members = seeds + others[:keep]
            if not members:
                carry += 0 if section.reserve else allot
                continue
            heading = self.heading_cost(section.name)
            room = allot + (0 if section.reserve else carry) - heading
            left_out: list[Candidate] = []
            seeds_left = sum(1 for c in members if c.seed)
            if lens.passages and any(c.pieces_matched() for c in members):
                room, left_out = self.focused_fill(members, room)
                members_loop: list[Candidate] = []
            else:
                members_loop = members
            for c in members_loop:
                if c.id not in self.has_body:
                    left_out.append(c)
                    continue
                item = Item(c, FULL, c.body or "")
                cost = self.cost(item)
                if cost <= room:
                    self.place(item)
                    room -= cost
                elif c.seed:
                    share = max(room // max(seeds_left, 1), 0)
                    short = self.shortened_item(c, share, force=True)
                    assert short is not None
                    self.place(short)
                    room -= self.cost(short)
                else:
                    # Rank first: a node that does not fit whole gets a useful slice now (at least
                    # packing.min_slice tokens, or half the room left), before nodes ranked below
                    # it take the room whole; one that cannot get that much waits.
                    short = None
                    least = lens.packing.min_slice
                    if least and room >= least:
                        short = self.shortened_item(c, max(least, room // 2), min_tokens=least // 2)
                    if short is not None:
                        self.place(short)
                        room -= self.cost(short)
                    else:
                        left_out.append(c)
                if c.seed:
                    seeds_left -= 1
            # Fill the tail: the best node that did not fit whole, cut to what is left.
            for c in left_out:
                if c.id not in self.has_body or room < self.min_short + 20:
                    continue
                short = self.shortened_item(c, room)
                if short is not None:
                    self.place(short)
                    room -= self.cost(short)
                    left_out.remove(c)
                    break
            skipped.extend(c for c in members if c.id not in self.placed)
            placed_here = any(c.id in self.placed for c in members)
            if section.reserve:
                content -= allot - (room + (0 if placed_here else heading))
            else:
                carry = room + (0 if placed_here else heading)
        # Membership by id: comparing Candidate dataclasses field by field was quadratic (10k claims).
        skipped_ids = {c.id for c in skipped}
        skipped += [c for c in pool if c.id not in self.placed and c.id not in skipped_ids and not c.reason]
        self.fill_summaries(sorted(skipped, key=lambda c: c.rank), reserve + carry)

    def plan_summary_only(self, pool: list[Candidate], avail: int) -> None:
        seeds = [c for c in pool if c.seed]
        seed_overhead = sum(self.cost(Item(c, SHORTENED, "")) for c in seeds)
        # At tiny budgets the seed's metadata lines would crowd out everything: title and id only.
        self.compact_seeds = 1 if seed_overhead > avail * 0.4 else 0
        if self.compact_seeds:
            seed_overhead = sum(self.cost(Item(c, SHORTENED, "", compact=1)) for c in seeds)
        headings = sum(self.heading_cost(n) for n in {c.section for c in seeds if c.section is not None})
        room = avail - seed_overhead - headings
        others = [c for c in pool if not c.seed]
        used = self.fill_summaries(others, int(room * 0.6))
        left = room - used
        per_seed = seed_overhead // max(len(seeds), 1) + max(left, 0) // max(len(seeds), 1)
        for c in seeds:
            short = self.shortened_item(c, per_seed, force=True, compact=self.compact_seeds)
            assert short is not None
            self.place(short)

    def fill_summaries(self, skipped: list[Candidate], room: int) -> int:
        if not self.lens.output.also_related:
            return 0
        used = 0
        title = self.counter.count("## Also related\n")
        for c in skipped:
            item = Item(c, SUMMARY)
            cost = self.cost(item) + (title if not self.doc.also else 0)
            if cost <= room - used:
                self.doc.also.append(item)
                used += cost
        return used

    # -- exact fit -----------------------------------------------------------------------------

    def render_exact(self) -> tuple[str, int]:
        """Render with a "used" figure equal to the true token count of the text it is in."""
        used = self.budget
        seen: list[int] = []
        for _ in range(8):
            text = render(self.doc, used)
            n = self.counter.count(text)
            if n == used:
                return text, n
            seen.append(n)
            used = n
        for guess in sorted(set(seen)):
            for delta in (-2, -1, 0, 1, 2):
                text = render(self.doc, guess + delta)
                if self.counter.count(text) == guess + delta:
                    return text, guess + delta
        return text, self.counter.count(text)

    def shrink(self, over: int) -> bool:
        """Remove about ``over`` tokens, least valuable first. False when nothing is left to cut."""
        doc = self.doc
        if doc.fmt == "json" and doc.omitted:
            drop = 0
            while doc.omitted and drop < over:
                drop += self.counter.count(omitted_text(doc.omitted.pop()))
            return True
        if doc.also:
            drop = 0
            while doc.also and drop < over:
                drop += self.cost(doc.also.pop())
            return True
        shown = sorted(self.placed.values(), key=lambda i: i.cand.rank, reverse=True)
        for variant in (SHORTENED, FULL):
            for item in shown:
                if item.cand.seed or item.variant != variant:
                    continue
                smaller = self.shortened_item(item.cand, self.cost(item) - over - 1)
                if smaller is None or smaller.extent() == item.extent():
                    self.unplace(item.cand)
                    item.cand.reason = "no room left"
                else:
                    self.place(smaller)
                return True
        for item in shown:  # only seeds are left: cut their text (and outline)
            if item.extent():
                smaller = self.shortened_item(item.cand, self.cost(item) - over - 1, force=True, compact=item.compact)
                if smaller is not None and smaller.extent() != item.extent():
                    self.place(smaller)
                    return True
                self.place(Item(item.cand, SHORTENED, "", compact=item.compact))
                return True
        for item in shown:  # then their metadata: the title and id still say what the topic is
            if not item.compact:
                self.place(Item(item.cand, SHORTENED, "", compact=1))
                return True
            if item.compact == 1 and doc.header_level >= 3:
                self.place(Item(item.cand, SHORTENED, "", compact=2))
                return True
        if doc.header_level < 3:
            doc.header_level += 1
            return True
        if doc.notes:
            doc.notes.clear()
            return True
        if doc.empty_sections:
            doc.empty_sections = False  # "nothing here" notices are the first thing to give up
            return True
        if self.placed:
            dropped = sorted(self.placed.values(), key=lambda i: i.cand.rank)[-1].cand
            self.unplace(dropped)
            dropped.reason = dropped.reason or "no room left, even for its id and title"
            return True
        if len(doc.label) > 12:
            doc.label = doc.label[:12]
            return True
        return False

    def seeds_missing(self) -> bool:
        return any(c.seed and c.section is not None and c.id not in self.placed for c in self.ranked)

    def grow_options(self) -> list[Callable[[int], Callable[[], None] | None]]:
        """Ways to use slack, best first; each returns an undo, or None if it could not help.

        Nothing else may take the room a seed could not fit in: the output then stays short.
        """

        def enlarge_shortened(slack: int) -> Callable[[], None] | None:
            for item in sorted(self.placed.values(), key=lambda i: i.cand.rank):
                if item.variant != SHORTENED:
                    continue
                bigger = self.shortened_item(
                    item.cand, self.cost(item) + slack - 1, force=item.cand.seed, compact=item.compact
                )
                if bigger is not None and bigger.extent() > item.extent():
                    self.place(bigger)
                    def restore(old: Item = item) -> None:
                        self.place(old)

                    return restore
            return None

        def add_shortened(slack: int) -> Callable[[], None] | None:
            # Also in summary-only mode: once every related node has its line, spare room is
            # better spent on the best node's text than left empty.
            if self.seeds_missing():
                return None
            tried = 0
            for c in self.ranked:
                if c.id in self.placed or c.section is None or c.id not in self.has_body or c.reason.startswith("beyond"):
                    continue
                tried += 1
                if tried > 8:
                    return None
                heading = 0 if self.section_of[c.section].items else self.heading_cost(c.section)
                freed = sum(self.cost(i) for i in self.doc.also if i.cand.id == c.id)
                # The tail takes a shorter excerpt than a planned node would: it only fills space.
                short = self.shortened_item(c, slack + freed - heading - 1, min_tokens=min(self.min_short, 15))
                if short is None:
                    continue
                also_before = list(self.doc.also)
                self.doc.also = [i for i in self.doc.also if i.cand.id != c.id]
                self.place(short)

                def undo(c: Candidate = c, also: list[Item] = also_before) -> None:
                    self.unplace(c)
                    self.doc.also = also

                return undo
            return None

        def add_summaries(slack: int) -> Callable[[], None] | None:
            if self.seeds_missing():
                return None
            listed = {i.cand.id for i in self.doc.also}
            rest = [c for c in self.ranked if c.id not in self.placed and c.id not in listed
                    and c.section is not None and not c.reason.startswith("beyond")]
            before = list(self.doc.also)
            if not self.fill_summaries(rest, slack - 1):
                return None
            return lambda: setattr(self.doc, "also", before)

        def add_omitted(slack: int) -> Callable[[], None] | None:
            if self.doc.fmt != "json":
                return None
            before = list(self.doc.omitted)
            room, listed = slack - 1, {c.id for c in before}
            for c in self.dropped():
                if c.id in listed:
                    continue
                cost = self.counter.count(omitted_text(c))
                if cost > room:
                    break
                self.doc.omitted.append(c)
                room -= cost
            if len(self.doc.omitted) == len(before):
                return None
            return lambda: setattr(self.doc, "omitted", before)

        return [enlarge_shortened, add_shortened, add_summaries, add_omitted]

    def dropped(self) -> list[Candidate]:
        listed = {i.cand.id for i in self.doc.also}
        return [c for c in self.ranked if c.id not in self.placed and c.id not in listed]

    def fit(self) -> tuple[str, int]:
        options = self.grow_options()
        tries = 0
        retries = 0
        last_slack = 0
        best: tuple[str, int] | None = None
        while True:
            text, n = self.render_exact()
            if n > self.budget:
                if best is None:
                    if not self.shrink(n - self.budget):
                        return self.last_resort()
                    continue
                # The last growth overshot (joining blocks can cost a token or two more than
                # the blocks did alone): undo it and retry it a little smaller, then move on.
                self.undo()
                overshoot = n - self.budget
                if retries < 3 and last_slack - overshoot - 2 > 2:
                    retries += 1
                    last_slack = last_slack - overshoot - 2
                    undo = options[0](last_slack)
                    if undo is not None:
                        self._undo = undo
                        continue
                options = options[1:]
                retries = 0
                best_text, best_n = best
                if not options:
                    # Re-render the state that fitted: it is what the undo restored.
                    return self.render_exact()
                slack = self.budget - best_n
            else:
                best = (text, n)
                slack = self.budget - n
                retries = 0
            tries += 1
            if slack < 3 or not options or tries > 16:
                return self.render_exact() if best is not None and best[1] != n else (text, n)
            undo = options[0](slack)
            while undo is None:
                options = options[1:]
                if not options:
                    return self.render_exact()
                undo = options[0](slack)
            last_slack = slack
            self._undo = undo

    def undo(self) -> None:
        self._undo()

    def last_resort(self) -> tuple[str, int]:
        self.doc.sections = [type(s)(s.name, s.order, s.group_by) for s in self.doc.sections]
        self.doc.also, self.doc.omitted, self.doc.notes = [], [], []
        self.doc.header_level, self.doc.label = 3, self.doc.label[:12]
        return self.render_exact()


def pack(
    doc: Document,
    ranked: list[Candidate],
    lens: Lens,
    counter: TokenCounter,
    header_cost: int,
    ready: set[str],
) -> tuple[str, int]:
    """Fill ``doc`` (its header chosen, see ``choose_header``) within its budget from the
    candidates whose text is ``ready``; returns the final text and its exact token count."""
    packer = Packer(doc, ranked, lens, counter, ready)
    if doc.found:
        packer.plan(header_cost)
    text, used = packer.fit()
    record_decisions(doc, ranked, packer.placed, packer.cost)
    return text, used
