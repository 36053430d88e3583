"""Whether a note is a log of unrelated entries or a page about one thing, from its own text.

A page about one thing (a help page in sections, an article) keeps its subject's words in its
sections: the title's words recur in most of its passages ("Graph view": its sections on styling,
filtering and opening the view all say "graph"). A log's title names the log, not what its entries
are about ("Lab notebook, entry 2", "Core team stand-up Fri week 44", "Allotment society inbox,
issue 7", a day page's date): its entries share none or few of its words. So a note is a log when
its passages hold, on average, less than ``LOG_SHARE`` of its title's words, when its title has
no words of its own to hold (a date, a version number), when most of its passages sit under a
heading that is a time or a date (a notebook's "### 17:22", a log's "## 2023-08-06"), or when it
is an outliner's day page. A note of one passage is neither: its passage is the note, which its
score ranked whole (a MuSiQue paragraph, a short help page).

Measured over every note of two passages or more (docs/scale.md, memory15): every note of the
generated memory logs (meetings, chats, journals, reading logs, stand-ups, lab notebooks, mail
digests, Logseq journals) is a log, all but the lab notebooks' holding less than a quarter of
their titles' words; in the four help vaults bench_facts reads, most notes are pages (foam-docs 66
of 72, logseq-docs 61 of 71, obsidian-dwarves-brain 567 of 663, dendron-site 317 of 531), and
those called logs are mostly logs or lists of unrelated entries in fact (dendron's release notes,
office hours, FAQ, tips; logseq's changelogs). How much vocabulary a note's passages share did not
separate them: the generated logs repeat their routine sentences from entry to entry.

Only the words are compared, cheaply (~5 microseconds a passage): a substring test for each title
word, then a scan for the words starting like it, each folded as ``matching_lines`` folds words
(so "notebooks" holds "notebook", "label" does not hold "lab"; "template" holds "templates",
folded "templat"); the count stops as soon as it decides. Accented forms are compared as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ctx.assemble import matching_lines as ml
from ctx.stopwords import STOPWORDS

# A note whose passages hold less than this share of its title's words on average is a log
# (see the module): the generated logs' notes other than lab notebooks hold at most a quarter,
# most help pages a half or more. (A lab notebook's entries say "lab" but neither "notebook" nor
# "entry": a third; its headings are times.)
LOG_SHARE = 1 / 3
# A heading that is a time of day or a date: an entry of a log.
_WHEN = re.compile(
    r"\b(?:\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|\d{1,2}(?:st|nd|rd|th)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d{1,2}(?:st|nd|rd|th)?\b)",
    re.IGNORECASE,
)


# A title's words that say when, not what: a diary's "Journal: Thursday, sun" is not about
# Thursdays, though an entry may well mention one.
_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun january
    february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec week weekly day daily month monthly""".split()
)


@lru_cache(maxsize=4096)
def title_words(title: str) -> tuple[str, ...]:
    """The title's own words, folded (no function words, numbers, calendar words or single
    letters)."""
    words = dict.fromkeys(
        ml.fold(w) for w in ml._WORD.findall(title)
        if (low := w.lower()) not in STOPWORDS and low not in _CALENDAR and not w.isdigit() and len(w) > 1
    )
    return tuple(words)


def is_log(title: str, passages: Sequence[tuple[Sequence[str], str]], day_page: bool = False) -> bool:
    """Whether a note titled ``title`` whose passages are ``passages`` (heading path, text) is a
    log of unrelated entries rather than a page about one thing (see the module)."""
    if len(passages) < 2:
        return False  # one passage: the note is its passage, ranked as a whole
    if day_page:
        return True
    words = title_words(title)
    if not words:
        return True
    timed = sum(1 for heading, _ in passages if heading and _WHEN.search(heading[-1]))
    if 2 * timed >= len(passages):
        return True
    # Stops as soon as the count decides it either way: a page is usually known within its
    # first few passages. A substring test first, so a passage holding none of the words (most of
    # a log's) costs no pattern scan.
    needed = LOG_SHARE * len(words) * len(passages)
    held = 0
    for i, (heading, text) in enumerate(passages):
        left = len(passages) - i - 1
        low = f"{' '.join(heading)}\n{text}".lower()
        held += sum(1 for w in words if w in low and _holds(low, w))
        if held >= needed:
            return False
        if held + left * len(words) < needed:
            return True
    return True


def _holds(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` (folded) or a form of it: a word starting like it (what
    ``\\b{word}\\w*`` finds, each match as far as its word characters go, one after another).
    Found with ``str.find`` and the boundary tested by hand: a pattern compiled for each new
    title's words cost ~40 us a word, ~2-3 ms of a new 100k question (docs/scale.md, ask17)."""
    if not word:
        return any(_a_form_of(ml.fold(m.group()), word) for m in re.finditer(r"\b\w*", text))
    first = _is_word_char(word[0])
    at = text.find(word)
    while at >= 0:
        # ``\b`` before the word: a word character on one side of ``at`` and not on the other.
        if first != (at > 0 and _is_word_char(text[at - 1])):
            end = _REST.match(text, at + len(word)).end()  # type: ignore[union-attr]
            if _a_form_of(ml.fold(text[at:end]), word):
                return True
            at = text.find(word, end)  # matches do not overlap: the next is searched after it
        else:
            at = text.find(word, at + 1)
    return False


# The rest of a word: ``\w*``, as the pattern took it.
_REST = re.compile(r"\w*")


def _is_word_char(ch: str) -> bool:
    """Whether ``ch`` is what ``\\w`` matches in a str pattern (a letter, a digit or "_")."""
    return ch.isalnum() or ch == "_"


def _a_form_of(found: str, word: str) -> bool:
    """Whether ``found`` (folded) is ``word`` or extends it by one letter (the fold cuts
    "templates" to "templat" but leaves "template" whole)."""
    return found == word or (len(found) == len(word) + 1 and found.startswith(word))
