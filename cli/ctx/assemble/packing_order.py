"""The order a section offers its members to the packer (lens ``packing.strategy``), and what each
passage of a long node is worth when a section is packed passage by passage.
"""

from __future__ import annotations

from ctx.assemble.candidate import Candidate
from ctx.assemble.focus import WIDE_WORTH

# The parts a passage is offered in (``shown_units``), and what a node shows of a passage it won
# (``plan.win_passages``): its core, its wider core, the whole passage.
CORE, WIDE, REST = 0, 1, 2

# A node the topic matched in none of its passages (reached by the walk) is worth its standing
# for its first passage, and this much less for each further one.
UNMATCHED_DECAY = 0.5


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


def passage_units(members: list[Candidate]) -> list[tuple[float, int, int, Candidate]]:
    """(-value, rank, ord, candidate) for every passage worth packing, most valuable first.

    A passage is worth its node's score (a share of the best member's) times its relevance:

    * a note of one passage: the note is the passage, and the node's score (which knows more than
      the passage's words: names found through the seeds, the walk) speaks for it whole;
    * a note of several passages: each passage's own relevance to the topic (a share of the best
      passage in the graph), not its standing within the note. A long note's passages the topic
      matched weakly stay weak however well the note ranks, so the next notes' well-matched
      passages win over them (a multi-topic log contributes its matching passages, not its bulk),
      and a note whose best passage matched weakly does not get that passage priced as if it
      answered (issue 23).

    A node the topic matched nowhere (a bridge the walk found) competes with its opening passages.

    The node's score stands for the note at its share of the best member's to the power its
    passages carry (``Piece.standing``): 1 for a page about one thing, whose standing is what puts
    its further sections, whose own words match weakly, before other notes'; less for a log of
    unrelated entries, whose score says one of its entries matched, not that the others are about
    the topic (``passage_view.STANDING``).
    """
    top = max((c.score for c in members), default=0.0) or 1.0
    # The damping flattens the logs' standings toward the best log's, never above it: a log is
    # not lifted over the pages that rank above it.
    logs = max((c.score for c in members if c.pieces and c.pieces[0].standing < 1.0), default=0.0)
    units: list[tuple[float, int, int, Candidate]] = []
    for c in members:
        pieces = c.pieces or []
        share = max(c.score, 0.0) / top
        power = pieces[0].standing if pieces else 1.0
        best = max((p.relevance for p in pieces), default=0.0)
        if power < 1.0 and logs > 0:
            # A log stands no lower than its own best passage says, as a share of the best log's
            # standing: its score is its rank in a fused node ranking (RRF), which put a session
            # whose entry was the graph's 18th-78th passage (relevance 0.35-0.76) at 0.05-0.30
            # of the best, and its answering core below every first session's weak entries.
            # Only with the notes of the graph's best passages read (``prepare.OWNER_ESTIMATE``):
            # alone, the floor lifted the read logs' other entries and lost more than it gained
            # (memory sets 4, 30, 32, 51: -3.0 question-cells at 1,000 tokens; docs/scale.md,
            # memory43).
            score = max(c.score, best * logs) if pieces[0].floored else max(c.score, 0.0)
            share = logs / top * (score / logs) ** power
        if best > 0:
            scale = best if len(pieces) == 1 else 1.0
            units.extend((-share * p.relevance / scale, c.rank, p.ord, c) for p in pieces if p.relevance > 0)
        else:
            units.extend((-share * UNMATCHED_DECAY**k, c.rank, p.ord, c) for k, p in enumerate(pieces))
    units.sort(key=lambda u: u[:3])
    return units


def shown_units(members: list[Candidate]) -> list[tuple[float, int, int, int, Candidate]]:
    """``passage_units`` with a long passage offered in parts: (-value, rank, ord, part,
    candidate), ``part`` ``CORE``, ``WIDE`` or ``REST``. A passage with a core (``focus.Piece.core``:
    its paragraphs holding the topic's words) is worth its value for the core and
    ``Piece.rest_worth`` of it for the rest of its text, so a tight budget shows the cores of more
    passages and a loose one the passages whole; a day page's passage with a wider core
    (``Piece.wide``: every entry holding the topic's words) offers it between the two, at
    ``focus.WIDE_WORTH`` of its value."""
    units: list[tuple[float, int, int, int, Candidate]] = []
    for value, rank, ord_, c in passage_units(members):
        units.append((value, rank, ord_, CORE, c))
        piece = next(piece for piece in c.pieces or [] if piece.ord == ord_)
        if piece.core is not None:
            if piece.wide is not None:
                units.append((value * WIDE_WORTH, rank, ord_, WIDE, c))
            units.append((value * piece.rest_worth, rank, ord_, REST, c))
    units.sort(key=lambda u: u[:4])
    return units
