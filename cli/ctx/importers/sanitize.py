"""The last check between any importer and the database: every record is made storable.

Importers parse files other tools (or attackers) wrote. Whatever they let through, nothing may
reach SQLite or a later `ctx build` that breaks it: a date of 1e25, ``inf`` or NaN (every build of
the graph failed on one), a position of 10^30 (beyond SQLite's integers), a ``source_path`` that is
an object, a lone surrogate from a JSON escape (not encodable as UTF-8), a 10 MB title. Each is
dropped or cut here with a warning that names the file and the node; the rest of the file and the
import go on. Checking in one place keeps every importer, present and future, under the same rule.
"""

from __future__ import annotations

import re
from typing import Any

from ctx.config import ImportLimits
from ctx.importers.base import EdgeRecord, NodeRecord, ParsedFile
from ctx.importers.dates import date_problem

SQLITE_INT_MIN = -(2**63)
SQLITE_INT_MAX = 2**63 - 1
MAX_ID_CHARS = 4_096
MAX_NAME_CHARS = 1_000  # types, tags, aliases, field names and values, edge labels
SHOWN_ID_CHARS = 80


def short(node_id: object) -> str:
    """A value as a warning quotes it: at most SHOWN_ID_CHARS characters."""
    text = str(node_id)
    return repr(text if len(text) <= SHOWN_ID_CHARS else text[:SHOWN_ID_CHARS] + "…")


def _text(value: Any) -> str:
    """A string SQLite and UTF-8 can hold: lone surrogates (``"\\ud800"`` in JSON) replaced."""
    if not isinstance(value, str):
        value = "" if value is None else str(value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


# A line break and the blanks around it. Every context prints a title as a heading or a list line:
# a title of several lines (YAML's ``title: |``, a JSON record's "\n", a file name) split its
# heading, the rest of it read as text or as a heading of its own ("## ...").
_LINE_BREAK = re.compile(r"[ \t]*(?:\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029])\s*")


def _one_line(title: str) -> str:
    """``title`` on one line: each line break, with the blanks around it, one space (the line
    breaks ``str.splitlines`` knows)."""
    if title.isprintable() or not _LINE_BREAK.search(title):  # nearly every title: no control character
        return title
    return _LINE_BREAK.sub(" ", title).strip()


def _name(value: Any) -> str:
    text = _text(value)
    return text if len(text) <= MAX_NAME_CHARS else text[:MAX_NAME_CHARS]


def _integer(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if SQLITE_INT_MIN <= value <= SQLITE_INT_MAX else None


def _cut(text: str, limit: int) -> str:
    return text[: limit - 1] + "…" if len(text) > limit else text


def shortened_id(node_id: str) -> str:
    """A stand-in for an id past MAX_ID_CHARS (a page named by a 10 MB title): its start and a
    hash of the whole, so two long ids stay two ids."""
    import hashlib

    digest = hashlib.blake2b(node_id.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{node_id[:SHOWN_ID_CHARS]}~{digest}"


def check_node(node: NodeRecord, where: str, limits: ImportLimits, warnings: list[str]) -> bool:
    """Make ``node`` storable in place; False when it cannot be kept at all (its id is unusable)."""
    if not isinstance(node.id, str) or not node.id.strip():
        what = "empty" if isinstance(node.id, str) else "not text"
        warnings.append(f"{where}: a node id that is {what} ({short(node.id)}); node skipped")
        return False
    node.id = _text(node.id)
    node.title = _bounded(node, _one_line(_text(node.title)), limits.max_title_chars, "title",
                          "import.max_title_chars", where, warnings)
    node.body = _bounded(node, _text(node.body), limits.max_note_chars, "text", "import.max_note_chars",
                         where, warnings)
    node.type = _name(node.type) or "note"
    node.tags = _names(node.tags)
    node.aliases = _names(node.aliases)
    node.fields = _fields(node.fields)
    node.source_path = _text(node.source_path) if isinstance(node.source_path, str) else None
    node.parent_id = _text(node.parent_id) if isinstance(node.parent_id, str) and node.parent_id else None
    node.position = _integer(node.position)
    for attribute in ("created", "updated"):
        _check_stamp(node, attribute, where, warnings)
    node.keys = [
        (_text(k), _text(kind), priority)
        for k, kind, priority in node.keys
        if isinstance(k, str) and k and isinstance(priority, int) and not isinstance(priority, bool)
    ]
    return True


def _bounded(node: NodeRecord, text: str, limit: int, what: str, setting: str, where: str,
             warnings: list[str]) -> str:
    if len(text) <= limit:
        return text
    warnings.append(
        f"{where}: node {short(node.id)}: {what} of {len(text):,} characters cut to {limit:,} ({setting})"
    )
    return _cut(text, limit)


def _names(values: Any) -> list[str]:
    return [_name(v) for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _check_stamp(node: NodeRecord, attribute: str, where: str, warnings: list[str]) -> None:
    """A node's created/updated time as a float, or dropped with a warning when it is not a
    usable date."""
    stamp = getattr(node, attribute)
    if stamp is None:
        return
    problem = "not a number" if isinstance(stamp, bool) or not isinstance(stamp, (int, float)) else None
    if problem is None:
        try:
            stamp = float(stamp)
        except OverflowError:
            stamp = float("inf")
        problem = date_problem(stamp)
    if problem is not None:
        warnings.append(f"{where}: node {short(node.id)}: {attribute} date {problem}; dropped")
        setattr(node, attribute, None)
    else:
        setattr(node, attribute, stamp)


def _fields(fields: Any) -> dict[str, list[str]]:
    if not isinstance(fields, dict):
        return {}
    out: dict[str, list[str]] = {}
    for name, values in fields.items():
        key = _name(name)
        if not key:
            continue
        items = values if isinstance(values, list) else [values]
        out[key] = [_text(v) for v in items if v is not None]
    return out


def check_edge(edge: EdgeRecord) -> bool:
    if not isinstance(edge.src, str) or not isinstance(edge.target, str) or not isinstance(edge.type, str):
        return False
    src, target, kind, label = edge.src, edge.target, edge.type, edge.label
    # Nearly every edge is plain ASCII of a sane length: nothing to replace or cut.
    if not (src.isascii() and target.isascii() and kind.isascii() and len(kind) <= MAX_NAME_CHARS):
        edge.src, edge.target, edge.type = _text(src), _text(target), _name(kind)
    if label is not None:
        edge.label = _name(label) if isinstance(label, str) else None
    position = edge.position
    if position is not None and (position.__class__ is not int or not SQLITE_INT_MIN <= position <= SQLITE_INT_MAX):
        edge.position = _integer(position)
    return bool(edge.src and edge.type)


def _shorten_long_ids(parsed: ParsedFile, where: str) -> None:
    renamed: dict[str, str] = {}
    for node in parsed.nodes:
        if isinstance(node.id, str) and len(node.id) > MAX_ID_CHARS:
            renamed[node.id] = shortened_id(node.id)
            parsed.warnings.append(
                f"{where}: node id of {len(node.id):,} characters shortened to {short(renamed[node.id])}"
            )
            node.id = renamed[node.id]
    if not renamed:
        return
    for node in parsed.nodes:
        if isinstance(node.parent_id, str) and node.parent_id in renamed:
            node.parent_id = renamed[node.parent_id]
    for edge in parsed.edges:
        if isinstance(edge.src, str):
            edge.src = renamed.get(edge.src, edge.src)
        if edge.by_id and isinstance(edge.target, str):
            edge.target = renamed.get(edge.target, edge.target)


def check_parsed(parsed: ParsedFile, where: str, limits: ImportLimits) -> None:
    """Make every record of ``parsed`` storable, in place, with a warning for what changed."""
    _shorten_long_ids(parsed, where)
    kept = [node for node in parsed.nodes if check_node(node, where, limits, parsed.warnings)]
    if len(kept) != len(parsed.nodes):
        dropped = {id(node) for node in parsed.nodes} - {id(node) for node in kept}
        gone = {node.id for node in parsed.nodes if id(node) in dropped and isinstance(node.id, str)}
        parsed.nodes = kept
        parsed.edges = [e for e in parsed.edges if e.src not in gone]
    before = len(parsed.edges)
    parsed.edges = [edge for edge in parsed.edges if check_edge(edge)]
    if len(parsed.edges) != before:
        parsed.warnings.append(f"{where}: {before - len(parsed.edges)} malformed edge(s) skipped")
