"""The inline syntax Logseq and Roam share: page links, tags, block references, embeds, attributes.

Both outliners write ``[[page]]``, ``#tag``, ``#[[multi word tag]]``, ``((block-id))`` and
``{{embed ...}}`` inside block text, and ``name:: value`` for attributes. Parsing it in one place
keeps the two importers agreeing on what counts as a link.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ctx.code_spans import blank_code
from ctx.importers.base import EdgeRecord, NodeRecord, ParsedFile

TITLE_MAX_CHARS = 80

# The embed's argument stops at "}}" or at the next "{": ".*?" let every unclosed "{{embed [[a"
# scan to the end of the line, quadratic when repeated.
_EMBED = re.compile(
    r"\{\{\s*(?:\[\[)?embed(?:-path)?(?:\]\])?\s*:?\s*((?:[^{}\n]|\}(?!\}))*)\}\}", re.IGNORECASE
)
_PAGE_LINK = re.compile(r"(?<!#)\[\[([^\[\]]+?)\]\]")
_TAG_BRACKETED = re.compile(r"(?<![\w#])#\[\[([^\[\]]+?)\]\]")
# "#10594" in a changelog is an issue number, not a tag, so all-digit words are left out.
_TAG_WORD = re.compile(r"(?<![\w#/&])#(?![0-9]+(?![^\s#\[\]()\"',;.!?:{}]))([^\s#\[\]()\"',;.!?:{}]+(?:[.:][^\s#\[\]()\"',;.!?:{}]+)*)")
_BLOCK_REF = re.compile(r"\(\(([A-Za-z0-9_-]{6,64})\)\)")
_ATTRIBUTE = re.compile(r"^\s*([^\s:`\[\]][^:`\[\]]*?)::(?:\s+(.*))?\s*$")


@dataclass
class InlineRefs:
    links: list[str] = field(default_factory=list)  # page names, as written
    tags: list[str] = field(default_factory=list)
    block_refs: list[str] = field(default_factory=list)  # block ids
    embedded_pages: list[str] = field(default_factory=list)
    embedded_blocks: list[str] = field(default_factory=list)


def scan_refs(text: str) -> InlineRefs:
    """Every reference in ``text``, each kind in order of appearance and without repeats."""
    refs = InlineRefs()
    if "[[" not in text and "#" not in text and "((" not in text:
        return refs  # most blocks are plain prose; skip the regex work
    # Code is an example, not a reference: `[[A]]` in backticks links nowhere.
    text = blank_code(text)

    def embed(match: re.Match[str]) -> str:
        inner = match.group(1)
        refs.embedded_blocks.extend(_BLOCK_REF.findall(inner))
        refs.embedded_pages.extend(_PAGE_LINK.findall(inner))
        return " "

    text = _EMBED.sub(embed, text)

    def bracketed_tag(match: re.Match[str]) -> str:
        refs.tags.append(match.group(1).strip())
        return " "

    text = _TAG_BRACKETED.sub(bracketed_tag, text)
    refs.links = [name.strip() for name in _PAGE_LINK.findall(text) if name.strip()]
    refs.block_refs = _BLOCK_REF.findall(text)
    refs.tags.extend(_TAG_WORD.findall(_PAGE_LINK.sub(" ", text)))
    for name in ("links", "block_refs", "embedded_pages", "embedded_blocks"):
        setattr(refs, name, list(dict.fromkeys(getattr(refs, name))))
    # Tags name one shared tag node whatever their case, so #AI and #ai are one tag.
    refs.tags = list({tag.lower(): tag for tag in reversed(refs.tags)}.values())[::-1]
    return refs


def parse_attribute(line: str) -> tuple[str, str] | None:
    """``("Author", "[[Yuval Noah Harari]]")`` for ``Author:: [[Yuval Noah Harari]]``, else None."""
    if "::" not in line:
        return None
    match = _ATTRIBUTE.match(line)
    if match is None:
        return None
    return match.group(1).strip(), (match.group(2) or "").strip()


def attribute_values(value: str) -> list[str]:
    """A value made only of page references is a list of those pages; anything else is one value."""
    refs = scan_refs(value)
    names = refs.links + refs.tags
    if names:
        leftover = _PAGE_LINK.sub("", _TAG_BRACKETED.sub("", value))
        leftover = _TAG_WORD.sub("", leftover).replace(",", "").strip()
        if not leftover:
            return names
    return [value] if value else []


def add_block(
    out: ParsedFile,
    parent_id: str,
    node_id: str,
    text: str,
    relpath: str,
    position: int,
    *,
    created: float | None = None,
    updated: float | None = None,
) -> NodeRecord:
    """A block node under ``parent_id`` at ``position``, with the ``child`` edge that places it.

    A block's first line names it, but it is no link target: ``[[X]]`` means the page X, never a
    block that happens to start with "X".
    """
    node = NodeRecord(
        id=node_id,
        title=title_from(text) or "(empty block)",
        body=text,
        type="block",
        title_is_key=False,
        source_path=relpath,
        parent_id=parent_id,
        position=position,
        created=created,
        updated=updated,
    )
    out.nodes.append(node)
    out.edges.append(EdgeRecord(parent_id, "child", node.id, by_id=True, position=position))
    return node


def title_from(text: str) -> str:
    """A block's name: its first line, without heading marks, cut to a readable length."""
    first = text.strip().split("\n", 1)[0].lstrip("#").strip()
    if len(first) > TITLE_MAX_CHARS:
        first = first[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return first


def reference_edges(node_id: str, refs: InlineRefs, key: Callable[[str], str]) -> list[EdgeRecord]:
    """``link`` edges to pages (by name), ``ref`` and ``embed`` edges to blocks (by id)."""
    edges = [
        EdgeRecord(node_id, "link", key(name), position=position)
        for position, name in enumerate(refs.links)
    ]
    edges += [EdgeRecord(node_id, "ref", block_id, by_id=True) for block_id in refs.block_refs]
    edges += [EdgeRecord(node_id, "embed", block_id, by_id=True) for block_id in refs.embedded_blocks]
    edges += [EdgeRecord(node_id, "embed", key(name)) for name in refs.embedded_pages]
    return edges


def field_edges(owner_id: str, name: str, value: str, key: Callable[[str], str]) -> list[EdgeRecord]:
    """``field:<name>`` edges from the owner to every page an attribute value names."""
    refs = scan_refs(value)
    return [
        EdgeRecord(owner_id, f"field:{name}", key(target))
        for target in dict.fromkeys(refs.links + refs.tags)
    ]
