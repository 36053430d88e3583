"""Which shown note a free-text question's context opens with, when full text helped rank it.

Without embeddings a note ranks by BM25, which adds up the question's words a passage matches,
each by its own weight: a passage holding one generic word of the question in its title can
outrank the passage holding most of the question ("how deep can embedded notes go?" found a
note titled "Deep Work" first). That ranking also chose the seed, the walk and what the budget
holds, and changing it moved what fills the budget: every such change measured lost a benchmark
elsewhere (docs/scale.md, "Which note comes first without embeddings"). What the reader meets
first is a separate choice, made here once the budget is filled: among the notes shown, the one
whose shown text holds the question best opens the context, and the rest keep the ranking's order.

A shown note is worth its best passage's relevance share (BM25's, or BM25 and the vectors' fused by
rank after ``ctx embed``) times ``(words it holds / words any shown
note holds) ^ (COVER_POWER x (1 - named))``, where ``named`` is the share of its title's content
words the question says. A note the question names ("Signmark", "Journal of Psychotherapy
Integration") keeps its BM25: a question naming it is about it, however few of the other words it
holds; any other note is judged by how much of the question it shows. Words are cut as the
stemmed index cuts them (``ctx.store.word_cut``), from the text as shown, so the choice is the
same on either engine and in markdown and JSON alike. The same rule holds with passage vectors
(measured: bench_facts embedded first-answer rank 1.71 -> 1.65, none lower on the dev split); a
ranking by vectors alone (lens ``seeds.retrieval: vector``) keeps the lens's order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.assemble import outline_view

if TYPE_CHECKING:
    from ctx.assemble.candidate import Candidate
    from ctx.assemble.document import Item

# How much the share of the question a note shows counts against its BM25: holding one word of
# six costs 0.36 of it (the value measured for note ranking on branch rank7-wip, kept, not tuned).
COVER_POWER = 0.25


def text_relevance(c: "Candidate") -> float:
    """The relevance share of the note's best passage (0: the question matched none of them)."""
    return max((p.relevance for p in c.pieces or ()), default=0.0)


def shown_text(item: "Item") -> str:
    """What the note's block shows besides its title: its text and outline entries."""
    if item.compact:
        return ""
    return "\n".join(t for t in (item.text, outline_view.markdown(item.cand, item.outline_shown())) if t)


def open_with_best(items: list["Item"], words: tuple[str, ...]) -> list["Item"]:
    """``items`` (a section in reading order) with the note that holds the question best first."""
    matched = [i for i in items if text_relevance(i.cand) > 0]
    if len(matched) < 2 or len(words) < 2:
        return items
    covers = _covers(words, [(i.cand.title, shown_text(i)) for i in matched])
    live = len(frozenset().union(*(held for held, _ in covers)))
    if live < 2:
        return items

    def value(k: int) -> float:
        held, named = covers[k]
        return text_relevance(matched[k].cand) * (max(len(held), 1) / live) ** (COVER_POWER * (1.0 - named))

    # Ties keep the ranking's order (the first of equal values in reading order).
    best = max(range(len(matched)), key=lambda k: (value(k), -k))
    opener = matched[best]
    if opener is items[0]:
        return items
    return [opener, *(i for i in items if i is not opener)]


# The budget's fitting loop lays a selection out several times, mostly with the same blocks: each
# (question, title, text) is cut once.
_SEEN: dict[tuple[tuple[str, ...], str, str], tuple[frozenset[str], float]] = {}
MEMO_SIZE = 4096


def _covers(words: tuple[str, ...], texts: list[tuple[str, str]]) -> list[tuple[frozenset[str], float]]:
    found = {t: _SEEN.get((words, *t)) for t in texts}
    new = [t for t, seen in found.items() if seen is None]
    if new:
        from ctx.store import word_cover

        cover = word_cover(words, new)
        if len(_SEEN) + len(new) > MEMO_SIZE:
            _SEEN.clear()
        for text, held, named in zip(new, cover.held, cover.named):
            found[text] = _SEEN[(words, *text)] = (held, named)
    return [found[t] or (frozenset(), 0.0) for t in texts]
