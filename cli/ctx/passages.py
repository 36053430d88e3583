"""Passages: a node's text cut into pieces of roughly 100–250 tokens, each knowing its heading path.

A node is the unit of the graph (walked, scored, cited); a passage is the unit of text relevance
and of shortening. Real notes are long, and a question is usually answered by one part of one: a
long note enters a context as its most relevant passages rather than its first N tokens.

Splitting is deterministic and works on markdown as written: a heading starts a new passage
(unless the one before is still short), paragraphs, lists and outline items are merged up to
``MAX_TOKENS``, a fenced code block is kept whole however long, and a paragraph too long for one
passage is cut at sentence ends (or list items, or lines). Short notes are one passage.

Passage text is the note's own text with image and attachment links collapsed to a short
placeholder (they cost tokens and answer nothing; in code they stay as written); headings stay in
the text where they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import accumulate
from dataclasses import dataclass

from ctx.code_spans import outside_code
from ctx.tokens import estimate_tokens

# Passages aim between these sizes (cl100k tokens). A heading starts a new passage once the
# current one has MIN_TOKENS; blocks are merged while the passage stays within MAX_TOKENS.
MIN_TOKENS = 100
MAX_TOKENS = 250
# A piece left at the end of a section shorter than this is merged back into the previous one.
TAIL_TOKENS = 40
# Bumped whenever splitting changes, so the next import re-splits every node (store/passages.py).
SPLITTER_VERSION = 2  # 2: attachment links inside code are no longer collapsed

Count = Callable[[str], int]


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
# The same pattern over a whole text, one line at a time (``^`` and ``$`` at each "\n", which is all
# ``str.split("\n")`` splits on; ``.`` never crosses one).
_HEADING_LINES = re.compile(_HEADING.pattern, re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[)\]\"'”’]*\s+")

# Images and attachments: ![alt](target), ![[target]], and links to files that are not notes.
_ATTACHMENT_EXT = (
    r"png|jpe?g|gif|webp|svg|bmp|tiff?|ico|heic|avif|pdf|mp4|mov|webm|mkv|avi|mp3|wav|ogg|m4a|flac|"
    r"zip|gz|tgz|tar|7z|rar|docx?|xlsx?|pptx?|odt|ods|excalidraw|canvas"
)
_MD_IMAGE = re.compile(r"!\[([^\]\n]{0,200})\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_WIKI_EMBED_FILE = re.compile(
    r"!\[\[([^\]\n|#]{1,300}\.(?:" + _ATTACHMENT_EXT + r"))(?:[|#][^\]\n]*)?\]\]", re.I
)
_MD_FILE_LINK = re.compile(
    r"(?<!!)\[([^\]\n]{0,200})\]\((?:[^()\s]*\.(?:" + _ATTACHMENT_EXT + r"))(?:\?[^()\s]*)?(?:\s+\"[^\"\n]*\")?\)",
    re.I,
)
_HTML_IMG = re.compile(r"<img\b[^>\n]{0,2000}>", re.I)
_ALT = re.compile(r"\balt\s*=\s*[\"']([^\"'\n]{0,200})[\"']", re.I)


def _placeholder(kind: str, label: str) -> str:
    label = " ".join(label.split())
    return f"[{kind}: {label}]" if label else f"[{kind}]"


def collapse_attachments(text: str) -> str:
    """Image and attachment links become ``[image: alt]`` / ``[file: name]``: the URL goes.
    Code is left as written: there such a link is the syntax a note teaches."""
    # "<img" in its lowercase only where the text holds a "<" (no character lowercases to one):
    # most texts hold none, and lowercasing each whole body cost a new 100k question ~0.4 ms.
    if "![" not in text and "](" not in text and ("<" not in text or "<img" not in text.lower()):
        return text
    return outside_code(text, _collapse)


def _collapse(text: str) -> str:
    text = _MD_IMAGE.sub(lambda m: _placeholder("image", m.group(1)), text)
    text = _WIKI_EMBED_FILE.sub(lambda m: _placeholder("file", m.group(1).rsplit("/", 1)[-1]), text)
    text = _MD_FILE_LINK.sub(lambda m: _placeholder("file", m.group(1)), text)

    def img(m: re.Match[str]) -> str:
        alt = _ALT.search(m.group(0))
        return _placeholder("image", alt.group(1) if alt else "")

    return _HTML_IMG.sub(img, text)


@dataclass(frozen=True)
class Passage:
    ord: int  # 0-based position in the node
    start: int  # character offsets of the span in the node's body
    end: int
    heading: tuple[str, ...]  # headings the passage sits under (the node's own title excluded)
    text: str  # the span as shown: attachments collapsed, outer blank lines removed
    tokens: int


@dataclass
class _Block:
    start: int
    end: int
    kind: str  # "heading", "fence", "text"
    heading: tuple[str, ...]  # path in force for this block (a heading block: including itself)
    tokens: int = 0


# The first characters a heading or fence line can start with: any other line is neither, and
# is not matched against their patterns (most lines of prose, at every import).
_MARK_FIRST = frozenset(" \t#`~")


def _marked(line: str) -> bool:
    """Whether a non-blank ``line`` is a heading or a fence opening."""
    return line[0] in _MARK_FIRST and (_FENCE.match(line) is not None or _HEADING.match(line) is not None)


def _blocks(body: str, title: str) -> list[_Block]:
    """Headings, fenced code and runs of non-blank lines, each with the heading path in force."""
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []  # (level, text) of the headings in force
    path: tuple[str, ...] = ()  # their texts, as each block records them
    # Each line with its line break, and where each ends in the body. The patterns read a line
    # the same with its break as without: ``$`` matches before a final newline, ``.`` never
    # crosses one, and stripping removes it.
    lines = body.splitlines(keepends=True)
    ends = list(accumulate(map(len, lines)))
    count = len(lines)
    i = 0
    seen_content = False
    while i < count:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        start = ends[i] - len(line)
        if line[0] in _MARK_FIRST:
            fence = _FENCE.match(line)
            if fence:
                marker = fence.group(1)
                closing = marker[0] * len(marker)
                j = i + 1
                while j < count and not lines[j].lstrip().startswith(closing):
                    j += 1
                last = min(j, count - 1)
                blocks.append(_Block(start, ends[last], "fence", path))
                seen_content = True
                i = last + 1
                continue
            heading = _HEADING.match(line)
            if heading:
                level, text = len(heading.group(1)), heading.group(2).strip()
                if not seen_content and not stack and text.lower() == title.strip().lower():
                    pass  # the note's own title as its first heading: the node's block already says it
                else:
                    while stack and stack[-1][0] >= level:
                        stack.pop()
                    stack.append((level, text))
                    path = tuple(t for _, t in stack)
                    blocks.append(_Block(start, ends[i], "heading", path))
                i += 1
                continue
        j = i
        while j + 1 < count:
            nxt = lines[j + 1]
            if not nxt.strip() or _marked(nxt):
                break
            j += 1
        blocks.append(_Block(start, ends[j], "text", path))
        seen_content = True
        i = j + 1
    return blocks


def _split_long(body: str, block: _Block, count: Count) -> list[_Block]:
    """Pieces of an over-long text block: at list items, else sentence ends, else line ends."""
    text = body[block.start : block.end]
    cuts = _cut_points(text)
    pieces: list[_Block] = []
    piece_start = 0
    running = 0
    prev = 0
    for cut in [*cuts, len(text)]:
        size = count(text[prev:cut])
        if running and running + size > MAX_TOKENS:
            pieces.append(_Block(block.start + piece_start, block.start + prev, "text", block.heading, running))
            piece_start, running = prev, 0
        running += size
        prev = cut
    pieces.append(_Block(block.start + piece_start, block.end, "text", block.heading, running))
    out: list[_Block] = []
    for piece in pieces:
        out.extend(_hard_cut(body, piece, count) if piece.tokens > 2 * MAX_TOKENS else [piece])
    return out


def _cut_points(text: str) -> list[int]:
    lines = text.splitlines(keepends=True)
    items = []
    pos = 0
    indents = []
    for line in lines:
        m = _LIST_ITEM.match(line)
        if m:
            indents.append(len(m.group(1).expandtabs(4)))
    top = min(indents) if indents else None
    for line in lines:
        m = _LIST_ITEM.match(line)
        if m and top is not None and len(m.group(1).expandtabs(4)) == top and pos > 0:
            items.append(pos)
        pos += len(line)
    if len(items) >= 2:
        return items
    sentences = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text)]
    if sentences:
        return sentences
    return [m.end() for m in re.finditer(r"\n", text) if m.end() < len(text)]


def _hard_cut(body: str, block: _Block, count: Count) -> list[_Block]:
    """A piece with no usable boundary (one enormous sentence): cut at spaces by size."""
    out = []
    step = MAX_TOKENS * 4  # characters; about MAX_TOKENS tokens of prose
    pos = block.start
    while pos < block.end:
        end = min(block.end, pos + step)
        if end < block.end:
            space = body.rfind(" ", pos + step // 2, end)
            end = space + 1 if space > pos else end
        out.append(_Block(pos, end, "text", block.heading, count(body[pos:end])))
        pos = end
    return out


def split(body: str, title: str, count: Count = estimate_tokens) -> list[Passage]:
    """The passages of a node's body, in order. An empty body has none."""
    if not body.strip():
        return []
    passages: list[Passage] = []
    for group in _groups(_units(body, title, count)):
        content = next((u for u in group if u.kind != "heading"), group[0])
        # A passage that opens with a heading sits under that heading.
        heading = group[0].heading if group[0].kind == "heading" else content.heading
        text = collapse_attachments(body[group[0].start : group[-1].end]).strip("\n")
        if not text.strip():
            continue
        passages.append(
            Passage(len(passages), group[0].start, group[-1].end, heading, text, _tokens(group))
        )
    return passages


def _units(body: str, title: str, count: Count) -> list[_Block]:
    """The body's blocks, each counted, a text block over MAX_TOKENS cut into pieces."""
    units: list[_Block] = []
    for block in _blocks(body, title):
        block.tokens = count(body[block.start : block.end])
        if block.kind == "text" and block.tokens > MAX_TOKENS:
            units.extend(_split_long(body, block, count))
        else:
            units.append(block)
    return units


def _groups(units: list[_Block]) -> list[list[_Block]]:
    """Consecutive units joined into passages: a heading starts a new one once the current one
    holds MIN_TOKENS, none grows past MAX_TOKENS once it holds TAIL_TOKENS, and a short tail
    without a heading joins the passage before it when that stays within 1.2 x MAX_TOKENS."""
    groups: list[list[_Block]] = []
    current: list[_Block] = []
    size = 0
    for unit in units:
        starts_section = unit.kind == "heading"
        if current and (
            (starts_section and size >= MIN_TOKENS)
            or (size + unit.tokens > MAX_TOKENS and size >= TAIL_TOKENS)
        ):
            groups.append(current)
            current, size = [], 0
        current.append(unit)
        size += unit.tokens
    if current:
        if groups and size < TAIL_TOKENS and _tokens(groups[-1]) + size <= MAX_TOKENS * 1.2 and not any(
            u.kind == "heading" for u in current
        ):
            groups[-1].extend(current)
        else:
            groups.append(current)
    return groups


def _tokens(group: list[_Block]) -> int:
    # Each join between blocks costs about one token ("\n\n").
    return sum(u.tokens for u in group) + max(len(group) - 1, 0)


# ---------------------------------------------------------------------------------------------
# Rendering helpers shared by whole-node and passage output.

def _heading_matches(text: str) -> Iterator[re.Match[str]]:
    """``_HEADING_LINES.finditer(text)``, the pattern tried only where a line's first character
    other than a space, among its first four, is "#": it matches only there (``^``, at most three
    spaces, then "#"), and each match is one whole line, so matching at those line starts gives
    the very matches the scan finds. The scan tried the pattern at every character of the text: a
    new 100k question's ~180 bodies and excerpts (~125,000 characters) cost ~0.8 ms that way,
    ~0.35 ms this way."""
    at = text.find("#")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        if at - start <= 3 and text[start:at] == " " * (at - start):
            found = _HEADING_LINES.match(text, start)
            if found is not None:
                yield found
        end = text.find("\n", at)
        if end == -1:
            return
        at = text.find("#", end + 1)


def _heading_lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(line index, level, text) of each heading line outside fenced code."""
    if "```" not in text and "~~~" not in text:
        # No line can open a fence: every heading line counts, found by one scan of the text
        # rather than a match per line (a build renders every candidate's body through here).
        index, counted = 0, 0
        for found in _heading_matches(text):
            index += text.count("\n", counted, found.start())
            counted = found.start()
            yield index, len(found.group(1)), found.group(2).strip()
        return
    in_fence: str | None = None
    for i, line in enumerate(text.split("\n")):
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            if in_fence is None:
                in_fence = marker
            elif line.lstrip().startswith(in_fence[0] * len(in_fence)):
                in_fence = None
            continue
        if in_fence is None:
            m = _HEADING.match(line)
            if m:
                yield i, len(m.group(1)), m.group(2).strip()


def top_heading_level(text: str) -> int | None:
    """The level of the shallowest heading in ``text`` (None without headings)."""
    if "#" not in text:
        return None
    if "```" not in text and "~~~" not in text:
        # Without fences every match of the one scan is a heading line (``_heading_lines``); only
        # its hashes are needed here, not where the line is or its text.
        return min((len(m.group(1)) for m in _heading_matches(text)), default=None)
    return min((level for _, level, _ in _heading_lines(text)), default=None)


NODE_HEADING_LEVEL = 3  # a node's block is "### Title"; its own headings go below it


def nest_headings(text: str, top: int | None = None) -> str:
    """Headings inside a node's text moved below the node's own ``###`` heading: the shallowest
    (``top``, by default the shallowest in ``text``) becomes ``####``, the rest keep their depth
    relative to it (at most ``######``). Code is left alone."""
    if "#" not in text:
        return text
    if "```" not in text and "~~~" not in text:
        return _nest_unfenced(text, top)
    top = top_heading_level(text) if top is None else top
    if top is None:
        return text
    shift = NODE_HEADING_LEVEL + 1 - top
    if shift <= 0:
        return text
    lines = text.split("\n")
    for i, level, heading in list(_heading_lines(text)):
        lines[i] = "#" * min(level + shift, 6) + " " + heading
    return "\n".join(lines)


def _nest_unfenced(text: str, top: int | None) -> str:
    """``nest_headings`` of a text no line of which can open a fence, from one scan: each match of
    ``_HEADING_LINES`` is a whole heading line (``^`` and ``$`` at "\n" only, which is all
    ``str.split("\n")`` splits on, and nothing in the pattern crosses one), so the line is replaced
    where it stands instead of the text split into lines and joined again; the shallowest level
    comes from the same matches. A new question's ~40 bodies were scanned twice (~1 ms at 100k)."""
    found = list(_heading_matches(text))
    if top is None:
        if not found:
            return text
        top = min(len(m.group(1)) for m in found)
    shift = NODE_HEADING_LEVEL + 1 - top
    if shift <= 0 or not found:
        return text
    parts: list[str] = []
    at = 0
    for m in found:
        parts.append(text[at : m.start()])
        parts.append("#" * min(len(m.group(1)) + shift, 6) + " " + m.group(2).strip())
        at = m.end()
    parts.append(text[at:])
    return "".join(parts)
