"""Shortening a node's text to a token allowance, at a sentence or line boundary when possible.

Strategies (lens ``truncation.strategy``): ``keep-start`` keeps the opening, ``keep-end`` the
closing part. ``extractive`` keeps the sentences most similar to the topic, in reading order
(``extract.py``; lexical similarity, no model), and cuts the opening when not one sentence fits.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctx.assemble.counter import TokenCounter

ELLIPSIS = "…"
_SENTENCE_END = re.compile(r"[.!?][)\]\"'”’]*\s|\n")


def _cut_start(text: str, counter: "TokenCounter", allowance: int) -> str:
    tokens = counter.encode(text)
    if len(tokens) <= allowance:
        return text
    cut = counter.decode(tokens[: max(allowance - 1, 0)]).rstrip("\ufffd")  # one token for "…"
    # Prefer ending at the last sentence or line end, unless that throws away more than half.
    last = None
    for match in _SENTENCE_END.finditer(cut):
        last = match.end()
    if last is not None and last >= len(cut) * 0.5:
        cut = cut[:last]
    elif " " in cut[len(cut) // 2 :]:
        cut = cut[: cut.rfind(" ")]
    cut = cut.rstrip()
    return f"{cut} {ELLIPSIS}" if cut else ""


def _cut_end(text: str, counter: "TokenCounter", allowance: int) -> str:
    tokens = counter.encode(text)
    if len(tokens) <= allowance:
        return text
    keep = max(allowance - 1, 0)
    cut = counter.decode(tokens[len(tokens) - keep :]) if keep else ""
    cut = cut.lstrip("\ufffd")
    first = _SENTENCE_END.search(cut)
    if first is not None and first.end() <= len(cut) * 0.5:
        cut = cut[first.end() :]
    cut = cut.lstrip()
    return f"{ELLIPSIS} {cut}" if cut else ""


def shorten(text: str, allowance: int, strategy: str, counter: "TokenCounter", topic: str = "") -> str:
    """``text`` cut to about ``allowance`` tokens (the caller re-counts what it renders)."""
    if allowance <= 0:
        return ""
    if strategy == "extractive":
        from ctx.assemble.extract import extract

        kept = extract(text, allowance, topic, counter)
        if kept:
            return kept
        # Not even one whole sentence fits: cut the opening instead of showing nothing.
    if strategy == "keep-end":
        return _cut_end(text, counter, allowance)
    return _cut_start(text, counter, allowance)
