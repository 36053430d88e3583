"""Prepare: the text of the candidates the budget may show, made ready before packing.

Only a prefix of the ranking can reach a context: the seeds, then candidates worth about twice the
room the header leaves (store-time token counts, so the graph is never re-tokenized). For those,
and only those, the body is loaded, a first line that merely repeats the title as a heading is
dropped, and exact or near-duplicate content is removed (seed 004) so that packing never spends
budget on the same text twice. The packer then only packs what is ready.

This is the stage where a node's text is chosen. Every body has its image and attachment links
collapsed and its headings nested under the node's own; when the build ranked passages for a
free-text topic, each candidate also gets its passages with their relevance (``Candidate.pieces``),
so a long node can enter as its most relevant passages (``focus.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.assemble import block_refs
from ctx.assemble.candidate import Candidate
from ctx.assemble.dedup import drop_duplicates
from ctx.assemble.enrich import load_bodies
from ctx.assemble.render import strip_title_heading
from ctx.lenses import Lens
from ctx.passages import collapse_attachments, nest_headings

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader
    from ctx.assemble.counter import TokenCounter
    from ctx.assemble.passage_rank import PassageRanking


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


def prepare_body(body: str, title: str) -> str:
    """A node's text as a context shows it: no repeated title heading, image and attachment
    links as short placeholders, its headings nested under the node's own heading."""
    return nest_headings(collapse_attachments(strip_title_heading(body, title)))


def prepare_text(
    graph: GraphReader,
    ranked: list[Candidate],
    lens: Lens,
    room: int,
    ranking: "PassageRanking | None" = None,
    counter: "TokenCounter | None" = None,
) -> set[str]:
    """Load and clean the bodies worth reading, with their passages when ``ranking`` says which
    matter for the topic; drop duplicates. Returns the ids ready to pack."""
    wanted = worth_reading(ranked, room)
    load_bodies(graph, wanted)
    # Block references show the text they name, with its page (titles of every candidate: the
    # ones only summarised are named by them too).
    block_refs.resolve_candidates(ranked, graph.block_texts, bodies=False)
    block_refs.resolve_candidates(wanted, graph.block_texts, bodies=True)
    for c in wanted:
        c.body = prepare_body(c.body or "", c.title)
    # Query-focused text replaces cutting the opening; a lens that chose another way to shorten
    # (keep-end, extractive) keeps it.
    if ranking is not None and counter is not None and (lens.passages or lens.truncation.strategy == "keep-start"):
        from ctx.assemble.passage_view import attach_pieces

        attach_pieces(graph, wanted, ranking, counter)
    # A duplicate leaves every section (its reason names the copy that stays).
    duplicates = drop_duplicates(wanted, lens.dedup.exact, lens.dedup.near, lens.dedup.threshold)
    return {c.id for c in wanted if c.id not in duplicates}
