"""Extractive shortening: keep the sentences of a text most similar to the topic, in reading order.

Seed 001's "extractive" truncation strategy. Similarity here is lexical (the topic's words a
sentence contains, weighted by how rare they are in this text, normalised by sentence length),
which needs no model, is deterministic and costs microseconds. Kept sentences stay in their
original order; gaps are marked with an ellipsis so a reader knows text was left out.
"""

from __future__ import annotations

import math
import re
from typing import Protocol

ELLIPSIS = "…"
GAP = f" {ELLIPSIS} "
# A sentence ends at . ! ? (with closing quotes/brackets) followed by space or the end, or at a
# line break. Matched as boundaries, each tried only where a run of . ! ? starts and never
# backtracked into: a whole-sentence pattern ("[^.]*" then the end) re-scanned a long run without
# a sentence end from every position in it (quadratic: 25 s for 20,000 characters).
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]++[)\]\"'”’]*+(?=\s|\Z)|\n")
_WORD = re.compile(r"\w+", re.UNICODE)
# Words that say nothing about what a question is about.
STOPWORDS = frozenset(
    "a an and are as at be by can could did do does for from had has have how i in is it its of on or "
    "our should so that the their them there these they this to was we were what when where which who "
    "why will with would you your".split()
)


class Counter(Protocol):
    def count(self, text: str) -> int: ...


def sentences(text: str) -> list[str]:
    out = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        part = text[start : match.end()].strip()
        if part:
            out.append(part)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def topic_terms(topic: str) -> set[str]:
    return {w for w in _WORD.findall(topic.casefold()) if w not in STOPWORDS}


def sentence_scores(parts: list[str], terms: set[str]) -> list[float]:
    """Relevance of each sentence to ``terms``: rare-in-this-text topic words count most."""
    bags = [set(_WORD.findall(s.casefold())) for s in parts]
    n = len(parts)
    df = {t: sum(1 for b in bags if t in b) for t in terms}
    scores = []
    for bag in bags:
        hit = sum(math.log(1 + n / df[t]) for t in terms if t in bag)
        scores.append(hit / math.sqrt(max(len(bag), 1)))
    return scores


def extract(text: str, allowance: int, topic: str, counter: Counter) -> str:
    """The most topic-relevant sentences of ``text`` that fit ``allowance`` tokens, in text order.

    With no topic word in any sentence this keeps the leading sentences (the same as keep-start
    at sentence granularity). Returns "" when not even one sentence fits.
    """
    if counter.count(text) <= allowance:
        return text
    parts = sentences(text)
    if not parts:
        return ""
    scores = sentence_scores(parts, topic_terms(topic))
    # Best first; ties (and a topic that matches nothing) go to earlier sentences.
    order = sorted(range(len(parts)), key=lambda i: (-scores[i], i))
    # Plan with per-sentence counts (+2 for a joining space and a possible ellipsis), then make
    # the real count exact by dropping the least relevant kept sentence while over.
    sizes = [counter.count(p) + 2 for p in parts]
    chosen: list[int] = []
    used = 1
    for i in order:
        if used + sizes[i] <= allowance:
            chosen.append(i)
            used += sizes[i]
    chosen.sort()
    while chosen and counter.count(join(parts, chosen)) > allowance:
        chosen.remove(max(chosen, key=lambda i: (-scores[i], i)))
    return join(parts, chosen)


def join(parts: list[str], chosen: list[int]) -> str:
    """Kept sentences in order; an ellipsis wherever sentences were skipped (start, gaps, end)."""
    if not chosen:
        return ""
    out: list[str] = []
    if chosen[0] > 0:
        out.append(ELLIPSIS)
    prev = None
    for i in chosen:
        if prev is not None and i != prev + 1:
            out.append(ELLIPSIS)
        out.append(parts[i])
        prev = i
    if chosen[-1] < len(parts) - 1:
        out.append(ELLIPSIS)
    return " ".join(out)
