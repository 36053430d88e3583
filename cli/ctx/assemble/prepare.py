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


# What one passage the topic matched is reckoned to cost when choosing how far down the ranking to
# read (the splitter's largest passage; the packer counts the real text), and how many of a node's
# matched passages are reckoned with at most.
PASSAGE_ESTIMATE = 250
PASSAGES_RECKONED = 4
# What one of the graph's best passages is reckoned to cost when choosing whose notes to read for
# it (``passage_owners``): what it can enter a context as, not what it holds. A log's passage
# enters as its core, the paragraphs holding the question's words (40-70 tokens, its note's title
# line besides): reckoned at a whole passage (250), a 2,000-token context read the notes of the
# graph's ~17 best passages, and a two-part question's second answer, 18th-29th, relevance
# 0.45-0.76, was in a note never read (memory sets 4, 6, 7, 20, 22; docs/scale.md, memory38/43).
OWNER_ESTIMATE = 100


def worth_reading(
    ranked: list[Candidate], room: int, matched: dict[str, int] | None = None, owners: list[str] | None = None,
) -> list[Candidate]:
    """Seeds plus the prefix of the ranking (sectioned candidates only) that could be shown.

    ``matched``: how many passages of each node the topic matched, when the lens packs passages.
    Such a node competes passage by passage (``plan.focused_fill``), so it is reckoned at the size
    of those passages, not its own: a long multi-topic note (a meeting log, a chat transcript)
    does not hide the notes ranked after it from the packer, and their matching passages get to
    compete with its weaker ones (issue 23).

    ``owners``: the notes that hold the best passages of the whole graph, best passage first
    (``passage_owners``). Each is read too, wherever its node ranks: the packer values a long
    note's passages by their own relevance, so a note ranked 11th whose one passage is the
    third best in the graph must be there to win (issue 23).
    """
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
            size = min(c.store_tokens, room)
            if matched and c.id in matched:
                size = min(size, PASSAGE_ESTIMATE * min(matched[c.id], PASSAGES_RECKONED))
            running += size
    if owners:
        have = {c.id for c in wanted}
        by_id = {c.id: c for c in ranked if c.section is not None}
        wanted += [by_id[n] for n in owners if n in by_id and n not in have]
    return wanted


def read_as_without_vectors(
    ranking: PassageRanking, room: int, owners: list[str],
) -> tuple[dict[str, int], list[str]]:
    """With vectors, ``matched`` and ``owners`` that read at least what the same graph without
    vectors reads: a node reckoned at the passages full text matched (the vectors' pool of 200
    adds a few passages to every note, so each long log was reckoned at the whole room and the
    node order read three or four notes at 1,000 tokens), and besides the notes holding the
    best passages by the fused shares, those holding the best by the better of those and either
    ranking's own (``passage_rank.at_least_alone``: the vectors' best took full text's places,
    and a note ranked 5th whose message answers was never read; memory20)."""
    from ctx.assemble.passage_rank import PassageRanking

    matched: dict[str, int] = {}
    for pid in ranking.lexical:
        node_id = ranking.node_of[pid]
        matched[node_id] = matched.get(node_id, 0) + 1
    # A passage only the vectors found is read by its fused share, not by the rank share it may
    # be priced at where full text is unsure (``at_least_alone``): read by that, the vectors'
    # best passages' notes took the reading places of the notes full text ranked 5th, whose
    # answering message was then never read (memory set 21 at 1,000 tokens; memory22).
    floors = {pid: floor if pid in ranking.lexical else ranking.passages.get(pid, 0.0)
              for pid, floor in ranking.floors.items()}
    by_words = PassageRanking(floors, ranking.node_of)
    return matched, list(dict.fromkeys([*owners, *passage_owners(by_words, room, PASSAGE_ESTIMATE)]))


def passage_owners(ranking: PassageRanking, room: int, estimate: int | None = None) -> list[str]:
    """The notes holding the graph's best passages, best first, until those passages (reckoned
    at ``estimate`` each) would fill twice the room: what passage-by-passage packing can
    choose from. By default ``OWNER_ESTIMATE`` where full text alone ranked, ``PASSAGE_ESTIMATE``
    with vectors (read deeper there, bench_facts with embeddings fell; memory43)."""
    if estimate is None:
        estimate = PASSAGE_ESTIMATE if "vectors" in ranking.method else OWNER_ESTIMATE
    owners = _best_owners(ranking.passages, ranking.node_of, room, estimate)
    if ranking.floors:
        # With vectors a log's passage is packed at its floor (``passage_rank.at_least_alone``,
        # ``passage_view``), which can be far above its fused share: an answer asked in other
        # words, its paragraph among the nearest by meaning, floored at 0.5-0.85 of the best but
        # 20th-90th by share, and its note was read by nothing (45 / 30 of the 76 / 60 open
        # evidence paragraphs the embedded build missed at 1,000 / 2,000 tokens on memory sets
        # 1, 3 and 30 were in no member note; docs/scale.md, memory46). The notes of the best
        # passages by floor join after those by share, which stay as they were; only passages
        # their own paragraphs' or blocks' vectors found (``found_blocks``) are read by floor,
        # so a graph without paragraph vectors or day pages (MuSiQue's) reads as before.
        floored = {pid: max(share, ranking.floors.get(pid, 0.0)) if pid in ranking.found_blocks else share
                   for pid, share in ranking.passages.items()}
        owners.update(dict.fromkeys(_best_owners(floored, ranking.node_of, room, estimate)))
    return list(owners)


def _best_owners(worth: dict[int, float], node_of: dict[int, str], room: int, estimate: int) -> dict[str, None]:
    owners: dict[str, None] = {}
    running = 0
    for pid in sorted(worth, key=lambda p: (-worth[p], p)):
        if running >= 2 * room + 200:
            break
        running += estimate
        owners.setdefault(node_of[pid], None)
    return owners


def matched_passages(ranking: PassageRanking) -> dict[str, int]:
    """Node id -> how many of its passages the topic matched."""
    out: dict[str, int] = {}
    for node_id in ranking.node_of.values():
        out[node_id] = out.get(node_id, 0) + 1
    return out


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
    by_passage = ranking is not None and lens.passages
    matched = matched_passages(ranking) if ranking is not None and by_passage else None
    owners = passage_owners(ranking, room) if ranking is not None and by_passage else None
    if owners and ranking is not None and "vectors" not in ranking.method:
        # A day page's passage is offered whole after its core and wider core (its entries are
        # blocks of their own): read past whole passages' reckoning, the days read took the
        # room of the answering day's wider core (memory set 41, s41-052 at 2,000 tokens). With
        # vectors the owners are reckoned at whole passages already: nothing to filter.
        near = set(passage_owners(ranking, room, PASSAGE_ESTIMATE))
        days = {c.id for c in ranked if c.type == "journal"}
        owners = [n for n in owners if n in near or n not in days]
    if ranking is not None and by_passage and ranking.floors:
        matched, owners = read_as_without_vectors(ranking, room, owners or [])
    wanted = worth_reading(ranked, room, matched, owners)
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
