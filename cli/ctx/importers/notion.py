"""Notion "Markdown & CSV" exports: pages as markdown files, databases as CSV files.

Notion appends a 32-hex id to every file and folder name (``Home 2a88...93.md``); ids and titles
here drop it, so a node's id is its path without the hex id (``Home/My tasks``). A page's
sub-pages live in the folder of the same name, which becomes ``child`` edges; the ``Key: Value``
lines under a page's title are its properties (fields). A database is a CSV: the database is a
node, each row a ``row`` node with the columns as fields, linked to the row's own page when the
export has one. Links to files that are not in the export (Notion often omits CSVs) stay
unresolved rather than failing the import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import csv
import io
import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile

if TYPE_CHECKING:
    from ctx.store.protocols import SourceRecords

# Not \b: "X <hex>_all.csv" has a word character right after the id.
_HEX_ID = re.compile(r" ?(?<![0-9A-Za-z])[0-9a-f]{32}(?![0-9A-Za-z])")
_NAMED_WITH_ID = re.compile(r" [0-9a-f]{32}(?:_all)?(?:\.(?:md|csv))?$")
# Greedy to the line's end, stripped after: a lazy "(.+?)\s*$" re-scanned a run of spaces at
# every step (quadratic on one long line).
_H1 = re.compile(r"^#\s+(.+)$")
_PROPERTY = re.compile(r"^([^:#\-*>\[|`\s][^:\n]{0,59}?):\s+(.+)$")
# The label stops at a newline or the next "[", the target at the next "(": a "[" with no "]"
# scanned to the end of the text once per "[" (quadratic across lines), and "[a](" repeated
# scanned to the end of the line once per "](".
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\(([^()\s]+)\)")
_RELATION = re.compile(r"\(([^()]+?\.(?:md|csv))\)")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)
DETECT_SAMPLE = 200


def strip_ids(relpath: str) -> str:
    """``Home 2a88....93/My tasks c86d....87.csv`` -> ``Home/My tasks.csv``."""
    return "/".join(_HEX_ID.sub("", part).strip() for part in relpath.split("/"))


def path_key(relpath: str) -> str:
    """The name a page or database answers to when linked by path: no ids, no extension."""
    stripped = strip_ids(relpath)
    for suffix in ("_all.csv", ".csv", ".md"):
        if stripped.lower().endswith(suffix):
            stripped = stripped[: -len(suffix)]
            break
    return stripped.strip().lower()


class NotionImporter(Importer):
    format = "notion"
    family = "markdown"

    @classmethod
    def detect(cls, path: Path) -> int:
        """85 when most of the folder's pages and databases carry Notion's 32-hex ids."""
        if not path.is_dir():
            return 0
        named = sampled = 0
        for file in path.rglob("*"):
            if file.suffix.lower() not in (".md", ".csv"):
                continue
            sampled += 1
            named += bool(_NAMED_WITH_ID.search(file.name))
            if sampled >= DETECT_SAMPLE:
                break
        return 85 if sampled and named * 2 > sampled else 0

    @classmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        return path.suffix.lower() == ".md"

    def list_files(self, path: Path) -> list[str]:
        files = [
            f.relative_to(path).as_posix()
            for f in path.rglob("*")
            # Not is_file(): a FIFO or a symlink out of the export is listed so that the import
            # can skip it with a warning naming it (it is never opened).
            if not f.is_dir() and f.suffix.lower() in (".md", ".csv")
        ]
        present = set(files)
        # Notion writes a database twice: the current view (X.csv) and every row (X_all.csv).
        return sorted(
            f for f in files if not (f.endswith(".csv") and f[:-4] + "_all.csv" in present)
        )

    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        if info.relpath.lower().endswith(".csv"):
            return self._database(info, text)
        return self._page(info, text)

    def _page(self, info: FileInfo, text: str) -> ParsedFile:
        out = ParsedFile()
        lines = text.split("\n")  # not splitlines(): U+2028 or a form feed is text, not a line end
        index = 0
        while index < len(lines) and not lines[index].strip():
            index += 1
        heading = _H1.match(lines[index]) if index < len(lines) else None
        title = heading.group(1).rstrip() if heading else Path(strip_ids(info.relpath)).stem
        if heading:
            index += 1
        while index < len(lines) and not lines[index].strip():
            index += 1
        node = NodeRecord(
            id=strip_ids(info.relpath)[:-3],
            title=title.strip(),
            type="page",
            source_path=info.relpath,
            keys=[(path_key(info.relpath), "path", 5)],
        )
        while index < len(lines):
            match = _PROPERTY.match(lines[index])
            if match is None:
                break
            name, value = match.group(1).strip(), match.group(2).rstrip() or " "
            node.fields.setdefault(name, []).append(_RELATION.sub("", value).strip() or value)
            for target in _RELATION.findall(value):
                out.edges.append(
                    EdgeRecord(node.id, f"field:{name}", _link_key(info.relpath, target))
                )
            index += 1
        node.body = "\n".join(lines[index:]).strip()
        out.nodes.append(node)
        for position, (_label, target) in enumerate(_MD_LINK.findall(node.body)):
            if _SCHEME.match(target) or not unquote(target).lower().endswith((".md", ".csv")):
                continue
            out.edges.append(
                EdgeRecord(node.id, "link", _link_key(info.relpath, target), position=position)
            )
        return out

    def _database(self, info: FileInfo, text: str) -> ParsedFile:
        out = ParsedFile()
        rows = _csv_rows(info.relpath, text.lstrip("\ufeff"), out.warnings)
        stripped = strip_ids(info.relpath).replace("_all.csv", ".csv")
        header = [column.strip() for column in rows[0]] if rows else []
        database = NodeRecord(
            id=stripped,
            title=Path(stripped).stem,
            body=("Columns: " + ", ".join(header)) if header else "",
            type="database",
            source_path=info.relpath,
            keys=[(path_key(info.relpath), "path", 5)],
        )
        out.nodes.append(database)
        seen: dict[str, int] = {}
        for line_number, row in enumerate(rows[1:], start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                out.warnings.append(
                    f"{info.relpath}:{line_number}: {len(row)} cells for {len(header)} columns"
                )
            title = row[0].strip() if row else ""
            if not title:
                title = f"Row {line_number - 1}"
            seen[title] = seen.get(title, 0) + 1
            suffix = f" ({seen[title]})" if seen[title] > 1 else ""
            node = NodeRecord(
                id=f"{stripped}#{title}{suffix}",
                title=title,
                type="row",
                source_path=info.relpath,
                fields={
                    name: [cell.strip()]
                    for name, cell in zip(header[1:], row[1:])
                    if cell.strip()
                },
            )
            node.body = "\n".join(f"{k}: {v[0]}" for k, v in node.fields.items())
            out.nodes.append(node)
            out.edges.append(
                EdgeRecord(database.id, "child", node.id, by_id=True, position=len(out.nodes) - 2)
            )
            # The row's own page, when the export has one, sits in the database's folder.
            out.edges.append(
                EdgeRecord(node.id, "link", f"{path_key(info.relpath)}/{title.lower()}")
            )
        return out

    def finalize(self, source: SourceRecords) -> ParsedFile:
        """Sub-pages: a file inside folder ``X`` is a child of the page or database ``X``."""
        out = ParsedFile()
        by_path: dict[str, str] = {}
        for key, _kind, node_id in source.keys(("path",)):
            by_path.setdefault(key, node_id)
        for key, node_id in sorted(by_path.items()):
            parent = by_path.get(posixpath.dirname(key))
            if parent is not None and parent != node_id:
                out.edges.append(EdgeRecord(parent, "child", node_id, by_id=True))
        return out


# A cell may hold a whole page of text (a 200 KB description); csv's default limit of 128 KB
# failed the file. Past this, a cell is refused with the row (the node text limit cuts long
# ones anyway).
CSV_FIELD_LIMIT = 64 * 1024 * 1024
CSV_ERRORS_LISTED = 20


def _csv_rows(relpath: str, text: str, warnings: list[str]) -> list[list[str]]:
    """The rows of a CSV file; a row csv cannot read (a NUL byte, an oversized cell) is a warning
    naming its line, and reading goes on with the next line."""
    previous_limit = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        reader = csv.reader(io.StringIO(text))
        rows: list[list[str]] = []
        errors = 0
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                errors += 1
                if errors <= CSV_ERRORS_LISTED:
                    warnings.append(f"{relpath}:{reader.line_num}: unreadable CSV row ({exc}); skipped")
                rows.append([])  # keeps the line numbers of later rows' warnings true
                continue
            rows.append(row)
        if errors > CSV_ERRORS_LISTED:
            warnings.append(f"{relpath}: {errors - CSV_ERRORS_LISTED} more unreadable CSV rows skipped")
        return rows
    finally:
        csv.field_size_limit(previous_limit)


def _link_key(relpath: str, target: str) -> str:
    """The path key a relative link from ``relpath`` points at."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), unquote(target)))
    return path_key(joined)
