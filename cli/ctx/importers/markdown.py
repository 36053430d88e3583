"""Markdown vaults: Obsidian and Foam (Dendron builds on this in ``ctx.importers.dendron``).

A note is one ``.md`` file. Its id is the path relative to the vault without ``.md``; it answers
to that path, to every trailing part of it (``[[b/c]]`` finds ``a/b/c.md``, as Obsidian does), to
its file name, and (through the engine) to its title and aliases.

Links found in the text (never inside fenced or inline code):

* ``[[note]]``, ``[[note|shown]]``, ``[[note#heading]]``, ``[[note#^block]]`` -> ``link`` edges;
  ``![[...]]`` -> ``embed`` edges. The heading or block anchor is kept as the edge label.
* ``[text](other.md)`` -> ``link`` edges, URL-decoded and relative to the note's folder.
* ``#tags`` inline and ``tags:`` in the frontmatter -> tags (the engine makes tag nodes of them).
* frontmatter values that are wikilinks -> ``field:<name>`` edges.

One edge per (kind, target, anchor) per note: the graph says *that* two notes are linked; how
often is noise for context building.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ctx.code_spans import blank_code
from ctx import speedups
from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import day_named, parse_date

# Folders that belong to tools, not to the notes.
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
# What a markdown note file is called, for detection (the vault importers read ``.md``).
MARKDOWN_SUFFIXES = (".md", ".markdown")

# Wikilinks to these are attachments (images, PDFs, ...), which are not notes and not imported.
ATTACHMENT_EXTENSIONS = frozenset(
    "png jpg jpeg gif svg webp bmp avif tif tiff ico pdf mp3 mp4 m4a wav ogg flac webm mov mkv "
    "avi zip canvas excalidraw csv json txt html xlsx docx pptx".split()
)

CREATED_KEYS = ("created", "created_at", "date", "date_created", "creation_date")
UPDATED_KEYS = ("updated", "modified", "updated_at", "last_modified", "lastmod", "date_modified")
# Keys that become node columns rather than fields. ``date`` stays a field as well: for a
# meeting or a journal entry it is data the reader wants to see, not only a timestamp.
NON_FIELD_KEYS = frozenset({"title", "tags", "tag", "aliases", "alias", *UPDATED_KEYS,
                            "created", "created_at", "date_created", "creation_date"})

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
# Both link patterns start at their bracket, not at an optional '!': a pattern that begins with a
# literal lets the regex engine jump between candidates instead of trying every position. Whether
# it is an embed is the character before the match (never part of an earlier match, which ends in
# ']' or ')').
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
# The optional title is a quoted or parenthesised string (CommonMark), each scanned only to its
# closing mark, and an <angle> destination holds no "<": "anything up to the line's end" made
# `[a](b "` or `[a](<b` repeated quadratic.
_MD_LINK = re.compile(
    r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*(<[^<>\n]+>|[^()\s]+)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)"
)
_LINK_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]*(<[^>\n]+>|\S+)(?:[ \t]+[\"'(].*)?[ \t]*$")
_URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
WEB_ADDRESS = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_NODE_TYPE = re.compile(r"^[A-Za-z][\w-]{0,39}$")
_WIKILINK_VALUE = re.compile(r"^\s*\[\[([^\[\]\n]+?)\]\]\s*$")


def normalize(text: str) -> str:
    """How names compare: trimmed, case-folded, NFC (macOS writes file names decomposed)."""
    if text.isascii():  # NFC leaves ASCII as it is: most names, every link of an import
        return text.strip().lower()
    return unicodedata.normalize("NFC", text.strip()).lower()


def strip_code(text: str) -> str:
    """The text with fenced, indented and inline code blanked out, so links and tags in code are
    ignored (``ctx.code_spans`` says what is code, for every stage alike)."""
    return blank_code(text)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(YAML text or None, the rest). A file that merely starts with a rule has no frontmatter."""
    if not text.startswith("---"):
        return None, text
    match = _FRONTMATTER.match(text)
    if match is None:
        return None, text
    return match.group(1), text[match.end():]


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _string_list(value: Any) -> list[str]:
    """Frontmatter lists come as YAML lists, comma-separated strings or single values."""
    if value is None:
        return []
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            out.extend(_string_list(item))
        return out
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [_scalar(value)]


@dataclass
class Link:
    kind: str  # link | embed
    target: str  # normalized key
    anchor: str | None  # "#heading" or "#^block"
    shown: str | None  # the display text, when the link has one


@dataclass
class NoteText:
    """The parts of one note that do not depend on the flavour of markdown."""

    meta: dict[str, Any]
    body: str
    warnings: list[str] = field(default_factory=list)


class MarkdownImporter(Importer):
    """Shared machinery; the flavours override the hooks (link syntax, identity, tags)."""

    format = "obsidian"
    family = "markdown"
    # Characters a tag may contain after '#'. Obsidian allows letters, digits, _ - and /.
    tag_chars = r"\w/\-"
    handle_link_definitions = False
    # 2: a date with a zone is its written day (it was converted to UTC); a daily note without a
    # frontmatter date is dated by its file name (it was dated by its file's mtime).
    reading = 2

    def __init__(self) -> None:
        # A tag starts after whitespace, '(', ',' or ';' -- so '[[note#heading]]', 'a#b' and URL
        # fragments are not tags -- but not after '](', where it is a link's '#anchor'. The
        # lookbehinds sit after the '#' (and include it) so the search can jump from '#' to '#'.
        self._tag_re = re.compile(rf"#(?<![^\s(,;]#)(?<!\]\(#)([{self.tag_chars}]+)")

    # -- the files -------------------------------------------------------------------------

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        return path.suffix.lower() in MARKDOWN_SUFFIXES

    def list_files(self, path: Path) -> list[str]:
        if path.is_file():
            return [path.name] if path.suffix.lower() == ".md" else []
        found: list[str] = []
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
            rel_folder = os.path.relpath(folder, path)
            for name in files:
                if name.lower().endswith(".md") and not name.startswith("."):
                    rel = name if rel_folder == "." else f"{rel_folder}/{name}"
                    found.append(rel.replace(os.sep, "/"))
        return sorted(found)

    def normalize_key(self, text: str) -> str:
        return normalize(text)

    # -- hooks -----------------------------------------------------------------------------

    def note_id(self, relpath: str) -> str:
        return relpath[:-3] if relpath.lower().endswith(".md") else relpath

    def note_keys(self, relpath: str, node_id: str) -> list[tuple[str, str, int]]:
        parts = normalize(node_id).split("/")
        keys = [("/".join(parts), "path", 0), (parts[-1], "name", 1)]
        # Obsidian resolves a partial path against the end of the full one.
        keys.extend(("/".join(parts[i:]), "path", 5) for i in range(1, len(parts) - 1))
        return keys

    def split_wikilink(self, inner: str) -> tuple[str, str | None]:
        """(target, display text) of the inside of ``[[...]]``: ``target|display`` here."""
        target, bar, shown = inner.partition("|")
        return target, (shown.strip() or None) if bar else None

    def wikilink_key(self, target: str) -> str | None:
        """The normalized key a wikilink target names, or None when it names no note."""
        target = target.strip().rstrip("\\").strip()
        if WEB_ADDRESS.match(target):
            return None  # [[https://...]] is a URL in brackets, not a note
        if target.startswith("./"):
            target = target[2:]
        target = target.lstrip("/")
        if target.lower().endswith(".md"):
            target = target[:-3]
        else:
            _, dot, ext = target.rpartition("/")[2].rpartition(".")
            if dot and ext.lower() in ATTACHMENT_EXTENSIONS:
                return None
        return normalize(target) or None

    # -- parsing ---------------------------------------------------------------------------

    def read_note(self, info: FileInfo, text: str) -> NoteText:
        raw_meta, body = split_frontmatter(text)
        if raw_meta is None:
            return NoteText({}, body)
        # Imported here, not at the top: detecting a Tana or Logseq import loads this module too.
        import yaml

        from ctx import yaml_safe

        try:
            meta = _simple_frontmatter(raw_meta)
            if meta is None:
                # Bounded: aliases (a "billion laughs" in 300 bytes) and deep nesting are refused.
                meta = yaml_safe.load(raw_meta) if raw_meta.strip() else {}
        except (yaml.YAMLError, yaml_safe.YamlRefused) as exc:
            line, problem = yaml_safe.problem_parts(exc, line_offset=1)
            return NoteText(
                {}, text, [f"{info.relpath}: broken frontmatter ({line}: {problem}); imported as plain text"]
            )
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            return NoteText({}, text, [f"{info.relpath}: frontmatter is not a mapping; imported as plain text"])
        return NoteText({str(k): v for k, v in meta.items()}, body)

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        note = self.read_note(info, text)
        node_id = self.note_id(info.relpath)
        meta = note.meta
        body = note.body
        scan = strip_code(body)

        links = self.find_links(info.relpath, scan)
        if self.handle_link_definitions:
            body, scan, links = self.apply_link_definitions(info.relpath, body, scan, links)

        title = meta.get("title")
        title = _scalar(title).strip() if title not in (None, "") else ""
        date_problems: list[str] = []
        node = NodeRecord(
            id=node_id,
            title=title or self.default_title(node_id),
            body=body,
            tags=self.find_tags(meta, scan),
            fields=self.fields_of(meta),
            aliases=_string_list(meta.get("aliases", meta.get("alias"))),
            source_path=info.relpath,
            created=_first_date(meta, CREATED_KEYS, date_problems),
            updated=_first_date(meta, UPDATED_KEYS, date_problems),
            keys=self.note_keys(info.relpath, node_id),
        )
        if node.created is None and node.updated is None:
            # A daily note (``2024-05-28.md``, no frontmatter) is dated by its name, as a Logseq
            # journal is: its file's mtime (the engine's fallback) is when it was last touched or
            # checked out, and a context showed that instead of the day it records.
            node.created = day_named(Path(info.relpath).stem)
        # One frontmatter date stands for both: a file's mtime says when it was checked out or
        # synced, not when the note was written, and would make a fresh clone rank differently.
        node.created = node.created if node.created is not None else node.updated
        node.updated = node.updated if node.updated is not None else node.created
        declared_type = meta.get("type")
        if isinstance(declared_type, str) and _NODE_TYPE.match(declared_type.strip()):
            # `type: meeting` is how vaults say what a note is; lenses select on node types.
            node.type = declared_type.strip().lower()
            node.fields.pop("type", None)
        self.adjust_node(node, meta)
        out = ParsedFile(nodes=[node], warnings=note.warnings + [f"{info.relpath}: {p}" for p in date_problems])
        out.edges.extend(self.link_edges(node_id, links))
        out.edges.extend(self.field_edges(node_id, meta))
        out.edges.extend(self.structure_edges(node))
        return out

    def default_title(self, node_id: str) -> str:
        return node_id.rsplit("/", 1)[-1]

    def adjust_node(self, node: NodeRecord, meta: dict[str, Any]) -> None:
        """Flavour-specific touches after the common fields are set."""

    def structure_edges(self, node: NodeRecord) -> list[EdgeRecord]:
        return []

    def find_links(self, relpath: str, scan: str) -> list[Link]:
        links: list[Link] = []
        if "[[" in scan:
            for match in _WIKILINK.finditer(scan):
                inner = match.group(1).replace("\\|", "|")
                target, shown = self.split_wikilink(inner)
                name, hash_, anchor = target.partition("#")
                if not name.strip():
                    continue  # [[#heading]] points into the note itself
                key = self.wikilink_key(name)
                if key is None:
                    continue
                start = match.start()
                kind = "embed" if start and scan[start - 1] == "!" else "link"
                links.append(Link(kind, key, f"#{anchor.strip()}" if hash_ else None, shown))
        if "](" in scan:
            for match in _MD_LINK.finditer(scan):
                href_key, target_anchor = self.markdown_link_key(relpath, match.group(2))
                if href_key is not None:
                    start = match.start()
                    kind = "embed" if start and scan[start - 1] == "!" else "link"
                    links.append(Link(kind, href_key, target_anchor, match.group(1).strip() or None))
        return links

    def markdown_link_key(self, relpath: str, href: str) -> tuple[str | None, str | None]:
        """The key and anchor of a local ``.md`` link target; (None, None) for anything else."""
        href = href.strip()
        if href.startswith("<") and href.endswith(">"):
            href = href[1:-1]
        if not href or href.startswith(("#", "//")) or _URL_SCHEME.match(href):
            return None, None
        path, hash_, anchor = href.partition("#")
        path = unquote(path.partition("?")[0])
        if not path.lower().endswith(".md"):
            return None, None
        if path.startswith("/"):
            joined = path.lstrip("/")
        else:
            joined = posixpath.join(posixpath.dirname(relpath), path)
        joined = posixpath.normpath(joined)
        return normalize(joined[:-3]), (f"#{unquote(anchor)}" if hash_ and anchor else None)

    def apply_link_definitions(
        self, relpath: str, body: str, scan: str, links: list[Link]
    ) -> tuple[str, str, list[Link]]:
        """Foam writes ``[name]: path.md "Title"`` under the note for every wikilink so that
        plain markdown tools can follow them. Those duplicate the wikilinks: they add no edge
        and, when every definition is such a duplicate, they are cut from the body.
        Definitions for other names are ordinary (reference-style) links."""
        lines = body.split("\n")
        end = len(lines)
        while end > 0 and not lines[end - 1].strip():
            end -= 1
        start = end
        while start > 0 and (_LINK_DEFINITION.match(lines[start - 1]) or not lines[start - 1].strip()):
            start -= 1
        definitions = [m for line in lines[start:end] if (m := _LINK_DEFINITION.match(line))]
        if not definitions:
            return body, scan, links
        wikilinked = {(link.target, link.anchor) for link in links} | {(link.target, None) for link in links}
        all_duplicates = True
        extra: list[Link] = []
        for match in definitions:
            name, _, anchor = match.group(1).partition("#")
            label_key = self.wikilink_key(name)
            if label_key is not None and (label_key, f"#{anchor}" if anchor else None) in wikilinked:
                continue
            all_duplicates = False
            key, href_anchor = self.markdown_link_key(relpath, match.group(2))
            if key is not None:
                extra.append(Link("link", key, href_anchor, match.group(1)))
        if all_duplicates:
            body = "\n".join(lines[:start]).rstrip() + "\n"
            scan = strip_code(body)
        return body, scan, links + extra

    def find_tags(self, meta: dict[str, Any], scan: str) -> list[str]:
        # Obsidian accepts `tags: a, b`, `tags: a b` and YAML lists alike.
        declared = _string_list(meta.get("tags", meta.get("tag")))
        tags = [t.lstrip("#") for item in declared for t in item.split()]
        if "#" in scan:
            for match in self._tag_re.finditer(scan):
                tag = match.group(1).rstrip("/-.")
                if tag and not tag.replace("/", "").replace("-", "").replace("_", "").isdigit():
                    tags.append(tag)
        return list(dict.fromkeys(t for t in tags if t))

    def fields_of(self, meta: dict[str, Any]) -> dict[str, list[str]]:
        fields: dict[str, list[str]] = {}
        for key, value in meta.items():
            if key.lower() in NON_FIELD_KEYS or value is None or value == "" or value == []:
                continue
            values = [_as_wikilink(value)] if _is_unquoted_wikilink(value) else value
            values = values if isinstance(values, list) else [values]
            fields[key] = [_scalar(_as_wikilink(v)) for v in values if v is not None]
        return fields

    def link_edges(self, node_id: str, links: list[Link]) -> list[EdgeRecord]:
        edges: list[EdgeRecord] = []
        seen: set[tuple[str, str, str | None]] = set()
        for link in links:
            identity = (link.kind, link.target, link.anchor)
            if identity in seen:
                continue
            seen.add(identity)
            edges.append(
                EdgeRecord(node_id, link.kind, link.target, label=link.anchor or link.shown,
                           position=len(edges))
            )
        return edges

    def field_edges(self, node_id: str, meta: dict[str, Any]) -> list[EdgeRecord]:
        """``owner: "[[Ada Park]]"`` in the frontmatter is a typed link: ``field:owner``."""
        edges: list[EdgeRecord] = []
        for key, value in meta.items():
            if key.lower() in NON_FIELD_KEYS:
                continue
            values = [value] if _is_unquoted_wikilink(value) else value
            for item in values if isinstance(values, list) else [values]:
                item = _as_wikilink(item)
                if not isinstance(item, str):
                    continue
                match = _WIKILINK_VALUE.match(item)
                if match is None:
                    continue
                target, _ = self.split_wikilink(match.group(1).replace("\\|", "|"))
                key_ = self.wikilink_key(target.partition("#")[0])
                if key_ is not None:
                    edges.append(EdgeRecord(node_id, f"field:{key}", key_, position=len(edges)))
        return edges


def _is_unquoted_wikilink(value: Any) -> bool:
    """YAML reads an unquoted ``owner: [[Ada]]`` as a list holding a list holding 'Ada'."""
    return (
        isinstance(value, list) and len(value) == 1 and isinstance(value[0], list)
        and len(value[0]) == 1 and isinstance(value[0][0], str)
    )


def _as_wikilink(value: Any) -> Any:
    return f"[[{value[0][0]}]]" if _is_unquoted_wikilink(value) else value


# A value that looks like a date (2021-02-30, 0000-01-01, 10000-01-01) but is none: worth a
# warning, unlike `date: someday` which is just text.
_DATE_LIKE = re.compile(r"\d{4,}-\d{1,2}-\d{1,2}(?:[ T]|\Z)")


def _first_date(meta: dict[str, Any], keys: tuple[str, ...], problems: list[str]) -> float | None:
    for key in keys:
        if key in meta:
            value = meta[key]
            stamp = parse_date(value)
            if stamp is not None:
                return stamp
            if isinstance(value, str) and _DATE_LIKE.match(value.strip()):
                problems.append(f"{key}: {value.strip()[:40]!r} is not a calendar date; ignored")
    return None


def _yaml_loader() -> Any:
    """Safe YAML, C-accelerated when libyaml is there, where an impossible date stays a string."""
    from ctx import yaml_safe

    return yaml_safe.loader_class()


# The fast path reads frontmatter made only of lines ``key: value`` and ``key:`` followed by
# ``- value`` items (one indentation for all items), where each value fits on its line: a plain
# scalar (no YAML indicator first, no ': ', ' #', tab or bracket inside) or a quoted string with
# no escapes. Anything else -- nesting, comments, blank lines, anchors, tags, block scalars,
# multi-line values, flow collections other than a one-line list of plain scalars -- goes to
# PyYAML.
_SIMPLE_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_SIMPLE_ITEM_LINE = re.compile(r"( *)- +(.*)")
_PLAIN_FIRST_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
_SCALAR_NODE_IMPLICIT = (True, False)
_STR_TAG = "tag:yaml.org,2002:str"
_NOT_SIMPLE = object()
_scalar_loader: Any = None
_ScalarNode: Any = None
# Which implicit tag PyYAML gives a plain scalar depends on the string alone; the same keys and
# values recur in every note of a vault.
_implicit_tags: dict[str, str] = {}


def _implicit_tag(loader: Any, value: str) -> str:
    tag = _implicit_tags.get(value)
    if tag is None:
        tag = loader.resolve(_ScalarNode, value, _SCALAR_NODE_IMPLICIT)
        if len(_implicit_tags) < 50_000:
            _implicit_tags[value] = tag
    return tag


_FLOW_CHAR = re.compile(r"[\[\]{}]")
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
# The shapes nearly every note's dates take; PyYAML's timestamp constructor (a verbose regex and
# a dict of groups) cost a tenth of reading a note's frontmatter.
_PLAIN_STAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2}))?")


def _plain_timestamp(value: str) -> dt.date | None:
    """What PyYAML constructs for a timestamp written ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM:SS``
    (a date, or a datetime without zone); None for any other shape, or a day the calendar does
    not have, which PyYAML's constructor (as ctx's loader wraps it) then decides."""
    match = _PLAIN_STAMP.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second = match.groups()
    try:
        if hour is None:
            return dt.date(int(year), int(month), int(day))
        return dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
    except ValueError:
        return None


def _simple_scalar(loader: Any, value: str) -> Any:
    """The value of a one-line scalar as PyYAML constructs it, or _NOT_SIMPLE."""
    value = value.rstrip(" ")
    if value and value[0] in "'\"":
        quote = value[0]
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != quote or quote in inner or "\\" in inner:
            return _NOT_SIMPLE
        return inner
    if value and (
        value[0] in _PLAIN_FIRST_BAD
        or value[-1] == ":"
        or ": " in value
        or " #" in value
        or _FLOW_CHAR.search(value) is not None
    ):
        return _NOT_SIMPLE
    tag = _implicit_tag(loader, value)
    if tag == _STR_TAG:
        return value
    if tag == _TIMESTAMP_TAG:
        stamp = _plain_timestamp(value)
        if stamp is not None:
            return stamp
    constructor = loader.yaml_constructors.get(tag)
    if constructor is None:
        return _NOT_SIMPLE
    return constructor(loader, _ScalarNode(tag, value))


def _simple_frontmatter(raw: str) -> dict[str, Any] | None:
    """``raw`` read as YAML when it has only the simple shapes above, else None.

    PyYAML's composer and constructor cost about 0.1 ms a note, and most frontmatter is a
    handful of ``key: value`` lines and short lists. Only the line structure is read here: every
    key and value is still resolved (null, bool, int, float, timestamp, str) and constructed by
    PyYAML's own resolver and constructors, so the result is exactly what ``yaml.load`` gives.
    """
    if speedups.plain():
        return None
    lines = raw.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    loader = _shared_scalar_loader()
    out: dict[str, Any] = {}
    i, count = 0, len(lines)
    while i < count:
        line = lines[i]
        match = _SIMPLE_KEY_LINE.fullmatch(line)
        if match is None or not line.isprintable():
            return None
        key, value = match.group(1), match.group(2) or ""
        if _implicit_tag(loader, key) != _STR_TAG:
            return None  # `yes:` or `null:` is not the string key it looks like
        i += 1
        if not value.strip(" ") and i < count and lines[i].lstrip(" ").startswith("-"):
            items, i = _simple_block_list(loader, lines, i)
            if items is _NOT_SIMPLE:
                return None
            out[key] = items
            continue
        parsed = _simple_flow_list(loader, value) if value.startswith("[") else _simple_scalar(loader, value)
        if parsed is _NOT_SIMPLE:
            return None
        out[key] = parsed
    return out


def _shared_scalar_loader() -> Any:
    """One PyYAML loader kept for resolving and constructing scalars, made on first use."""
    global _scalar_loader, _ScalarNode
    if _scalar_loader is None:
        import yaml

        _ScalarNode = yaml.ScalarNode
        _scalar_loader = _yaml_loader()("")
    return _scalar_loader


def _simple_block_list(loader: Any, lines: list[str], i: int) -> tuple[Any, int]:
    """The ``- item`` lines from ``lines[i]`` on (one indent, plain non-empty scalars) as PyYAML
    constructs them, and the index after them; _NOT_SIMPLE when they are not that simple."""
    items: list[Any] = []
    indent: str | None = None
    while i < len(lines) and lines[i].lstrip(" ").startswith("-"):
        item = _SIMPLE_ITEM_LINE.fullmatch(lines[i])
        if item is None or not lines[i].isprintable():
            return _NOT_SIMPLE, i
        if indent is None:
            indent = item.group(1)
        elif item.group(1) != indent:
            return _NOT_SIMPLE, i
        parsed = _simple_scalar(loader, item.group(2))
        if parsed is _NOT_SIMPLE or not item.group(2).strip(" "):
            return _NOT_SIMPLE, i
        items.append(parsed)
        i += 1
    return items, i


def _simple_flow_list(loader: Any, value: str) -> Any:
    """``[a, b c, 2024-01-02]`` of plain scalars as PyYAML constructs it, or _NOT_SIMPLE.

    Obsidian writes ``tags: [a, b]``; without this every such note paid for PyYAML's composer.
    Quotes, nesting and empty items are left to PyYAML."""
    value = value.rstrip(" ")
    inner = value[1:-1]
    if not value.endswith("]") or any(c in inner for c in "[]{}'\"\t"):
        return _NOT_SIMPLE
    if not inner.strip(" "):
        return []
    items = []
    for raw in inner.split(","):
        item = raw.strip(" ")
        if not item or item[0] in "-?:":
            return _NOT_SIMPLE
        parsed = _simple_scalar(loader, item)
        if parsed is _NOT_SIMPLE:
            return _NOT_SIMPLE
        items.append(parsed)
    return items


class ObsidianImporter(MarkdownImporter):
    format = "obsidian"

    @classmethod
    def detect(cls, path: Path) -> int:
        if path.is_file():
            return 20 if path.suffix.lower() == ".md" else 0
        if (path / ".obsidian").is_dir():
            return 90
        # Markdown notes without any tool's marker: Obsidian's dialect (wikilinks, tags,
        # frontmatter, markdown links) is a superset of plain markdown, so it reads them best.
        return 10


class FoamImporter(MarkdownImporter):
    format = "foam"
    handle_link_definitions = True

    @classmethod
    def detect(cls, path: Path) -> int:
        if not path.is_dir():
            return 0
        if (path / ".foam").exists():
            return 80
        from ctx.files import read_head

        # Peeks go through read_head: a FIFO named settings.json or note.md must not hang
        # detection, and a symlink out of the folder is not read.
        for name in ("settings.json", "extensions.json"):
            config = read_head(path / ".vscode" / name, DETECT_PEEK_BYTES, root=path)
            if b"foam" in config.lower():
                return 80
        # No config: notes ending in link-reference definitions are Foam's signature.
        for note in sorted(path.glob("*.md"))[:20]:
            tail = _tail(note, path)
            if any(_LINK_DEFINITION.match(line) and ".md" in line for line in tail.splitlines()):
                return 60
        return 0


DETECT_PEEK_BYTES = 1 << 20


def _tail(note: Path, root: Path, size: int = 2000) -> str:
    """The last ``size`` characters of a note that is a regular file inside ``root``, else ''."""
    from ctx.files import FileRefused, read_regular

    try:
        return read_regular(note, root=root, limit=DETECT_PEEK_BYTES).decode("utf-8", errors="ignore")[-size:]
    except (OSError, FileRefused):
        return ""
