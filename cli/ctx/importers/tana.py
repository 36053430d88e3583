"""Tana JSON exports: ``{"docs": [...]}``, a flat list of every node in a workspace.

Tana stores structure in the nodes themselves:

* a node's ``children`` are ids; a child whose ``_ownerId`` is this node lives here, any other
  child is a reference to a node that lives elsewhere;
* a *tuple* child (``_docType: tuple``) is a field: its first child names the field (an
  ``attrDef``), the rest are the values;
* supertags sit on the node's *metanode* (``_metaNodeId``) as a tuple whose first child is
  ``SYS_A13`` and whose other children are ``tagDef`` nodes;
* ``<span data-inlineref-node="ID">`` inside a name is an inline reference.

Only content is imported: schema (tag and field definitions), tuples, metanodes, views, searches,
commands, workspace containers and everything under the trash are skipped and counted.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctx.errors import ImportFormatError
from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import parse_date
from ctx.importers.json_exports import detect_export, export_files
from ctx.importers.outline_text import title_from
from ctx.importers.sanitize import short

CONTENT_DOC_TYPES = frozenset({None, "home", "journal", "journalPart", "codeblock", "url"})
# Docs whose descendants are not content either: field values, templates, deleted nodes.
OPAQUE_DOC_TYPES = frozenset({"tuple", "metanode", "tagDef", "attrDef", "viewDef", "search"})
SUPERTAG_FIELD = "SYS_A13"
# Workspace containers are named <workspace id>_SCHEMA, _TRASH, _STASH, ...
_CONTAINER = re.compile(r"_[A-Z][A-Z_]{3,}$")
_INLINE_NODE = re.compile(r'<span data-inlineref-node="([^"]+)"\s*>\s*</span>')
_INLINE_DATE = re.compile(r'<span data-inlineref-date="([^"]*)"\s*>\s*</span>')
_TAG = re.compile(r"<[^<>]+>")  # not "[^>]+": each "<" without ">" scanned to the end (quadratic)
TYPE_BY_DOC_TYPE = {"home": "page", "journal": "journal", "journalPart": "journal"}


# A workspace export is an object holding a list of docs, each an object with an id and props.
# Any JSON mentioning "docs" is not one: package.json has a "docs" script.
_DOCS_LIST = re.compile(r'"docs"\s*:\s*\[\s*(?:\]|\{\s*"(?:id|props)"\s*:)')


def _looks_like_tana(head: str) -> bool:
    if not head.lstrip().startswith("{"):
        return False
    # The docs list may start after a long "workspaces" blob, beyond the head.
    return bool(_DOCS_LIST.search(head)) or ('"formatVersion"' in head and '"lastTxid"' in head)


class TanaImporter(Importer):
    format = "tana"
    family = "tana"
    title_key = "name"

    @classmethod
    def detect(cls, path: Path) -> int:
        return detect_export(path, _looks_like_tana, 90)

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        return path.suffix.lower() == ".json" and _looks_like_tana(head())

    def list_files(self, path: Path) -> list[str]:
        return export_files(path, _looks_like_tana)

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportFormatError(
                f"{info.relpath}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        docs = document.get("docs") if isinstance(document, dict) else None
        if not isinstance(docs, list):
            raise ImportFormatError(f"{info.relpath}: not a Tana export (no 'docs' list)")
        return _Workspace(info.relpath, docs).records()


# Inline references inside inline references are followed this deep; a longer chain (or a
# crafted one thousands long) shows the ids beyond it instead of recursing without bound.
INLINE_DEPTH = 16
# props whose values steer the import, and the types each may have; anything else is dropped
# with a warning, so a list where a string belongs cannot reach a set lookup or a regex.
PROP_TYPES: dict[str, tuple[type, ...]] = {
    "_docType": (str,),
    "_ownerId": (str,),
    "_metaNodeId": (str,),
    "name": (str, int, float),
    "description": (str,),
    "created": (int, float, str),
}


def _clean_doc(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """(doc, props) with every value the import reads of the type it expects; and whether
    anything had to be dropped (a ``props`` that is a list, a child id that is an object)."""
    props, props_changed = _clean_props(doc.get("props"))
    children, children_changed = _clean_list(doc.get("children"), lambda c: isinstance(c, str))
    stamps, stamps_changed = _clean_list(
        doc.get("modifiedTs"), lambda t: isinstance(t, (int, float)) and not isinstance(t, bool)
    )
    changed = props_changed or children_changed or stamps_changed
    return {"id": doc["id"], "children": children, "modifiedTs": stamps}, props, changed


def _clean_props(props: Any) -> tuple[dict[str, Any], bool]:
    """The props the import reads, each of its expected type; and whether any was dropped."""
    if props is None:
        return {}, False
    if not isinstance(props, dict):
        return {}, True
    changed = False
    clean: dict[str, Any] = {}
    for key, value in props.items():
        wanted = PROP_TYPES.get(key)
        if wanted is None:
            continue
        if value is None or isinstance(value, bool) or not isinstance(value, wanted):
            changed = changed or value is not None
            continue
        clean[key] = str(value) if key == "name" else value
    return clean, changed


def _clean_list(values: Any, keep: Callable[[Any], bool]) -> tuple[list[Any], bool]:
    """The items of a list value that ``keep`` accepts (a missing value is an empty list); and
    whether anything was dropped."""
    values = values or []
    if not isinstance(values, list):
        return [], True
    clean = [v for v in values if keep(v)]
    return clean, len(clean) != len(values)


class _Workspace:
    def __init__(self, relpath: str, docs: list[Any]) -> None:
        self.relpath = relpath
        self.docs: dict[str, dict[str, Any]] = {}
        self.props: dict[str, dict[str, Any]] = {}
        self.malformed: list[str] = []  # docs with values of the wrong type (dropped or all of it)
        for index, doc in enumerate(docs):
            if not isinstance(doc, dict) or not isinstance(doc.get("id"), str) or not doc["id"]:
                self.malformed.append(f"docs[{index}]")
                continue
            clean, props, changed = _clean_doc(doc)
            if changed:
                self.malformed.append(f"docs[{index}] (id {short(doc['id'])})")
            self.docs[doc["id"]] = clean
            self.props[doc["id"]] = props
        self._kind: dict[str, str] = {}  # id -> "content" | "system" | "trash"
        self._text: dict[str, str] = {}

    def kind(self, node_id: str) -> str:
        """Whether a doc is content, or skipped as "system" or "trash"."""
        verdict = self._inherited(node_id)
        props = self.props.get(node_id, {})
        # Containers and system docs are not content themselves, though what they hold may be.
        if verdict == "content" and (
            node_id.startswith("SYS_")
            or _CONTAINER.search(node_id)
            or props.get("_docType") not in CONTENT_DOC_TYPES
            or not props.get("name")
        ):
            return "system"
        return verdict

    def _inherited(self, node_id: str) -> str:
        """What the owner chain makes a doc: under the trash, under schema/tuples, or content."""
        chain: list[str] = []
        current: str | None = node_id
        verdict = "content"
        while current is not None:
            known = self._kind.get(current)
            if known is not None:
                verdict = known
                break
            chain.append(current)
            if current.endswith("_TRASH"):
                verdict = "trash"
                break
            props = self.props.get(current)
            if props is None:
                break  # the owner is outside the file
            if props.get("_docType") in OPAQUE_DOC_TYPES or current.endswith("_SCHEMA"):
                verdict = "system"
                break
            owner = props.get("_ownerId")
            current = owner if isinstance(owner, str) and owner not in chain else None
        for visited in chain:
            self._kind[visited] = verdict
        return verdict

    def text(self, node_id: str, depth: int = 0) -> str:
        """A doc's name as plain text, with inline references replaced by the names they point at
        (to INLINE_DEPTH levels; deeper references show their ids)."""
        cached = self._text.get(node_id)
        if cached is not None:
            return cached
        name = str(self.props.get(node_id, {}).get("name") or "")
        if depth >= INLINE_DEPTH:
            return name if "<" not in name else html.unescape(_TAG.sub("", name))
        self._text[node_id] = ""  # guards against references that cycle back
        if "<" in name or "&" in name:
            name = _INLINE_NODE.sub(lambda m: self.text(m.group(1), depth + 1) or m.group(1), name)
            name = _INLINE_DATE.sub(_inline_date, name)
            name = html.unescape(_TAG.sub("", name))
        self._text[node_id] = name
        return name

    def supertags(self, props: dict[str, Any]) -> list[str]:
        meta = self.docs.get(props.get("_metaNodeId") or "")
        if meta is None:
            return []
        names: list[str] = []
        for tuple_id in meta.get("children") or ():
            members = self.docs.get(tuple_id, {}).get("children") or ()
            if members and members[0] == SUPERTAG_FIELD:
                names.extend(self.text(m) for m in members[1:] if m in self.docs)
        return [n for n in names if n]

    def records(self) -> ParsedFile:
        out = ParsedFile()
        if self.malformed:
            out.warnings.append(
                f"{self.relpath}: {len(self.malformed)} docs with values of the wrong type, dropped or"
                f" read in part: {', '.join(self.malformed[:5])}{', ...' if len(self.malformed) > 5 else ''}"
            )
        skipped = {"system": 0, "trash": 0}
        missing: set[str] = set()
        for node_id, doc in self.docs.items():
            verdict = self.kind(node_id)
            if verdict != "content":
                skipped[verdict] += 1
                continue
            # One node that cannot be read is a warning naming it; the rest imports.
            node_out = ParsedFile()
            try:
                self._add_node(node_id, doc, node_out, missing)
            except Exception as exc:  # noqa: BLE001 - any shape the export may take
                out.warnings.append(f"{self.relpath}: node {short(node_id)} cannot be read ({exc.__class__.__name__}); skipped")
                continue
            out.nodes += node_out.nodes
            out.edges += node_out.edges
        if skipped["system"] or skipped["trash"]:
            out.warnings.append(
                f"{self.relpath}: skipped {skipped['system']} system and {skipped['trash']} trashed nodes"
            )
        if missing:
            out.warnings.append(
                f"{self.relpath}: {len(missing)} child ids point to nodes missing from the export"
            )
        return out

    def _add_node(
        self, node_id: str, doc: dict[str, Any], out: ParsedFile, missing: set[str]
    ) -> None:
        props = self.props[node_id]
        text = self.text(node_id)
        description = props.get("description")
        body = text if "\n" in text or len(text) > 80 else ""
        if isinstance(description, str) and description.strip():
            body = f"{body}\n\n{description.strip()}".strip() if body else description.strip()
        tags = self.supertags(props)
        owner = props.get("_ownerId")
        node = NodeRecord(
            id=node_id,
            title=title_from(text) or node_id,
            body=body,
            type=tags[0].lower() if tags else TYPE_BY_DOC_TYPE.get(props.get("_docType") or "", "node"),
            tags=tags,
            source_path=self.relpath,
            parent_id=owner if isinstance(owner, str) and owner in self.docs else None,
            created=parse_date(props.get("created")) or None,
            updated=parse_date(max(doc.get("modifiedTs") or [0])) or None,
        )
        out.nodes.append(node)
        self._add_children(node, doc, out, missing)
        raw_name = props.get("name")
        if isinstance(raw_name, str) and "data-inlineref-node" in raw_name:
            for target in dict.fromkeys(_INLINE_NODE.findall(raw_name)):
                out.edges.append(EdgeRecord(node_id, "link", target, by_id=True))

    def _add_children(self, node: NodeRecord, doc: dict[str, Any], out: ParsedFile, missing: set[str]) -> None:
        """A node's children: its fields (tuples), its own content children (in order) and
        references to content owned elsewhere (links)."""
        position = 0
        for child_id in doc.get("children") or ():
            child = self.docs.get(child_id)
            if child is None:
                missing.add(child_id)
                continue
            child_props = self.props[child_id]
            if child_props.get("_docType") == "tuple":
                self._add_field(node, child, out)
                continue
            if self.kind(child_id) != "content":
                continue
            if child_props.get("_ownerId") == node.id:
                out.edges.append(EdgeRecord(node.id, "child", child_id, by_id=True, position=position))
                position += 1
            else:
                out.edges.append(EdgeRecord(node.id, "link", child_id, by_id=True))

    def _add_field(self, node: NodeRecord, tuple_doc: dict[str, Any], out: ParsedFile) -> None:
        members = [m for m in tuple_doc.get("children") or () if isinstance(m, str)]
        if len(members) < 2 or members[0].startswith("SYS_") or members[0] not in self.docs:
            return
        name = self.text(members[0]).strip()
        if not name:
            return
        values = []
        for value_id in members[1:]:
            if value_id not in self.docs:
                continue
            value = self.text(value_id).strip()
            if value:
                values.append(value)
            if self.kind(value_id) == "content":
                out.edges.append(EdgeRecord(node.id, f"field:{name}", value_id, by_id=True))
        if values:
            node.fields.setdefault(name, []).extend(values)


def _inline_date(match: re.Match[str]) -> str:
    try:
        spec = json.loads(html.unescape(match.group(1)))
    except json.JSONDecodeError:
        return ""
    return str(spec.get("dateTimeString", "")) if isinstance(spec, dict) else ""
