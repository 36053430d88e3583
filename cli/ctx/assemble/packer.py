"""The packer's state: the document being filled, what is placed where, and what a block costs.

``plan.py`` fills the sections, ``fit.py`` adjusts the result to the exact budget, ``sizing.py``
finds the version of one node that fits an allowance; each works on a ``Packer``, which only knows
the costs and keeps the placements.
"""

from __future__ import annotations

from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.document import SUMMARY, Document, Item
from ctx.assemble.render import block_text, summary_where
from ctx.lenses import Lens

# Encodings whose split pattern ends a piece at an ASCII letter or digit followed by ";" or ")"
# (no piece runs on from a letter or digit into punctuation other than "'", and none looks back), so
# that a markdown summary line's tokens are its parts' tokens one after another where each part
# after the first opens with ";" or ")" right after such a character (``Packer.summary_parts``).
# o200k_base's pattern reads the same way but is not installed offline to be tested: counted whole.
PART_SPLIT_ENCODINGS = frozenset({"cl100k_base"})

# The fewest tokens the part of a summary line up to its id can be ("- {title} ({type}; id: {id}"):
# "-", the piece holding the space after it, the piece holding "(", " id", ":" and the id's first
# piece are six pieces (a piece holds a space only as its first character or holds nothing but
# white space, and a space stands between each two of them), each at least one token, whatever the
# title, type and id hold ("- " + "" + " (; id: a" is "-", " ", " (;", " id", ":", " a").
HEAD_FLOOR = 6


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
        self.summary_costs: dict[str, int] = {}
        self.summary_floors: dict[str, int] = {}  # id -> fewest tokens its summary line can cost
        self._split_lines = doc.fmt == "markdown" and counter.encoding in PART_SPLIT_ENCODINGS

    # -- costs ---------------------------------------------------------------------------------

    def cost(self, item: Item) -> int:
        if item.variant == SUMMARY:
            # A one-line summary is the candidate's line whatever the item holds, and nothing a
            # pack changes enters it: counted once (the plan and the fit each try hundreds).
            known = self.summary_costs.get(item.cand.id)
            if known is None:
                parts = self.summary_parts(item.cand)
                if parts is None:
                    known = self.counter.count(block_text(self.doc, item))
                else:
                    count = self.counter.count
                    known = count(parts[0]) + sum(map(count, parts[1]))
                self.summary_costs[item.cand.id] = known
            return known
        return self.counter.count(block_text(self.doc, item))

    def fits(self, item: Item, room: int) -> bool:
        """``cost(item) <= room``, counted no further than that needs: a block tried against
        less room than it takes (a note whole before it is cut to its passages) is most of the
        blocks a build prices; one that fits is counted, and kept, whole."""
        if item.variant == SUMMARY:
            return self.cost(item) <= room
        return self.counter.count_within(block_text(self.doc, item), room) is not None

    def summary_parts(self, c: Candidate) -> tuple[str, list[str]] | None:
        """A markdown summary line (``render.markdown_summary_line`` and its line break) as its part
        up to the id and the parts after it, each counted on its own where that is the line's count
        (see ``PART_SPLIT_ENCODINGS``): the head is the node's whatever the build, and the rest
        (its day, its distance, its score) come from a few hundred texts a warm process has
        counted. None where the line is counted whole."""
        if not self._split_lines or not c.id or not _ends_in_ascii_alnum(c.id):
            return None
        date = self.doc.date_of(c)
        rest = [] if not date else [f"; {date}"]
        if date and not _ends_in_ascii_alnum(date):
            return None
        where = summary_where(c)
        if not _ends_in_ascii_alnum(where):
            return None
        rest.append(f"; {where}")
        rest.append(f"; score {c.score:.3f})\n" if self.doc.show_scores else ")\n")
        return f"- {c.title} ({c.type}; id: {c.id}", rest

    def summary_exceeds(self, c: Candidate, room: int) -> bool:
        """Whether ``c``'s summary line certainly costs more than ``room`` tokens, told from a floor
        of its cost where that suffices (its parts after the id counted, ``HEAD_FLOOR`` for the
        rest): a build prices ~500 lines to list ~12, and most cannot fit what is left."""
        known = self.summary_costs.get(c.id)
        if known is not None:
            return known > room
        floor = self.summary_floors.get(c.id)
        if floor is not None and floor > room:
            return True
        parts = self.summary_parts(c)
        if parts is None:
            return self.cost(Item(c, SUMMARY)) > room
        count = self.counter.count
        rest = sum(map(count, parts[1]))
        if HEAD_FLOOR + rest > room:
            # Kept: the fit's passes ask again with less room.
            self.summary_floors[c.id] = HEAD_FLOOR + rest
            return True
        known = self.summary_costs[c.id] = count(parts[0]) + rest
        return known > room

    def full_body_tokens(self, c: Candidate) -> int:
        if c.id not in self.body_tokens:
            self.body_tokens[c.id] = self.counter.count(c.body or "")
        return self.body_tokens[c.id]

    def heading_cost(self, name: str) -> int:
        if self.doc.fmt == "json":
            return self.counter.count(f'{{"name":"{name}","ids":[]}},') if self.doc.header_level == 0 else 0
        return self.counter.count(f"## {name}\n\n")

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

    # -- what is left --------------------------------------------------------------------------

    def seeds_missing(self) -> bool:
        return any(c.seed and c.section is not None and c.id not in self.placed for c in self.ranked)

    def dropped(self) -> list[Candidate]:
        listed = {i.cand.id for i in self.doc.also}
        return [c for c in self.ranked if c.id not in self.placed and c.id not in listed]


def _ends_in_ascii_alnum(text: str) -> bool:
    last = text[-1]
    return last.isascii() and last.isalnum()
