"""Prepare: the text of the candidates the budget may show, made ready before packing.

Only a prefix of the ranking can reach a context: the seeds, then candidates worth about twice the
room the header leaves (store-time token counts, so the graph is never re-tokenized). For those,
and only those, the body is loaded, a first line that merely repeats the title as a heading is
dropped, and exact or near-duplicate content is removed (seed 004) so that packing never spends
budget on the same text twice. The packer then only packs what is ready.

This is the stage where a node's text is chosen: a long node entering as its most relevant
passages would be prepared here, before any budget is spent.
"""

from __future__ import annotations

import sqlite3

from ctx.assemble.candidate import Candidate
from ctx.assemble.dedup import drop_duplicates
from ctx.assemble.enrich import load_bodies
from ctx.assemble.render import strip_title_heading
from ctx.lenses import Lens


def worth_reading(ranked: list[Candidate], room: int) -> list[Candidate]:
    """Seeds plus the prefix of the ranking (sectioned candidates only) that could be shown."""
    wanted: list[Candidate] = []
    running = 0
    for c in ranked:
        if c.section is None:
            continue
        if c.seed:
            wanted.append(c)
        elif running < 2 * room + 200:
            wanted.append(c)
            # A node can never use more than the whole budget, however long it is.
            running += min(c.store_tokens, room)
    return wanted


def prepare_text(conn: sqlite3.Connection, ranked: list[Candidate], lens: Lens, room: int) -> set[str]:
    """Load and clean the bodies worth reading; drop duplicates. Returns the ids ready to pack."""
    wanted = worth_reading(ranked, room)
    load_bodies(conn, wanted)
    for c in wanted:
        c.body = strip_title_heading(c.body or "", c.title)
    # A duplicate leaves every section (its reason names the copy that stays).
    duplicates = drop_duplicates(wanted, lens.dedup.exact, lens.dedup.near, lens.dedup.threshold)
    return {c.id for c in wanted if c.id not in duplicates}
