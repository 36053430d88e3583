"""The document a build fills: the shown items, their sections, and how a section reads.

``budget.py`` decides what goes in (placing ``Item``s in ``SectionOut``s, listing summaries and
omitted nodes); ``render.py`` prints it. ``Document.layout`` is the one place the reading order and
the citation numbers of a selection are worked out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from ctx.assemble import outline_view
from ctx.assemble import render_extras as extras
from ctx.assemble.candidate import Candidate
from ctx.assemble.citations import Citation

FULL, SHORTENED, SUMMARY = "full", "shortened", "summarized"


@dataclass
class Item:
    cand: Candidate
    variant: str  # FULL, SHORTENED or SUMMARY
    text: str = ""  # the body as shown (FULL/SHORTENED)
    tokens: int = 0  # what this item's block costs (set by the packer when it places it)
    compact: int = 0  # tiny budgets: 1 = title and id only, 2 = the title alone
    outline_n: int | None = None  # outline entries shown (None: all when FULL, none otherwise)
    passages: tuple[int, ...] | None = None  # passages shown (ords) when shortened to its relevant parts
    # Of ``passages``, those shown as their core only (the paragraphs that matched, ``Piece.core``):
    # the reader has not seen the rest of them, so no manifest counts them as seen.
    cores: tuple[int, ...] = ()

    def outline_shown(self) -> int:
        return 0 if self.compact else outline_view.shown_count(self.cand, self.variant, self.outline_n, FULL)

    def extent(self) -> int:
        """How much content the item shows (text and outline): what growing or shrinking it changes."""
        return len(self.text) + len(outline_view.markdown(self.cand, self.outline_shown()))


@dataclass
class SectionOut:
    name: str
    order: str
    group_by: str
    items: list[Item] = field(default_factory=list)
    layout: str = "list"  # "tree": indented by hops, each node naming the one it hangs from


@dataclass
class Layout:
    """What a selection shows, as the output prints it: each section's items in reading order and
    the sources' citation numbers. Derived once per selection (``Document.layout``) and read by
    every rendering and block cost of it: the fitting loop renders one selection several times."""

    sections: list[tuple[SectionOut, list[Item]]]
    cites: dict[str, Citation]

    def ordered(self) -> list[Item]:
        return [i for _, items in self.sections for i in items]


@dataclass
class Document:
    """Everything the output shows; ``budget.py`` decides what goes in, ``render.py`` how it looks."""

    label: str  # the topic(s) as the reader should see them
    topics: tuple[str, ...]
    lens: str
    budget: int
    fmt: str
    found: bool
    sections: list[SectionOut]
    also: list[Item] = field(default_factory=list)
    omitted: list[Candidate] = field(default_factory=list)  # listed in JSON (may be capped)
    candidates_total: int = 0  # every candidate the walk produced (seeds included)
    header_level: int = 0  # 0 full, 1 compact, 2 minimal, 3 bare: small budgets get smaller headers
    notes: list[str] = field(default_factory=list)  # header lines: scoring, fallbacks, caps
    summary_only: bool = False
    show_scores: bool = True
    show_metadata: bool = True  # lens output.metadata: false -> heading and text only
    meta: dict[str, Any] = field(default_factory=dict)  # extra JSON meta (resolution, scoring...)
    # Lens output options (render_extras.py): a closing summary, numbered sources, and sections
    # that got nothing shown with the reason (``empty_notes``: section name -> why).
    summary: bool = False
    citations: bool = False
    empty_sections: bool = False
    empty_notes: dict[str, str] = field(default_factory=dict)
    freshness: str = ""  # the one line a stale graph's answers carry ("" when fresh)
    freshness_short: str = ""  # the same in a few words, for the minimal header
    context_id: str = ""  # the context's id (``manifest.py``): what ``--since`` names it by
    # Every shown node carries its date (lens output.dates); a question about time reads its
    # rank-ordered sections oldest first (``chronological``).
    show_dates: bool = True
    chronological: bool = False
    # Markdown: the one date every note this context could show shares (a folder checked out at
    # once, no date fields), said once in the header instead of beside every title.
    common_date: str | None = None
    # A free-text question full text took part in ranking: its words, by which a rank-ordered section
    # opens with the shown note that holds the question best (``opening.py``); () otherwise.
    opening_words: tuple[str, ...] = ()
    # The layout of the selection it was derived from (each section and the items it held then).
    _layout: Layout | None = field(default=None, init=False, repr=False, compare=False)
    _layout_of: list[tuple[SectionOut, list[Item]]] = field(default_factory=list, init=False, repr=False, compare=False)

    def layout(self) -> Layout:
        """The layout of what the sections hold now (derived again only when that changed)."""
        if self._layout is None or not self._same_selection():
            self._layout_of = [(s, list(s.items)) for s in self.sections]
            sections = [(s, self.order(s)) for s in self.sections]
            ordered = (i.cand for _, items in sections for i in items)
            self._layout = Layout(sections, extras.citations_for(ordered) if self.citations else {})
        return self._layout

    def _same_selection(self) -> bool:
        if len(self._layout_of) != len(self.sections):
            return False
        for (was, held), now in zip(self._layout_of, self.sections):
            if was is not now or len(held) != len(now.items) or any(a is not b for a, b in zip(held, now.items)):
                return False
        return True

    def date_of(self, c: Candidate) -> str | None:
        if not self.show_dates or (self.common_date is not None and self.fmt != "json"):
            return None
        day = node_date(c)
        if day is not None and self.fmt != "json" and title_shows_day(c.title, day):
            return None  # JSON keeps its date field, which programs read
        return day

    def order(self, section: SectionOut) -> list[Item]:
        """A section's items in reading order: the lens's order, or by date for a question about
        time (only where the lens orders by rank: an explicit order is the lens's choice); rank
        order opens with the note that holds a full-text question best (``opening_words``)."""
        if self.chronological and section.order == "rank":
            return outline_view.cluster_by_page(sorted(section.items, key=self._chronological_key))
        if self.opening_words and section.order == "rank":
            from ctx.assemble.opening import open_with_best

            return outline_view.cluster_by_page(open_with_best(_order_items(section.items, "rank"), self.opening_words))
        return order_items(section.items, section.order)

    def _chronological_key(self, item: Item) -> tuple[bool, str, int]:
        day = node_date(item.cand)
        return (day is None, day or "", item.cand.rank)

    def shown(self) -> list[Item]:
        return [i for s in self.sections for i in s.items]

    @property
    def omitted_total(self) -> int:
        return max(0, self.candidates_total - len(self.shown()) - len(self.also))


@lru_cache(maxsize=4096)
def _day(stamp: float) -> str | None:
    try:
        moment = datetime.fromtimestamp(stamp, tz=timezone.utc)
    except (ValueError, OverflowError, OSError):  # stored by a ctx that did not check dates yet
        return None
    # The date's own ISO text is strftime's "%Y-%m-%d" for a four-digit year at ~a third of the
    # cost (a new 100k note's deep build dates ~160 nodes not met before); a year below 1000 is
    # padded as the platform's strftime pads it, as it always was.
    return moment.date().isoformat() if moment.year >= 1000 else moment.strftime("%Y-%m-%d")


def title_shows_day(title: str, day: str) -> bool:
    """Whether a title already shows its node's day, as a daily note ("2024-05-28") or a dated
    meeting ("2024-03-04 Platform weekly") does: text written for a reader leaves the day out after
    it (``### 2024-05-28 (2024-05-28)`` cost 7 tokens a note)."""
    return day in title


def node_date(c: Candidate) -> str | None:
    """The day a node is about, as the context shows it: its own date (a note's ``date`` or
    ``created``, a journal's day, an outliner's creation time), else when it was last modified."""
    return day_of(c.created, c.updated)


def day_of(created: float | None, updated: float | None) -> str | None:
    """``node_date`` of a node known by its stored times (a candidate or ``NodeFacts``)."""
    stamp = created if created is not None else updated
    return None if stamp is None else _day(stamp)


# ---------------------------------------------------------------------------------------------
# Ordering inside a section (does not change what was selected, only how it reads).


def _sandwich(items: list[Item]) -> list[Item]:
    # Best first and last, weakest in the middle ("Lost in the Middle", Liu et al. 2023).
    ranked = sorted(items, key=lambda i: i.cand.rank)
    head, tail = ranked[0::2], ranked[1::2]
    return head + tail[::-1]


def order_items(items: list[Item], order: str) -> list[Item]:
    # Blocks of one outline page read together, wherever the order put the first of them.
    return outline_view.cluster_by_page(_order_items(items, order))


def _order_items(items: list[Item], order: str) -> list[Item]:
    if order == "sandwich":
        return _sandwich(items)
    if order == "grouped":
        return extras.grouped_by_document(items)
    keys = {
        "rank": lambda i: (i.cand.rank,),
        "closest": lambda i: (i.cand.cost, i.cand.rank),
        "depth": lambda i: (i.cand.hops, i.cand.rank),
        "chronological": lambda i: (i.cand.updated is None, i.cand.updated or 0.0, i.cand.id),
        "reverse-chronological": lambda i: (i.cand.updated is None, -(i.cand.updated or 0.0), i.cand.id),
        "document": lambda i: (i.cand.document, i.cand.position or 0, i.cand.id),
        "title": lambda i: (i.cand.title.lower(), i.cand.id),
    }
    return sorted(items, key=keys.get(order, keys["rank"]))
