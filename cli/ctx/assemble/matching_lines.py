"""A long passage of a log shown as its paragraphs that hold the question's words, gaps marked.

Passages are 100-250 tokens (``ctx.passages``). In a chat log or a journal, one passage holds many
unrelated paragraphs written one after another, and the answer to a question is one of them:
showing the whole passage spends the budget on its neighbours, so a tight context reaches fewer
notes than a plain retriever of short chunks would (issue 23). Here a passage the topic matched is
cut into paragraphs (blocks between blank lines; a fenced code block stays one), and its *core* is
the fewest paragraphs that between them hold every topic word the passage holds: greedily, the
paragraph holding the most still-uncovered weight first, a word weighing more the fewer of the
note's paragraphs hold it (a word every paragraph repeats says nothing about which one answers).
The paragraph a kept one announces (ending in a colon: a list, a code block) stays with it, and
``[…]`` marks every left-out stretch.

Only a note under no heading at all is cut this way (``passage_view``): a page in sections (a help
page, agenda items, a reading log's articles) keeps its passages whole, since a section's later
paragraphs carry what its first one introduces without repeating the question's words (the
setting, the caveat). Cutting those too lost help-page facts (bench_facts 0.791 -> 0.784-0.785).

The packer offers the core first and the rest of the passage later at a lower value
(``packing_order.shown_units``), so a tight budget reaches more passages and a loose one shows
them whole again.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctx.assemble.focus import GAP

# A passage gets a core only when it holds at least this many paragraphs: a passage of two is
# one or two exchanges already, and measured, cutting one of two lost a gold paragraph on MuSiQue
# (0.630 -> 0.627 at 500 tokens).
MIN_PARAGRAPHS = 3
_WORD = re.compile(r"\w+", re.UNICODE)
_BLANK = re.compile(r"\n[ \t]*\n")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]")
_TOP_ITEM = re.compile(r"(?:[-*+]|\d{1,3}[.)])[ \t]")  # a list item at the left margin
# English inflections folded before comparing words (the stemmed full-text index matched the
# passage by forms like these; an exact comparison would miss "guests" for "guest").
_SUFFIXES = ("ing", "ed", "es", "s")


# Kept: a log's cores fold every word of every passage a build attaches (~300,000 calls in 35
# questions at 1k nodes, 2/3 of a new question's passage preparation), and words repeat.
@functools.lru_cache(maxsize=1 << 16)
def fold(word: str) -> str:
    """A word compared by a crude stem: lowercased, accents dropped, one common suffix cut."""
    word = word.lower()
    if not word.isascii():  # an ASCII word has no accent to drop: NFKD leaves it as it is
        word = unicodedata.normalize("NFKD", word)
        word = "".join(ch for ch in word if not unicodedata.combining(ch))
    if word.endswith("'s"):
        word = word[:-2]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def paragraphs(text: str, items: bool = False) -> list[str]:
    """``text``'s blocks between blank lines, a fenced code block (blank lines and all) as one;
    with ``items`` (a day's page of an outliner), an outline block as its top-level items."""
    blocks = [b for b in _BLANK.split(text) if b.strip()]
    out: list[str] = []
    open_fence = False
    for block in blocks:
        if open_fence:
            out[-1] += "\n\n" + block
        else:
            out.extend(_items(block) if items else (block,))
        # A fence line holds three backticks or tildes in a row: a block without them opens or
        # closes none (most; the pattern ran on ~13,000 blocks of 40 new 100k questions).
        if ("```" in block or "~~~" in block) and len(_FENCE.findall(block)) % 2:
            open_fence = not open_fence
    return out


def _items(block: str) -> list[str]:
    """A block that is an outline as its top-level items, each with the lines under it (its
    sub-items, continuation lines); any other block whole. An outliner's daily page (Logseq,
    Roam, Tana) has no blank lines at all: its passage is one "paragraph" of twenty unrelated
    entries, and its core could never leave any out. Only a day's page is read so: a page's
    top-level items are its sections (a help page's bold "Problem" / "How to use?" bullets hold
    the answer in their children), and cutting those lost a Logseq help page's facts to a long
    changelog's cores (bench_facts logseq-20)."""
    if _FENCE.search(block) or not _TOP_ITEM.match(block):
        return [block]
    items: list[str] = []
    for line in block.split("\n"):
        if _TOP_ITEM.match(line) or not items:
            items.append(line)
        else:
            items[-1] += "\n" + line
    return items


def is_heading(paragraph: str) -> bool:
    """Whether a paragraph is (opens with) a markdown heading."""
    return _HEADING.match(paragraph) is not None


# Kept too: a log's paragraphs are read once for the note's weights and again for each matched
# passage's core. 2,048 covers one build's paragraphs; 8,192 cost a warm 100k process 9 MB more
# peak RSS (174 against 165) for no measured gain.
@functools.lru_cache(maxsize=1 << 11)
def words_of(text: str) -> frozenset[str]:
    return frozenset(fold(w) for w in _WORD.findall(text))


def held(text: str, terms: frozenset[str]) -> frozenset[str]:
    """``words_of(text) & terms`` for folded ``terms``: which of the topic's words a paragraph
    holds, all a core asks of it. An ASCII text none of whose lowercased characters hold a term is
    not folded word by word: an ASCII word folds to a prefix of its lowercase (no accents to drop,
    no "'s" inside a ``\\w`` match), so a term outside the lowercased text is no word's fold. At
    100k nodes most of a log's paragraphs hold no topic word, and folding each of their words
    was ~2-4 ms of a new question's ~250 paragraphs."""
    if text.isascii():
        lowered = text.lower()
        if not any(t in lowered for t in terms):
            return frozenset()
    return words_of(text) & terms


@dataclass(frozen=True)
class Core:
    text: str  # the kept paragraphs in reading order, ``[…]`` wherever some were left out
    kept: int  # paragraphs kept
    of: int  # paragraphs in the passage
    # It keeps a section about the topic whole (``_topic_sections``): the rest is the passage's
    # other sections, entries whose words the core's cover did not need.
    sections: bool = False
    # A day page's core widened to every entry holding a word of the topic, when that is more
    # than the core and less than the passage (``passage_view``); None otherwise.
    wide: str | None = None


def weights(terms: Sequence[str], note_paragraphs: Sequence[frozenset[str]]) -> dict[str, float]:
    """Each topic word (folded) the note holds: log(1 + paragraphs / paragraphs holding it)."""
    n = len(note_paragraphs)
    out: dict[str, float] = {}
    for term in dict.fromkeys(fold(t) for t in terms):
        df = sum(1 for words in note_paragraphs if term in words)
        if df:
            out[term] = math.log(1 + n / df)
    return out


def _topic_sections(paras: list[str], bags: list[frozenset[str]], weight: dict[str, float]) -> set[int]:
    """Indexes of the paragraphs in a section whose heading, or a heading above it within the
    passage, holds a topic word: each heading ends the sections at its level or deeper."""
    out: set[int] = set()
    stack: list[tuple[int, bool]] = []  # (level, names the topic) of the headings above
    for i, (para, bag) in enumerate(zip(paras, bags, strict=True)):
        if is_heading(para):
            level = len(para.lstrip(" ")) - len(para.lstrip(" ").lstrip("#"))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, bool(bag & weight.keys())))
        if any(named for _, named in stack):
            out.add(i)
    return out


def core(
    text: str, weight: dict[str, float], items: bool = False, sections: bool = False,
    also: Callable[[list[str]], set[int]] | None = None, every: bool = False,
) -> Core | None:
    """The passage's core for topic words ``weight`` (see the module), or None when it would be
    the whole passage or holds none of them; ``items`` as for ``paragraphs``; ``sections``: a
    section about the topic keeps only itself whole, not the whole passage (``_topic_sections``),
    and paragraphs tied in the cover go to the one saying the words most often (every build's
    logs since memory36; before, only where full text alone ranked); ``every``: every paragraph holding a
    word is kept, not the fewest covering them (a day page's wider core, ``Core.wide``);
    ``also``: the paragraphs (indices, from the passage's paragraphs) kept besides those holding
    the words, whether or not they hold any (an entry the vectors found: ``passage_view``),
    besides the cover, never in its place."""
    paras = paragraphs(text, items)
    if len(paras) < MIN_PARAGRAPHS:
        return None
    keys = frozenset(weight)  # only the topic's words are ever compared
    bags = [held(p, keys) for p in paras]
    # A section whose heading names the topic is about it (a meeting's agenda item): its
    # paragraphs carry what the heading says without repeating it, shown whole. Only a log's
    # passages hold headings here (``passage_view``): a sender's or a time's do not name it.
    # Only that section, down to the next heading at its level or above: a passage of short
    # sections holds the next agenda item too (memory_logs meetings: "#### The on-call rotation"
    # then "#### Metrics"), and shown whole it took half the room of the next sessions' items.
    topic = _topic_sections(paras, bags, weight)
    if topic and not sections:
        return None
    keep = set(topic)
    if len(keep) == len(paras):
        return None
    if every:
        keep |= {i for i, bag in enumerate(bags) if bag}
    uncovered = {t for bag in bags for t in bag if t in weight} - {t for i in keep for t in bags[i]}
    while uncovered:
        gains = [sum(weight[t] for t in bag & uncovered) for bag in bags]
        gain = max(gains)
        if gain <= 0:
            break
        tied = [i for i, g in enumerate(gains) if g == gain]
        i = tied[0]
        if sections and len(tied) > 1:
            # Paragraphs holding the same words tie: the one saying them most often, as BM25
            # counts a term's frequency, not the first (a journal's passing "the book club came
            # up again" before "made the call on the book for the book club": memory_logs set
            # 32's s32-161 lost its answer to the rest; docs/scale.md, memory23).
            i = max(tied, key=lambda j: (_occurrences(paras[j], bags[j] & uncovered), -j))
        keep.add(i)
        uncovered -= bags[i]
    # After the cover, not in it: a kept entry holding the question's words ("need to ask Ugo
    # about the tyre choice") must not stand in for the entry that answers in the same words.
    keep |= also(paras) if also is not None else set()
    if not keep:
        return None
    for i in sorted(keep):  # a paragraph ending in a colon announces the next (a list, code)
        if i + 1 < len(paras) and paras[i].rstrip().endswith(":"):
            keep.add(i + 1)
    # A kept paragraph keeps the heading it sits under (a log's entry: its time, its sender),
    # which says when or from whom; only a log's passages hold headings here (``passage_view``).
    for i in sorted(keep):
        above = next((j for j in range(i, -1, -1) if is_heading(paras[j])), None)
        if above is not None:
            keep.add(above)
    if len(keep) == len(paras):
        return None
    out: list[str] = []
    previous = -1
    for i in sorted(keep):
        if i != previous + 1:
            out.append(GAP)
        out.append(paras[i])
        previous = i
    if previous != len(paras) - 1:
        out.append(GAP)
    return Core("\n\n".join(out), len(keep), len(paras), bool(topic))


def _occurrences(text: str, terms: frozenset[str]) -> int:
    """How many times ``text`` says any of ``terms`` (folded): only for paragraphs tied in a
    core's cover, so the fold runs on a few paragraphs a build."""
    return sum(1 for w in _WORD.findall(text) if fold(w) in terms)
