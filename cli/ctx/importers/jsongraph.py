"""The ctx JSON graph format: a simple node/edge file for exports from anywhere else.

Two shapes are accepted (documented in docs/json-format.md):

* ``graph.json`` — ``{"nodes": [...], "edges": [...]}`` (or a bare list of nodes);
* ``graph.jsonl`` — one record per line; a record with ``source``/``target`` (or ``src``/``dst``)
  is an edge, any other record is a node.

A node needs ``id``; everything else is optional: ``title``, ``body`` (or ``content``/``text``),
``type``, ``tags``, ``aliases``, ``fields``, ``created``, ``updated``, ``parent``, ``links``,
and the claims relations of seed 000: ``supports`` / ``supported_by`` (lists of ids),
``confidence`` and ``state`` (stored as fields). Unknown scalar keys become fields too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctx.errors import ImportFormatError
from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import parse_date
from ctx.importers.json_exports import read_head

NODE_KEYS = {
    "id", "title", "name", "body", "content", "text", "type", "kind", "tags", "aliases", "fields",
    "created", "updated", "created_at", "updated_at", "parent", "children", "links", "supports",
    "supported_by", "source_path", "position",
}
EDGE_SOURCE_KEYS = ("source", "src", "from")
EDGE_TARGET_KEYS = ("target", "dst", "to")
TITLE_MAX_CHARS = 80


_NODES_LIST = re.compile(r'"nodes"\s*:\s*\[')
_LIST_OF_OBJECTS = re.compile(r"\[\s*\{")


def looks_like_graph(head: str) -> bool:
    """``{"nodes": [...]}`` or a bare list of node objects keyed by ``id``."""
    head = head.lstrip()
    if head.startswith("{"):
        return _NODES_LIST.search(head) is not None
    return _LIST_OF_OBJECTS.match(head) is not None and '"id"' in head


def looks_like_graph_lines(head: str) -> bool:
    """JSON Lines whose first record is a node (``id``) or an edge (``source``/``src``/``from``)."""
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    if not first.startswith("{"):
        return False
    return any(f'"{key}"' in first for key in ("id", *EDGE_SOURCE_KEYS))


class JsonGraphImporter(Importer):
    format = "json"
    family = "json"
    title_key = "title"

    @classmethod
    def detect(cls, path: Path) -> int:
        if not path.is_file():
            return 0
        # Outline exports (Tana, Roam) are JSON too, and so is every tool's config file: claim
        # only files that look like ours.
        if path.suffix.lower() == ".jsonl":
            return 60 if looks_like_graph_lines(read_head(path)) else 0
        if path.suffix.lower() == ".json":
            return 50 if looks_like_graph(read_head(path)) else 0
        return 0

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return looks_like_graph_lines(head())
        return suffix == ".json" and looks_like_graph(head())

    def list_files(self, path: Path) -> list[str]:
        # One graph file; a folder is not one (its name used to be listed as a file to read).
        return [path.name] if path.is_file() else []

    def normalize_key(self, text: str) -> str:
        return text.strip().lower()

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        records = list(_records(info.relpath, text))
        out = ParsedFile()
        seen_edges: set[tuple[str, str, str]] = set()

        def add_edge(src: str, kind: str, dst: str, where: str, position: int | None = None) -> None:
            if (src, kind, dst) in seen_edges:
                return  # the same relation stated from both ends (supports + supported_by)
            seen_edges.add((src, kind, dst))
            out.edges.append(EdgeRecord(src=src, type=kind, target=dst, by_id=True, position=position))

        ids: set[str] = set()
        for where, record in records:
            if not isinstance(record, dict):
                raise ImportFormatError(f"{where}: expected an object, got {type(record).__name__}")
            if any(k in record for k in EDGE_SOURCE_KEYS) and any(k in record for k in EDGE_TARGET_KEYS):
                src = _require_str(record, EDGE_SOURCE_KEYS, where)
                dst = _require_str(record, EDGE_TARGET_KEYS, where)
                kind = str(record.get("type") or "link")
                add_edge(src, kind, dst, where, record.get("position"))
                continue
            node = _node(record, where, info.relpath)
            if node.id in ids:
                raise ImportFormatError(f"{where}: duplicate id {node.id!r}")
            ids.add(node.id)
            out.nodes.append(node)
            parent = record.get("parent")
            if parent:
                node.parent_id = str(parent)
                add_edge(str(parent), "child", node.id, where, node.position)
            for i, child in enumerate(_id_list(record.get("children"), "children", where)):
                add_edge(node.id, "child", child, where, i)
            for i, dst in enumerate(_id_list(record.get("links"), "links", where)):
                add_edge(node.id, "link", dst, where, i)
            for dst in _id_list(record.get("supports"), "supports", where):
                add_edge(node.id, "supports", dst, where)
            for src in _id_list(record.get("supported_by"), "supported_by", where):
                add_edge(src, "supports", node.id, where)
        # Edges may name nodes that are not in the file; they stay as unresolved references.
        # Their src must exist, though, or the edge could never be walked from anywhere.
        dangling = [e for e in out.edges if e.src not in ids]
        for edge in dangling:
            out.warnings.append(
                f"{info.relpath}: edge {edge.type} from unknown node {edge.src!r} ignored"
            )
        out.edges = [e for e in out.edges if e.src in ids]
        return out


def _records(relpath: str, text: str) -> list[tuple[str, Any]]:
    if relpath.lower().endswith(".jsonl"):
        records = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((f"{relpath}:{lineno}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ImportFormatError(f"{relpath}:{lineno}: invalid JSON: {exc.msg}") from None
        return records
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{relpath}:{exc.lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    if isinstance(document, list):
        return _located(relpath, text, "", document)
    if isinstance(document, dict) and ("nodes" in document or "edges" in document):
        nodes = document.get("nodes") or []
        edges = document.get("edges") or []
        if not isinstance(nodes, list) or not isinstance(edges, list):
            raise ImportFormatError(f"{relpath}:1: 'nodes' and 'edges' must be lists")
        return _located(relpath, text, "nodes", nodes) + _located(relpath, text, "edges", edges)
    raise ImportFormatError(f"{relpath}:1: expected {{\"nodes\": [...]}} or a list of nodes")


def _located(relpath: str, text: str, key: str, items: list[Any]) -> list[tuple[str, Any]]:
    """Pair each record with 'file:line' so errors can point at it."""
    lines = _element_lines(text, key, len(items))
    label = f"{key}[{{}}]" if key else "[{}]"
    return [
        (f"{relpath}:{lines[i]} ({label.format(i)})" if lines else f"{relpath} ({label.format(i)})", item)
        for i, item in enumerate(items)
    ]


def _element_lines(text: str, key: str, count: int) -> list[int]:
    """Line numbers where each element of the top-level array ``key`` starts ([] if unsure)."""
    decoder = json.JSONDecoder()
    if key:
        marker = text.find(f'"{key}"')
        if marker < 0:
            return []
        start = text.find("[", marker)
    else:
        start = text.find("[")
    if start < 0:
        return []
    pos, lines = start + 1, []
    try:
        for _ in range(count):
            while text[pos] in " \t\r\n,":
                pos += 1
            lines.append(text.count("\n", 0, pos) + 1)
            _, pos = decoder.raw_decode(text, pos)
    except (ValueError, IndexError):
        return []
    return lines


def _require_str(record: dict[str, Any], keys: tuple[str, ...], where: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int)) and str(value).strip():
            return str(value)
    raise ImportFormatError(f"{where}: '{keys[0]}' must be a non-empty string")


def _id_list(value: Any, key: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int)):
        return [str(value)]
    if isinstance(value, list) and all(isinstance(v, (str, int)) for v in value):
        return [str(v) for v in value]
    raise ImportFormatError(f"{where}: '{key}' must be an id or a list of ids")


def _strings(value: Any, key: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    raise ImportFormatError(f"{where}: '{key}' must be a string or a list of strings")


def _field_values(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    if isinstance(value, str):
        return [value]
    return [json.dumps(value)]


def _node(record: dict[str, Any], where: str, relpath: str) -> NodeRecord:
    node_id = _require_str(record, ("id",), where)
    body = record.get("body", record.get("content", record.get("text", ""))) or ""
    if not isinstance(body, str):
        raise ImportFormatError(f"{where}: 'body' must be a string")
    title = record.get("title") or record.get("name") or _title_from(body) or node_id
    if not isinstance(title, str):
        raise ImportFormatError(f"{where}: 'title' must be a string")
    fields_in = record.get("fields") or {}
    if not isinstance(fields_in, dict):
        raise ImportFormatError(f"{where}: 'fields' must be an object")
    fields = {str(k): _field_values(v) for k, v in fields_in.items()}
    for key, value in record.items():
        if key not in NODE_KEYS and value is not None:
            fields[key] = _field_values(value)
    position = record.get("position")
    return NodeRecord(
        id=node_id,
        title=title.strip(),
        body=body,
        type=str(record.get("type") or record.get("kind") or "note"),
        tags=[t.lstrip("#") for t in _strings(record.get("tags"), "tags", where)],
        fields=fields,
        aliases=_strings(record.get("aliases"), "aliases", where),
        source_path=record.get("source_path") or relpath,
        position=position if isinstance(position, int) else None,
        created=parse_date(record.get("created", record.get("created_at"))),
        updated=parse_date(record.get("updated", record.get("updated_at"))),
    )


def _title_from(body: str) -> str:
    """A claim has only content; its first sentence (cut to a readable length) names it."""
    first = body.strip().split("\n", 1)[0]
    for stop in (". ", "? ", "! "):
        if stop in first:
            first = first.split(stop, 1)[0] + stop.strip()
            break
    if len(first) > TITLE_MAX_CHARS:
        first = first[: TITLE_MAX_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return first
