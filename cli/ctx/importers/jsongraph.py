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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ctx.errors import ImportFormatError
from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import parse_date
from ctx.importers.json_exports import read_head
from ctx.importers.json_stream import document_records
from ctx.importers.sanitize import short

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
    streams = True
    family = "json"
    title_key = "title"
    # 2: a date with a zone is its written day (4fbbb30; it was converted to UTC), as Markdown's.
    reading = 2

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
        """The whole file's records at once (for callers without a graph to write into)."""
        out = ParsedFile()
        ids: set[str] = set()
        for batch in self.parse_stream(info, [text], ids.intersection):
            ids.update(node.id for node in batch.nodes)
            out.nodes.extend(batch.nodes)
            out.edges.extend(batch.edges)
            out.warnings.extend(batch.warnings)
        # The rules the store applies to a streamed file when it ends (ctx.store.streamed).
        relations: set[tuple[str, str, str]] = set()
        first = []
        for edge in out.edges:
            if (edge.src, edge.type, edge.target) not in relations:
                relations.add((edge.src, edge.type, edge.target))
                first.append(edge)
        dangling = [(e.type, e.src) for e in first if e.src not in ids]
        out.edges = [e for e in first if e.src in ids]
        out.warnings.extend(dangling_warnings(info.relpath, dangling[:DANGLING_LISTED], len(dangling)))
        return out

    def parse_stream(
        self, info: FileInfo, text: Iterable[str], known: Callable[[list[str]], set[str]]
    ) -> Iterator[ParsedFile]:
        """The file's records a batch at a time, from its text in pieces. ``known`` tells which
        ids earlier batches already had: a record repeating one is skipped with a warning.
        Edges are as stated (the same relation may come twice; an edge may start at a node the
        file lacks): whoever writes the batches keeps the first of each and drops the others."""
        relpath = info.relpath
        problems: list[str] = []
        batch: list[_Entry] = []
        chars = 0
        for where, record in _records(relpath, text, problems):
            batch.extend(problems)
            problems.clear()
            # One bad record is a warning naming it; the rest of the file imports.
            try:
                node, edges = _record(record, where, relpath)
            except ImportFormatError as exc:
                batch.append(f"{exc}; record skipped")
                continue
            except RecursionError:
                batch.append(f"{where}: nested too deeply; record skipped")
                continue
            batch.append((where, node, edges))
            if node is not None:
                chars += len(node.body) + len(node.title)
            if len(batch) >= BATCH_RECORDS or chars >= BATCH_CHARS:
                yield _settle_batch(batch, known)
                batch, chars = [], 0
        batch.extend(problems)
        yield _settle_batch(batch, known)


# A batch ends after this many records or characters of text: what one batch holds in memory.
BATCH_RECORDS = 5000
BATCH_CHARS = 8 * 1024 * 1024
DANGLING_LISTED = 20

# A warning, or (where, node or None, the edges the record states), in file order.
_Entry = str | tuple[str, NodeRecord | None, list[EdgeRecord]]


def _settle_batch(entries: list[_Entry], known: Callable[[list[str]], set[str]]) -> ParsedFile:
    """A batch's records, nodes whose id came before (in the batch or earlier) skipped, and its
    warnings in file order."""
    out = ParsedFile()
    earlier = known([e[1].id for e in entries if not isinstance(e, str) and e[1] is not None])
    seen: set[str] = set()
    for entry in entries:
        if isinstance(entry, str):
            out.warnings.append(entry)
            continue
        where, node, edges = entry
        if node is not None:
            if node.id in earlier or node.id in seen:
                out.warnings.append(f"{where}: duplicate id {short(node.id)}; record skipped")
                continue
            seen.add(node.id)
            out.nodes.append(node)
        out.edges.extend(edges)
    return out


def dangling_warnings(relpath: str, listed: list[tuple[str, str]], total: int) -> list[str]:
    """The warnings for edges dropped because no node of the file is their src: ``listed``
    (type, src) of the first few, ``total`` of them in all."""
    # Edges may name nodes that are not in the file; they stay as unresolved references. Their
    # src must exist, though, or the edge could never be walked from anywhere.
    out = [f"{relpath}: edge {short(kind)} from unknown node {short(src)} ignored" for kind, src in listed]
    if total > len(listed):
        out.append(f"{relpath}: {total - len(listed)} more edges from unknown nodes ignored")
    return out


def _record(record: Any, where: str, relpath: str) -> tuple[NodeRecord | None, list[EdgeRecord]]:
    """The node (or None, for an edge record) and the edges one record states."""
    if not isinstance(record, dict):
        raise ImportFormatError(f"{where}: expected an object, got {type(record).__name__}")
    if ("source" in record or "src" in record or "from" in record) and (
        "target" in record or "dst" in record or "to" in record
    ):
        src = _require_str(record, EDGE_SOURCE_KEYS, where)
        dst = _require_str(record, EDGE_TARGET_KEYS, where)
        kind = record.get("type") or "link"
        if not isinstance(kind, str):
            raise ImportFormatError(f"{where}: 'type' must be a string")
        return None, [EdgeRecord(src, kind, dst, by_id=True, position=_position(record))]
    node = _node(record, where, relpath)
    edges: list[EdgeRecord] = []
    parent = record.get("parent")
    if parent:
        if not isinstance(parent, (str, int)) or isinstance(parent, bool):
            raise ImportFormatError(f"{where}: 'parent' must be an id")
        node.parent_id = str(parent)
        edges.append(EdgeRecord(str(parent), "child", node.id, by_id=True, position=node.position))
    for i, child in enumerate(_id_list(record.get("children"), "children", where)):
        edges.append(EdgeRecord(node.id, "child", child, by_id=True, position=i))
    for i, dst in enumerate(_id_list(record.get("links"), "links", where)):
        edges.append(EdgeRecord(node.id, "link", dst, by_id=True, position=i))
    for dst in _id_list(record.get("supports"), "supports", where):
        edges.append(EdgeRecord(node.id, "supports", dst, by_id=True))
    for src in _id_list(record.get("supported_by"), "supported_by", where):
        edges.append(EdgeRecord(src, "supports", node.id, by_id=True))
    return node, edges


def _position(record: dict[str, Any]) -> int | None:
    """An ordering position SQLite can store; anything else (10^30, "3", 1.5) is no position."""
    value = record.get("position")
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _records(relpath: str, text: Iterable[str], warnings: list[str]) -> Iterator[tuple[str, Any]]:
    """Each record with where it starts, decoded as it is reached from text that arrives in
    pieces; a JSONL line that is not JSON is a warning (added to ``warnings``) and skipped."""
    if relpath.lower().endswith(".jsonl"):
        yield from _lines(relpath, text, warnings)
    else:
        yield from document_records(relpath, _pieces(text))


_PIECE = 1 << 20


def _pieces(text: Iterable[str]) -> Iterator[str]:
    """Text cut to pieces of at most _PIECE characters: the document reader lets go of what it
    has read, where one whole-text piece would be copied into its buffer (a second copy)."""
    for part in text:
        if len(part) <= _PIECE:
            yield part
        else:
            yield from (part[at : at + _PIECE] for at in range(0, len(part), _PIECE))


def _lines(relpath: str, text: Iterable[str], warnings: list[str]) -> Iterator[tuple[str, Any]]:
    # Split at "\n" only, not as splitlines() does: a form feed or U+2028 inside a line is not
    # a line end in JSON Lines, and warnings must name the line an editor shows.
    lineno = 0
    parts: list[str] = []  # a line that goes on past the end of a piece
    for piece in text:
        start = 0
        while True:
            end = piece.find("\n", start)
            if end < 0:
                if start < len(piece):
                    parts.append(piece[start:])
                break
            if parts:
                parts.append(piece[start:end])
                line = "".join(parts)
                parts = []
            else:
                line = piece[start:end]
            start = end + 1
            lineno += 1
            yield from _line(relpath, lineno, line, warnings)
    if parts:
        yield from _line(relpath, lineno + 1, "".join(parts), warnings)


def _line(relpath: str, lineno: int, line: str, warnings: list[str]) -> Iterator[tuple[str, Any]]:
    if not line.strip():
        return
    try:
        yield f"{relpath}:{lineno}", json.loads(line)
    except json.JSONDecodeError as exc:
        warnings.append(f"{relpath}:{lineno}: invalid JSON: {exc.msg} (column {exc.colno}); line skipped")
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, 100k-deep nesting
        reason = "nested too deeply" if isinstance(exc, RecursionError) else "a number too long"
        warnings.append(f"{relpath}:{lineno}: invalid JSON: {reason}; line skipped")


def _require_str(record: dict[str, Any], keys: tuple[str, ...], where: str) -> str:
    for key in keys:
        value = record.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    raise ImportFormatError(f"{where}: '{keys[0]}' must be a non-empty string")


def _id_list(value: Any, key: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, int)):
        return [str(value)]
    if isinstance(value, list):
        # One pass, strings as they are: the links of a million nodes go through here.
        ids = [v if type(v) is str else str(v) for v in value if type(v) is str or type(v) is int]
        if len(ids) == len(value):
            return ids
    raise ImportFormatError(f"{where}: '{key}' must be an id or a list of ids")


def _strings(value: Any, key: str, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) or v is None for v in value):
        return [str(v) for v in value if v is not None]
    raise ImportFormatError(f"{where}: '{key}' must be a string or a list of strings")


def _field_values(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v if isinstance(v, str) else _json_text(v) for v in value]
    if isinstance(value, str):
        return [value]
    return [_json_text(value)]


def _json_text(value: Any) -> str:
    # Python's json reads NaN and Infinity; a field value is text, so they stay text.
    return json.dumps(value, ensure_ascii=False)


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
    return NodeRecord(
        id=node_id,
        title=title.strip(),
        body=body,
        type=str(record.get("type") or record.get("kind") or "note"),
        tags=[t.lstrip("#") for t in _strings(record.get("tags"), "tags", where)],
        fields=fields,
        aliases=_strings(record.get("aliases"), "aliases", where),
        source_path=record["source_path"] if isinstance(record.get("source_path"), str) and record["source_path"] else relpath,
        position=_position(record),
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
