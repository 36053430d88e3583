"""Roam Research JSON exports: a list of pages, each with a tree of blocks.

Every page and every block becomes a node (ids are Roam's ``uid``s), nested blocks are ``child``
edges, and the block text is scanned for ``[[page]]`` links, ``#tag`` / ``#[[tag]]`` tags,
``((uid))`` block references and ``{{embed: ...}}`` embeds. A block ``Name:: value`` is an
attribute of the page (or block) it sits under: it becomes a field there, and a ``field:Name``
edge to each page the value names. The ``refs`` arrays of the export repeat what the text says,
so the text is the single source of truth.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctx.errors import ImportFormatError
from ctx.importers.base import FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.json_exports import detect_export, export_files
from ctx.importers.dates import parse_date
from ctx.importers.outline_text import (
    add_block,
    attribute_values,
    field_edges,
    parse_attribute,
    reference_edges,
    scan_refs,
)

_DAILY_UID = re.compile(r"^\d{2}-\d{2}-\d{4}$")


def _daily(uid: str) -> float | None:
    """A daily page's day (uid ``MM-DD-YYYY``) as epoch seconds, UTC; None for any other page."""
    if not _DAILY_UID.match(uid):
        return None
    month, day, year = (int(part) for part in uid.split("-"))
    try:
        return dt.datetime(year, month, day, tzinfo=dt.timezone.utc).timestamp()
    except ValueError:  # 02-30-2021: no such day
        return None


_LIST_OF_OBJECTS = re.compile(r"\[\s*(?:\{|\])")
# Keys only Roam writes: a block's text, its uid, its times. A list of {"id", "title", "children"}
# objects is a JSON graph, not a Roam export.
_ROAM_KEYS = ('"string"', '"uid"', '"create-time"', '"edit-time"')


def _looks_like_roam(head: str) -> bool:
    head = head.lstrip()
    # A page's "title" may come after its whole block tree, so block keys count as evidence too.
    return (
        _LIST_OF_OBJECTS.match(head) is not None
        and ('"title"' in head or '"string"' in head)
        and any(key in head for key in _ROAM_KEYS)
    )


class RoamImporter(Importer):
    format = "roam"
    family = "roam"
    title_key = "title"

    @classmethod
    def detect(cls, path: Path) -> int:
        return detect_export(path, _looks_like_roam, 90)

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        return path.suffix.lower() == ".json" and _looks_like_roam(head())

    def list_files(self, path: Path) -> list[str]:
        return export_files(path, _looks_like_roam)

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        try:
            pages = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                f"{info.relpath}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(pages, list):
            raise ImportFormatError(f"{info.relpath}: a Roam export is a list of pages")
        out = ParsedFile()
        for index, page in enumerate(pages):
            if not isinstance(page, dict) or not isinstance(page.get("title"), (str, int, float)) \
                    or not str(page.get("title")).strip():
                out.warnings.append(f"{info.relpath}: page [{index}] has no title; skipped")
                continue
            # One malformed page is a warning naming it; the rest of the export imports.
            page_out = ParsedFile()
            try:
                self._add_page(info.relpath, page, page_out)
            except Exception as exc:  # noqa: BLE001 - any shape the export may take
                out.warnings.append(
                    f"{info.relpath}: page [{index}] cannot be read ({exc.__class__.__name__}); skipped"
                )
                continue
            out.nodes += page_out.nodes
            out.edges += page_out.edges
            out.warnings += page_out.warnings
        return out

    def _add_page(self, relpath: str, page: dict[str, Any], out: ParsedFile) -> None:
        title = str(page["title"]).strip()
        uid = page.get("uid")
        uid = str(uid) if isinstance(uid, (str, int)) else ""
        node = NodeRecord(
            id=uid or title,
            title=title,
            type="journal" if _DAILY_UID.match(uid) else "page",
            source_path=relpath,
            # A daily page is about its day (its uid, MM-DD-YYYY), whenever it was first opened.
            created=_daily(uid) or parse_date(page.get("create-time")) or None,
            updated=parse_date(page.get("edit-time")) or None,
        )
        out.nodes.append(node)
        self._add_children(relpath, node, page.get("children"), out)

    def _add_children(self, relpath: str, parent: NodeRecord, children: Any, out: ParsedFile) -> None:
        # A stack, not recursion: a block tree 500 levels deep is valid JSON and would otherwise
        # end the import at Python's recursion limit. Same order as a depth-first recursion.
        pending: list[tuple[NodeRecord, int, Any]] = []

        def push(owner: NodeRecord, blocks: Any) -> None:
            if isinstance(blocks, list):
                pending.extend((owner, i, b) for i, b in reversed(list(enumerate(blocks))))

        push(parent, children)
        while pending:
            owner, position, block = pending.pop()
            if not isinstance(block, dict):
                continue
            text = _string(block.get("string"))
            uid = block.get("uid")
            node = add_block(
                out,
                owner.id,
                str(uid) if isinstance(uid, (str, int)) and str(uid) else f"{owner.id}#{position}",
                text,
                relpath,
                position,
                created=parse_date(block.get("create-time")) or None,
                updated=parse_date(block.get("edit-time")) or None,
            )
            attribute = parse_attribute(text.split("\n", 1)[0])
            if attribute is not None:
                self._add_attribute(owner, attribute, block.get("children"), out)
            else:
                self._add_refs(node, text, out)
            push(node, block.get("children"))

    def _add_attribute(
        self, owner: NodeRecord, attribute: tuple[str, str], children: Any, out: ParsedFile
    ) -> None:
        name, value = attribute
        values = attribute_values(value)
        if not values and isinstance(children, list):
            # "Themes::" with the values as child blocks.
            for child in children:
                if isinstance(child, dict) and _string(child.get("string")).strip():
                    values.extend(attribute_values(_string(child["string"]).strip()))
        if not values:
            return
        owner.fields.setdefault(name, []).extend(values)
        out.edges.extend(field_edges(owner.id, name, value, self.normalize_key))

    def _add_refs(self, node: NodeRecord, text: str, out: ParsedFile) -> None:
        refs = scan_refs(text)
        node.tags = refs.tags
        out.edges.extend(reference_edges(node.id, refs, self.normalize_key))


def _string(value: Any) -> str:
    """A block's text: a string, a number written as text, or nothing (a list or object is no text)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""
