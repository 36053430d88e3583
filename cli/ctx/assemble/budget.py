"""Budget: choose what goes into the output so that its real token count never exceeds the budget.

The candidates' text arrives ready (``prepare.py``: bodies loaded, title headings stripped,
duplicates removed) and the header is chosen (``choose_header``); packing then runs in two
steps over one ``Packer`` (``packer.py``: the placements and what a block costs):

* ``plan.py`` fills the sections with counts of each node's rendered block (store-time counts
  pre-filter what is worth counting): the header reserved exactly, the rest split by the lens's
  section shares (unused budget flows to the next section), whole nodes skipped (not stopped at)
  when they do not fit, the best left-out node shortened (``sizing.py``) into what is left, the
  rest listed as one-line summaries ("also related") while they fit;
* ``fit.py`` renders, counts the real string, and adjusts: shrink the lowest-value item while
  over, grow into the slack while under, until the text fits and the header's "used" figure is
  the true count of the text it is in (a fixed point).

Then the audit (``explain.record_decisions``) says what happened to each candidate.

A protected seed (every seed, unless the lens's ``seeds.protect`` names how many) is never
dropped while anything else can give way: it is shortened instead, down to its title and id;
other seeds compete like any node at distance 0. Below ``output.summary_below`` tokens the output
is summary-only: one line per related node, the seed's text cut to what is left.
"""

from __future__ import annotations

from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.explain import record_decisions
from ctx.assemble.fit import fit
from ctx.assemble.packer import Packer
from ctx.assemble.plan import plan
from ctx.assemble.document import Document
from ctx.assemble.render import render
from ctx.lenses import HEADER_LEVELS, Lens


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
        plan(packer, content_room(doc, header_cost))
    text, used = fit(packer)
    record_decisions(doc, ranked, packer.placed, packer.cost)
    return text, used
