"""The packer's state: the document being filled, what is placed where, and what a block costs.

``plan.py`` fills the sections, ``fit.py`` adjusts the result to the exact budget, ``sizing.py``
finds the version of one node that fits an allowance; each works on a ``Packer``, which only knows
the costs and keeps the placements.
"""

from __future__ import annotations

from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.document import SUMMARY, Document, Item
from ctx.assemble.render import block_text
from ctx.lenses import Lens


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

    # -- costs ---------------------------------------------------------------------------------

    def cost(self, item: Item) -> int:
        if item.variant == SUMMARY:
            # A one-line summary is the candidate's line whatever the item holds, and nothing a
            # pack changes enters it: counted once (the plan and the fit each try hundreds).
            known = self.summary_costs.get(item.cand.id)
            if known is None:
                known = self.summary_costs[item.cand.id] = self.counter.count(block_text(self.doc, item))
            return known
        return self.counter.count(block_text(self.doc, item))

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
