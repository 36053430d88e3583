"""Logseq graph folders: ``pages/`` and ``journals/`` of markdown outlines.

Each file is a page; each bullet (``- text``, nested by indentation) is a block node under it,
linked by ``child`` edges in outline order. ``key:: value`` lines are properties: before the first
block they belong to the page, under a block to that block (``id::`` names the block, so
``((uuid))`` references and embeds can find it). Page names come from ``title::``, else the file
name, where ``a___b`` and ``a%2Fb`` both mean the namespace page ``a/b``; namespace parents get a
``child`` edge to their sub-pages (and a stub page when the parent has no file). Journal pages are
dated from their file name. Org-mode files are not parsed; they are counted in one warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import parse_date
from ctx.importers.outline_text import (
    add_block,
    attribute_values,
    field_edges,
    parse_attribute,
    reference_edges,
    scan_refs,
)

if TYPE_CHECKING:
    from ctx.store.protocols import SourceRecords

MARKDOWN_SUFFIXES = (".md", ".markdown")
GRAPH_FOLDERS = ("pages", "journals")
# Properties that steer Logseq itself rather than describe the content.
HIDDEN_PROPERTIES = frozenset({"id", "collapsed", "heading", "background-color", "title", "alias"})
_BULLET = re.compile(r"^([ \t]*)-(?:[ \t]+(.*))?$")  # Logseq writes every block with "-"
_JOURNAL_NAME = re.compile(r"^(\d{4})[_-](\d{2})[_-](\d{2})$")
_FRONT_MATTER_LINE = re.compile(r"^([A-Za-z][\w-]*):\s*(.*)$")


@dataclass
class _Block:
    width: int  # indentation of the bullet, tabs counted as 4 columns
    content_col: int
    lines: list[str]
    paragraph: bool  # started by a plain line rather than a bullet
    properties: list[tuple[str, str]] = field(default_factory=list)
    children: list[_Block] = field(default_factory=list)
    in_fence: bool = False


class LogseqImporter(Importer):
    format = "logseq"
    family = "markdown"

    def __init__(self) -> None:
        self.org_files: list[str] = []

    @classmethod
    def detect(cls, path: Path) -> int:
        if not path.is_dir():
            return 0
        if (path / "logseq" / "config.edn").is_file():
            return 95
        return 90 if all((path / name).is_dir() for name in GRAPH_FOLDERS) else 0

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        return path.suffix.lower() in MARKDOWN_SUFFIXES

    def list_files(self, path: Path) -> list[str]:
        files, org = [], []
        for folder in GRAPH_FOLDERS:
            root = path / folder
            if not root.is_dir():
                continue
            for file in root.rglob("*"):
                # Not is_file(): a FIFO or a symlink out of the graph is listed so that the
                # import can skip it with a warning naming it (it is never opened).
                if file.is_dir():
                    continue
                rel = file.relative_to(path).as_posix()
                if file.suffix.lower() in MARKDOWN_SUFFIXES:
                    files.append(rel)
                elif file.suffix.lower() == ".org":
                    org.append(rel)
        self.org_files = sorted(org)
        return sorted(files)

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        out = ParsedFile()
        front, text = _split_front_matter(text)
        page_properties, blocks = _outline(text)
        properties = front + page_properties
        page = self._page(info, dict((k.lower(), v) for k, v in properties), out)
        out.nodes.append(page)
        self._apply_properties(page, properties, out)
        page.tags = _unique_tags(page.tags)
        self._add_blocks(info.relpath, page, page.id, "", blocks, out)
        return out

    def _page(self, info: FileInfo, properties: dict[str, str], out: ParsedFile) -> NodeRecord:
        stem = Path(info.relpath).stem
        journal = _JOURNAL_NAME.match(stem) if info.relpath.startswith("journals/") else None
        day = None
        if journal:
            try:
                day = dt.date(*(int(g) for g in journal.groups()))
            except ValueError:  # 2021_02_30.md: no such day; still a page, just not dated
                out.warnings.append(f"{info.relpath}: journal file names no calendar day; imported as a page")
        name = unquote(stem.replace("___", "/"))
        if day is not None:
            name = _journal_title(day)
        title = properties.get("title", "").strip() or name
        node = NodeRecord(
            id=title,
            title=title,
            type="journal" if day else "page",
            source_path=info.relpath,
            aliases=[a for a in _list_value(properties.get("alias", "")) if a],
        )
        if day is not None:
            node.created = dt.datetime(day.year, day.month, day.day, tzinfo=dt.timezone.utc).timestamp()
            node.keys.append((day.isoformat(), "name", 15))
        if title.lower() != name.lower():
            node.keys.append((self.normalize_key(name), "name", 15))
        return node

    def _apply_properties(
        self, node: NodeRecord, properties: list[tuple[str, str]], out: ParsedFile
    ) -> None:
        for name, value in properties:
            key = name.lower()
            if key == "tags":
                node.tags.extend(_list_value(value))
                continue
            if key in ("created-at", "created_at", "updated-at", "updated_at"):
                stamp = parse_date(value.strip()) if value.strip().isdigit() else None
                if stamp is not None:
                    setattr(node, "created" if key.startswith("created") else "updated", stamp)
                continue
            if key in HIDDEN_PROPERTIES:
                continue
            values = attribute_values(value)
            if not values:
                continue
            node.fields.setdefault(name, []).extend(values)
            out.edges.extend(field_edges(node.id, name, value, self.normalize_key))

    def _add_blocks(
        self,
        relpath: str,
        parent: NodeRecord,
        page_id: str,
        path: str,
        blocks: list[_Block],
        out: ParsedFile,
    ) -> None:
        # A stack, not recursion: an outline nested a thousand levels deep is a valid page, and
        # would otherwise end the import at Python's recursion limit. Nodes come out in the same
        # order as a depth-first recursion (the first child before its siblings).
        pending: list[tuple[NodeRecord, str, int, _Block]] = [
            (parent, path, position, block) for position, block in reversed(list(enumerate(blocks)))
        ]
        # A journal's blocks were written on its day (unless a block says otherwise): that is
        # the date a context shows beside them, not the file's modification time.
        day = parent.created if parent.type == "journal" else None
        while pending:
            owner, owner_path, position, block = pending.pop()
            block_path = f"{owner_path}.{position}" if owner_path else str(position)
            text = "\n".join(block.lines).strip()
            shown = text or "\n".join(f"{k}:: {v}" for k, v in block.properties if k.lower() != "id")
            block_id = next((v.strip().lower() for k, v in block.properties if k.lower() == "id"), "")
            node_id = block_id or f"{page_id}#{_short_path(block_path)}"
            node = add_block(out, owner.id, node_id, shown, relpath, position)
            self._apply_properties(node, block.properties, out)
            if day is not None and node.created is None:
                node.created = day
            self._add_refs(node, text, out)
            pending.extend((node, block_path, i, child) for i, child in reversed(list(enumerate(block.children))))

    def _add_refs(self, node: NodeRecord, text: str, out: ParsedFile) -> None:
        refs = scan_refs(text)
        node.tags = _unique_tags(node.tags + refs.tags)
        # Logseq writes block uuids in lower case; references sometimes do not.
        refs.block_refs = [r.lower() for r in refs.block_refs]
        refs.embedded_blocks = [r.lower() for r in refs.embedded_blocks]
        out.edges.extend(reference_edges(node.id, refs, self.normalize_key))

    def finalize(self, source: SourceRecords) -> ParsedFile:
        """Namespace parents: ``a/b`` is a child page of ``a``, which exists even without a file."""
        out = ParsedFile()
        if self.org_files:
            out.warnings.append(
                f"{len(self.org_files)} org-mode pages skipped (only markdown is imported): "
                + ", ".join(self.org_files[:5])
                + (", ..." if len(self.org_files) > 5 else "")
            )
        # A namespace parent may be any page that answers to the name, through an alias too.
        pages: dict[str, str] = {}
        titles: dict[str, str] = {}
        for key, kind, node_id in source.keys(("title", "alias", "name"), node_types=("page", "journal")):
            pages.setdefault(key, node_id)
            if kind == "title":
                titles[key] = node_id
        for title in sorted(t for t in titles if "/" in t):
            child_id = titles[title]
            while "/" in title:
                parent_title = title.rsplit("/", 1)[0]
                known = pages.get(parent_title)
                created = known is None
                parent_id = _stub_title(parent_title, child_id) if known is None else known
                if created:
                    pages[parent_title] = parent_id
                    out.nodes.append(NodeRecord(id=parent_id, title=parent_id, type="page"))
                out.edges.append(EdgeRecord(parent_id, "child", child_id, by_id=True))
                if not created:
                    break
                title, child_id = parent_title, parent_id
        return out


PATH_ID_MAX_CHARS = 200


def _short_path(block_path: str) -> str:
    """A block's outline path (``0.3.1``) as its id suffix; a path from an outline nested hundreds
    deep is shortened to its hash so ids stay small (every level's id would otherwise repeat
    all the levels above it: quadratic in the depth)."""
    if len(block_path) <= PATH_ID_MAX_CHARS:
        return block_path
    import hashlib

    return "~" + hashlib.blake2b(block_path.encode(), digest_size=8).hexdigest()


def _stub_title(title: str, child_id: str) -> str:
    """The namespace parent's name with its original capitalisation, taken from the child."""
    return child_id[: len(title)] if child_id.lower().startswith(title) else title


def _outline(text: str) -> tuple[list[tuple[str, str]], list[_Block]]:
    """Page properties and the block tree of a Logseq markdown page."""
    reader = _OutlineReader()
    for raw in text.split("\n"):  # not splitlines(): U+2028 or a form feed is text in a block
        reader.line(raw.expandtabs(4))
    return reader.page_properties, reader.roots


class _OutlineReader:
    """Reads a page a line at a time into page properties and a tree of blocks."""

    def __init__(self) -> None:
        self.page_properties: list[tuple[str, str]] = []
        self.roots: list[_Block] = []
        self.stack: list[_Block] = []
        self.current: _Block | None = None
        self.previous_blank = False

    def line(self, line: str) -> None:
        stripped = line.strip()
        current = self.current
        if current is not None and current.in_fence:
            current.lines.append(_dedent(line, current.content_col))
            if stripped.startswith("```"):
                current.in_fence = False
            return
        bullet = _BULLET.match(line)
        if bullet is None and current is None and not self.roots and self._before_blocks(line, stripped):
            return
        if bullet is not None:
            block = _bullet_block(bullet)
        elif not stripped:
            if current is not None:
                current.lines.append("")
            self.previous_blank = True
            return
        else:
            width = len(line) - len(line.lstrip())
            if current is not None and (width > current.width or (current.paragraph and not self.previous_blank)):
                _continue_block(current, line, stripped)
                self.previous_blank = False
                return
            block = _Block(width, width, [stripped], paragraph=True)
        self.previous_blank = False
        self._open(block)

    def _before_blocks(self, line: str, stripped: str) -> bool:
        """Whether a line before the first block is used up: a page property or a blank line."""
        attribute = parse_attribute(line)
        if attribute is not None:
            self.page_properties.append(attribute)
            return True
        return not stripped

    def _open(self, block: _Block) -> None:
        """A new block, under the nearest open block indented less than it."""
        stack = self.stack
        while stack and stack[-1].width >= block.width:
            stack.pop()
        (stack[-1].children if stack else self.roots).append(block)
        stack.append(block)
        self.current = block
        first = block.lines[0].strip() if block.lines else ""
        block.in_fence = first.startswith("```") and first.count("```") == 1


def _bullet_block(bullet: re.Match[str]) -> _Block:
    width = len(bullet.group(1))
    first_line = bullet.group(2) or ""
    block = _Block(width, width + 2, [first_line], paragraph=False)
    attribute = parse_attribute(first_line)
    if attribute is not None and attribute[1]:
        # "- type:: [[Command]]": a block made of properties, which Logseq shows as such.
        block.properties.append(attribute)
        block.lines = []
    return block


def _continue_block(block: _Block, line: str, stripped: str) -> None:
    """A line of an open block: one of its properties, or more of its text."""
    attribute = parse_attribute(line)
    if attribute is not None and attribute[1]:
        block.properties.append(attribute)
    else:
        block.lines.append(_dedent(line, block.content_col))
        block.in_fence = stripped.startswith("```") and stripped.count("```") == 1


def _dedent(line: str, column: int) -> str:
    return line[column:] if not line[:column].strip() else line.lstrip()


def _split_front_matter(text: str) -> tuple[list[tuple[str, str]], str]:
    """YAML-ish ``---`` front matter (older Logseq pages), read as flat ``key: value`` pairs."""
    if not text.startswith("---"):
        return [], text
    end = text.find("\n---", 3)
    if end < 0:
        return [], text
    pairs = []
    for line in text[3:end].splitlines():
        match = _FRONT_MATTER_LINE.match(line.strip())
        if match:
            pairs.append((match.group(1), match.group(2).strip().strip("\"'")))
    rest = text[end + 4 :]
    return pairs, rest.split("\n", 1)[1] if "\n" in rest else ""


def _list_value(value: str) -> list[str]:
    """``[[a]], b, #c`` -> ["a", "b", "c"]: Logseq's comma-separated page lists."""
    refs = scan_refs(value)
    if refs.links or refs.tags:
        return refs.links + refs.tags
    return [part.strip().lstrip("#") for part in value.split(",") if part.strip()]


def _unique_tags(tags: list[str]) -> list[str]:
    """One tag node per name whatever its case: the first spelling wins."""
    return list({t.lower(): t for t in reversed(tags) if t}.values())[::-1]


def _journal_title(day: dt.date) -> str:
    """Logseq's default journal title format, ``MMM do, yyyy`` (``Feb 7th, 2021``)."""
    suffix = "th" if 11 <= day.day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10, "th")
    return f"{day.strftime('%b')} {day.day}{suffix}, {day.year}"
