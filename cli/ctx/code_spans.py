"""Where a markdown text holds code: fenced blocks, indented blocks and inline code spans.

Code is an example, never a reference or something to tidy: ``![[Engelbart.jpg|100x145]]`` in a
fence is the syntax a help note teaches, ``[[A]]`` in backticks links nowhere, ``#include`` in an
indented block is no tag. Every stage that rewrites or scans note text (the importers' link and
tag scans, attachment placeholders, block references) goes through :func:`outside_code` or
:func:`code_spans`, so the same text counts as code everywhere.

The rules follow CommonMark closely enough for notes:

* a fence opens with three or more backticks or tildes (any indentation: notes indent fences in
  lists) and closes with a line that starts with at least as many of the same character, not
  followed by an info string, or at the end;
* an indented block is a run of lines indented by four or more columns that follows a blank line
  (or the start), outside a list (in a list, indentation is the item's continuation);
* a code span is a run of backticks closed by the next run of the same length on its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
_BACKTICK_RUN = re.compile(r"`+")


def _indent(line: str) -> int:
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _block_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced and indented code blocks, whole lines, in order."""
    spans: list[tuple[int, int]] = []
    lines = text.splitlines(keepends=True)
    pos = 0
    i = 0
    previous_blank = True
    in_list = False
    while i < len(lines):
        line = lines[i]
        start = pos
        stripped = line.strip()
        fence = _FENCE_OPEN.match(line)
        if fence and not (fence.group(1)[0] == "`" and "`" in line[fence.end():]):
            marker = fence.group(1)
            end = start + len(line)
            j = i + 1
            while j < len(lines):
                end += len(lines[j])
                close = lines[j].strip()
                # ``` -> after a closing run (notes close fences inside HTML comments) still
                # closes; ```js does not: that opens the next example in a fence of four.
                if close.startswith(marker[0] * len(marker)):
                    rest = close.lstrip(marker[0])
                    if not rest or rest[0] in " \t":
                        break
                j += 1
            spans.append((start, end))
            pos = end
            i = j + 1
            previous_blank = False
            continue
        if not stripped:
            previous_blank = True
        elif _indent(line) >= 4 and previous_blank and not in_list:
            end = start + len(line)
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= 4):
                end += len(lines[j])
                j += 1
            # Blank lines after the block belong to the text that follows.
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
                end -= len(lines[j])
            spans.append((start, end))
            pos = end
            i = j
            previous_blank = False
            continue
        else:
            if _LIST_ITEM.match(line):
                in_list = True
            elif _indent(line) == 0:
                in_list = False
            previous_blank = False
        pos += len(line)
        i += 1
    return spans


def _inline_spans(text: str, offset: int) -> list[tuple[int, int]]:
    """Code spans on each line of ``text`` (which holds no code block), shifted by ``offset``.

    A scan over the backtick runs rather than a regex: ``(`+).+?\\1`` retries every position of a
    long run of backticks and made a line of them quadratic. Each run is looked at once.
    """
    spans: list[tuple[int, int]] = []
    line_start = 0
    for line in text.split("\n"):
        if "`" in line:
            runs = [(m.start(), m.end()) for m in _BACKTICK_RUN.finditer(line)]
            by_length: dict[int, list[int]] = {}
            for index, (start, end) in enumerate(runs):
                by_length.setdefault(end - start, []).append(index)
            next_of_length = dict.fromkeys(by_length, 0)
            index = 0
            while index < len(runs):
                start, end = runs[index]
                same = by_length[end - start]
                cursor = next_of_length[end - start]
                while cursor < len(same) and same[cursor] <= index:
                    cursor += 1
                next_of_length[end - start] = cursor
                if cursor == len(same):
                    index += 1  # no closer: the backticks are literal text
                    continue
                closer = same[cursor]
                spans.append((offset + line_start + start, offset + line_start + runs[closer][1]))
                index = closer + 1
        line_start += len(line) + 1
    return spans


def _may_hold_blocks(text: str) -> bool:
    return "```" in text or "~~~" in text or "    " in text or "\t" in text


def code_spans(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint ``(start, end)`` character ranges of ``text`` that are code."""
    if "`" not in text and not _may_hold_blocks(text):
        return []
    blocks = _block_spans(text) if _may_hold_blocks(text) else []
    if "`" not in text:
        return blocks
    out: list[tuple[int, int]] = []
    pos = 0
    for start, end in [*blocks, (len(text), len(text))]:
        if "`" in text[pos:start]:
            out.extend(_inline_spans(text[pos:start], pos))
        if start < end:
            out.append((start, end))
        pos = end
    return out


def outside_code(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to each stretch outside code; code is kept byte for byte.

    A stretch is rewritten on its own, so no match can reach across a code span."""
    spans = code_spans(text)
    if not spans:
        return rewrite(text)
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        if pos < start:
            pieces.append(rewrite(text[pos:start]))
        pieces.append(text[start:end])
        pos = end
    if pos < len(text):
        pieces.append(rewrite(text[pos:]))
    return "".join(pieces)


def blank_code(text: str) -> str:
    """``text`` with each code block replaced by a newline and each code span by a space, for
    scans (links, tags) that must not see code."""
    spans = code_spans(text)
    if not spans:
        return text
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        pieces.append(text[pos:start])
        pieces.append("\n" if text[end - 1 : end] == "\n" or end == len(text) else " ")
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)
