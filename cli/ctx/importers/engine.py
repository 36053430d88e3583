"""The incremental import engine shared by every format.

One import = stat every file of the source, parse only new or changed ones (outside any
transaction), then apply all changes in a single transaction: replace the changed files' nodes
and edges, drop deleted files, recompute derived records, re-resolve links, bump the graph
version. An interrupted import (Ctrl-C, kill) therefore leaves the previous state intact, and an
import of an unchanged folder writes nothing at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ctx.config import ImportLimits, PrivacyConfig, load_import_limits, load_privacy_config
from ctx.errors import ImportFormatError, UsageError
from ctx.files import Confinement, FileRefused, read_regular
from ctx.importers.base import EdgeRecord, FileInfo, Importer, NodeRecord, ParsedFile
from ctx.importers.dates import date_problem
from ctx.importers.sanitize import check_parsed
from ctx.privacy import privacy_config_changed, refresh_private_flags

# (phase, done, total). The phases, in order: "reading files" (parse the changed ones), "counting
# tokens" (the stored token count of every new node: the longest step of a first import), then
# "saving" (links, privacy, commit: one step whose length is not known beforehand).
ProgressFn = Callable[[str, int, int], None]
READING, COUNTING, SAVING = "reading files", "counting tokens", "saving"
TOKEN_CHUNK = 256


@dataclass
class ImportReport:
    source: str
    format: str
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    nodes_written: int = 0
    edges_written: int = 0
    warnings: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # files that could not be parsed at all
    changed: bool = False
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # how the format or folder was chosen

    def as_dict(self) -> dict[str, object]:
        return {
            "source": self.source,
            "format": self.format,
            "files_seen": self.files_seen,
            "files_parsed": self.files_parsed,
            "files_unchanged": self.files_unchanged,
            "files_deleted": self.files_deleted,
            "nodes_written": self.nodes_written,
            "edges_written": self.edges_written,
            "warnings": self.warnings,
            "notes": self.notes,
            "changed": self.changed,
            "seconds": round(self.seconds, 3),
        }


def content_hash(node: NodeRecord) -> str:
    payload = json.dumps(
        [node.title, node.body, node.type, node.tags, node.fields, node.aliases],
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


def _file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


@dataclass
class _Change:
    info: FileInfo
    size: int
    mtime_ns: int
    hash: str
    parsed: ParsedFile | None  # None: content identical, only the stat changed


def import_path(
    conn: sqlite3.Connection,
    path: str | Path,
    *,
    format: str = "auto",
    progress: ProgressFn | None = None,
) -> ImportReport:
    from ctx.importers import get_importer
    from ctx.importers.detection import detect

    started = time.perf_counter()
    path = Path(path).expanduser()
    if not path.exists():
        raise UsageError(f"no such file or folder: {path}")
    root = path.resolve()
    notes: list[str] = []
    recorded = _source_row(conn, root)
    if format != "auto":
        importer = get_importer(format)
    elif recorded is not None:
        # A source is re-read the way it was read before (also once its notes are all deleted
        # and it no longer looks like anything); --format changes that.
        importer = get_importer(recorded["format"])
    else:
        detection = detect(root)
        importer = get_importer(detection.format)
        root = detection.root
        notes = list(detection.notes)
    report = ImportReport(source=str(root), format=importer.format, notes=notes)
    base = importer.base_dir(root)

    relpaths = importer.list_files(root)
    if not relpaths and _source_row(conn, root) is None:
        # Nothing there this format reads (a .md file imported as Notion, a folder as a JSON
        # graph, a Logseq graph without pages/): reporting "unchanged" with exit 0 hid the
        # mistake and left an empty source behind in the graph.
        what = "folder" if root.is_dir() else "file"
        raise ImportFormatError(f"nothing to import: the {importer.format} importer reads no files in {what} {path}")
    source_id, known = _load_source(conn, root, importer.format)
    report.files_seen = len(relpaths)

    # Decide what changed from stat alone; only changed files are read. Only regular files inside
    # the imported root are read at all: a symlink out of the vault (to /etc/passwd, to a private
    # note elsewhere) or a FIFO or device is skipped, and counts as gone if it was imported before.
    candidates: list[tuple[str, Path, os.stat_result]] = []
    refused: set[str] = set()
    confinement = Confinement(root)
    for rel in relpaths:
        abspath = base / rel
        try:
            st = confinement.check(abspath)
        except FileRefused as exc:
            report.warnings.append(f"{rel}: {exc}; skipped")
            refused.add(rel)
            continue
        except OSError as exc:
            report.warnings.append(f"{rel}: cannot stat ({exc.strerror or exc}); kept as before")
            known.pop(rel, None)  # neither re-import nor delete it
            continue
        previous = known.get(rel)
        if previous is not None and previous[0] == st.st_mtime_ns and previous[1] == st.st_size:
            report.files_unchanged += 1
            continue
        candidates.append((rel, abspath, st))

    vanished = sorted(set(known) - (set(relpaths) - refused))
    limits = load_import_limits()
    changes: list[_Change] = []
    for done, (rel, abspath, st) in enumerate(candidates, start=1):
        change = _read_and_parse(importer, rel, abspath, st, known.get(rel), report, limits)
        if change is not None:
            changes.append(change)
        elif rel in known:
            # Unreadable now: keep what the graph already has for it.
            vanished = [v for v in vanished if v != rel]
        if progress is not None:
            progress(READING, done, len(candidates))

    if report.failed and not changes and not vanished:
        # An import that read nothing but failures (its one export file is truncated, say) is an
        # error, not "unchanged" with a warning. Nothing was written: the graph keeps what it had
        # and a first import leaves no source behind.
        raise ImportFormatError("\n".join(report.failed[:20]))
    privacy = load_privacy_config()
    if not changes and not vanished:
        if privacy_config_changed(conn, privacy):
            # New privacy settings apply to the whole graph even when no file changed.
            conn.execute("BEGIN IMMEDIATE")
            try:
                refresh_private_flags(conn, privacy)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        report.seconds = time.perf_counter() - started
        return report

    _apply(conn, importer, source_id, root, changes, vanished, report, privacy, progress)
    report.seconds = time.perf_counter() - started
    return report


def _source_row(conn: sqlite3.Connection, root: Path) -> sqlite3.Row | None:
    return conn.execute("SELECT id, format FROM sources WHERE root = ?", (str(root),)).fetchone()


def _load_source(
    conn: sqlite3.Connection, root: Path, fmt: str
) -> tuple[int | None, dict[str, tuple[int, int, str]]]:
    """(source id, what each known file was) -- (None, {}) for a source never imported: its row
    is written in the import's own transaction, so a failed or killed first import leaves none."""
    row = _source_row(conn, root)
    if row is None:
        return None, {}
    source_id = int(row["id"])
    known = {
        r["path"]: (int(r["mtime_ns"]), int(r["size"]), str(r["hash"]))
        for r in conn.execute(
            "SELECT path, mtime_ns, size, hash FROM files WHERE source_id = ?", (source_id,)
        )
    }
    if row["format"] != fmt:
        # Read in another format, every file's records change even where its bytes did not.
        known = {rel: (-1, -1, "") for rel in known}
    return source_id, known


def _read_and_parse(
    importer: Importer,
    rel: str,
    abspath: Path,
    st: os.stat_result,
    previous: tuple[int, int, str] | None,
    report: ImportReport,
    limits: ImportLimits,
) -> _Change | None:
    try:
        data = read_regular(abspath, checked=st)
    except FileRefused as exc:
        report.warnings.append(f"{rel}: {exc}; skipped")
        return None
    except OSError as exc:
        report.warnings.append(f"{rel}: unreadable ({exc.strerror or exc}); skipped")
        return None
    digest = _file_hash(data)
    info = FileInfo(relpath=rel, abspath=abspath, mtime=st.st_mtime)
    if previous is not None and previous[2] == digest:
        return _Change(info, st.st_size, st.st_mtime_ns, digest, None)
    if importer.text:
        if _looks_binary(data):
            report.warnings.append(f"{rel}: binary file; skipped")
            return _Change(info, st.st_size, st.st_mtime_ns, digest, ParsedFile())
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            report.warnings.append(
                f"{rel}: invalid UTF-8 at byte {exc.start}; undecodable bytes replaced"
            )
            text = data.decode("utf-8-sig", errors="replace")
        # Notes saved on Windows (CRLF) or old Macs (CR) would otherwise carry "\r" into every
        # stored body and so into the context (and its token count); parsers all expect "\n".
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        parsed = _parse_one(importer, info, text, report)
    else:
        parsed = _parse_one(importer, info, data, report)
    if parsed is None:
        return None
    check_parsed(parsed, rel, limits)
    report.warnings.extend(parsed.warnings)
    report.files_parsed += 1
    return _Change(info, st.st_size, st.st_mtime_ns, digest, parsed)


PROBLEM_MAX_CHARS = 300


def _parse_one(importer: Importer, info: FileInfo, content: str | bytes, report: ImportReport) -> ParsedFile | None:
    """The file's records, or None with a warning naming it: one bad file never costs the import.

    A file that cannot be parsed at all keeps whatever the graph had for it (it is not recorded
    as read, so the next import tries it again).
    """
    try:
        return importer.parse(info, content)  # type: ignore[arg-type]
    except ImportFormatError as exc:
        problem = str(exc)
        if not problem.startswith(info.relpath):
            problem = f"{info.relpath}: {problem}"
    except RecursionError:
        problem = f"{info.relpath}: nested too deeply to parse"
    except Exception as exc:  # noqa: BLE001 - any parser failure is this file's, not the import's
        if os.environ.get("CTX_DEBUG"):
            raise
        problem = f"{info.relpath}: cannot be parsed ({exc.__class__.__name__}: {exc})"
    if len(problem) > PROBLEM_MAX_CHARS:
        problem = problem[: PROBLEM_MAX_CHARS - 1] + "…"
    report.warnings.append(f"{problem}; file skipped")
    report.failed.append(problem)
    return None


def _apply(
    conn: sqlite3.Connection,
    importer: Importer,
    source_id: int | None,
    root: Path,
    changes: list[_Change],
    vanished: list[str],
    report: ImportReport,
    privacy: PrivacyConfig,
    progress: ProgressFn | None = None,
) -> None:
    count_many = _token_counter(progress)
    replaced = [c for c in changes if c.parsed is not None]
    conn.execute("BEGIN IMMEDIATE")
    try:
        if source_id is None:
            # Another import of the same folder may have committed while this one parsed; then
            # its rows are replaced like any re-import's (every file here was parsed afresh).
            row = _source_row(conn, root)
            source_id = int(row["id"]) if row is not None else _insert_source(conn, root, importer.format)
        # A first import has nothing to delete; skipping 3 queries per file matters at 1,000s.
        if conn.execute("SELECT 1 FROM files WHERE source_id = ? LIMIT 1", (source_id,)).fetchone():
            for rel in [c.info.relpath for c in replaced] + vanished:
                _delete_file_records(conn, source_id, rel)
        for rel in vanished:
            conn.execute("DELETE FROM files WHERE source_id = ? AND path = ?", (source_id, rel))
        report.files_deleted = len(vanished)

        rows: list[tuple[str, NodeRecord]] = []
        edges: list[tuple[str, EdgeRecord]] = []
        for change in replaced:
            assert change.parsed is not None
            rows.extend((change.info.relpath, n) for n in change.parsed.nodes)
            edges.extend((change.info.relpath, e) for e in change.parsed.edges)
            # A file's mtime can be anything `touch -d` allows; only a storable date stands in.
            mtime = change.info.mtime if date_problem(change.info.mtime) is None else None
            for node in change.parsed.nodes:
                if node.created is None:
                    node.created = mtime
                if node.updated is None:
                    node.updated = mtime
        conn.executemany(
            "INSERT OR REPLACE INTO files (source_id, path, mtime_ns, size, hash)"
            " VALUES (?, ?, ?, ?, ?)",
            [(source_id, c.info.relpath, c.mtime_ns, c.size, c.hash) for c in changes],
        )

        # Derived records depend on the whole source, so they are recomputed from scratch.
        _delete_file_records(conn, source_id, "")
        _insert(conn, importer, source_id, rows, edges, count_many, report)
        derived = importer.finalize(conn, source_id)
        check_parsed(derived, "derived", load_import_limits())
        report.warnings.extend(derived.warnings)
        _insert(
            conn,
            importer,
            source_id,
            [("", n) for n in derived.nodes],
            [("", e) for e in derived.edges],
            count_many,
            report,
        )
        if progress is not None:
            progress(SAVING, 0, 1)
        _insert_tag_nodes(conn, source_id)
        resolve_edges(conn, source_id)
        refresh_private_flags(conn, privacy)
        now = time.time()
        conn.execute(
            "UPDATE sources SET imported_at = ?, checked_at = ?, format = ? WHERE id = ?",
            (now, now, importer.format, source_id),
        )
        conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'graph_version'"
        )
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_import', ?)", (str(now),)
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    report.changed = True
    if progress is not None:
        progress(SAVING, 1, 1)


def _token_counter(progress: ProgressFn | None) -> Callable[[list[str]], list[int]]:
    """``count_many``, reporting its progress a chunk at a time when someone is watching."""
    from ctx.tokens import count_many

    if progress is None:
        return count_many

    def count(texts: list[str]) -> list[int]:
        counts: list[int] = []
        for start in range(0, len(texts), TOKEN_CHUNK):
            counts.extend(count_many(texts[start : start + TOKEN_CHUNK]))
            progress(COUNTING, len(counts), len(texts))
        return counts

    return count


def _insert_source(conn: sqlite3.Connection, root: Path, fmt: str) -> int:
    cursor = conn.execute(
        "INSERT INTO sources (root, name, format) VALUES (?, ?, ?)",
        (str(root), root.stem if root.is_file() else root.name, fmt),
    )
    return int(cursor.lastrowid or 0)


def _delete_file_records(conn: sqlite3.Connection, source_id: int, rel: str) -> None:
    conn.execute(
        "DELETE FROM node_keys WHERE node_id IN"
        " (SELECT id FROM nodes WHERE source_id = ? AND file = ?)",
        (source_id, rel),
    )
    conn.execute("DELETE FROM nodes WHERE source_id = ? AND file = ?", (source_id, rel))
    conn.execute("DELETE FROM edges WHERE source_id = ? AND file = ?", (source_id, rel))


def _insert(
    conn: sqlite3.Connection,
    importer: Importer,
    source_id: int,
    nodes: list[tuple[str, NodeRecord]],
    edges: list[tuple[str, EdgeRecord]],
    count_many: Callable[[list[str]], list[int]],
    report: ImportReport,
) -> None:
    if not nodes and not edges:
        return
    # Ids must be unique across the whole graph; a clash (the same id from another file or
    # another source) is renamed and reported rather than silently overwriting the other node.
    renamed: dict[str, str] = {}
    seen: set[str] = set()
    tried: dict[str, int] = {}
    ids = [n.id for _, n in nodes]
    taken = _existing_ids(conn, ids)
    for rel, node in nodes:
        if node.id in seen or node.id in taken:
            new_id = _unique_id(conn, f"{node.id}~{rel or 'derived'}", seen, tried)
            report.warnings.append(f"{rel or 'derived'}: duplicate node id {node.id!r}; stored as {new_id!r}")
            renamed[node.id] = new_id
            node.id = new_id
        seen.add(node.id)

    token_counts = count_many([f"{n.title}\n{n.body}" for _, n in nodes])
    node_rows = []
    key_rows = []
    for (rel, node), tokens in zip(nodes, token_counts, strict=True):
        node_rows.append(
            (
                node.id,
                node.title,
                node.body,
                node.type,
                _json(node.tags),
                _json(node.fields),
                _json(node.aliases),
                source_id,
                node.source_path,
                rel,
                renamed.get(node.parent_id, node.parent_id) if node.parent_id else None,
                node.position,
                node.created,
                node.updated,
                content_hash(node),
                tokens,
            )
        )
        keys = {(node.id, "id", 0)}
        if node.title_is_key:
            keys.add((importer.normalize_key(node.title), "title", 10))
        keys.update((importer.normalize_key(a), "alias", 20) for a in node.aliases)
        keys.update(node.keys)
        key_rows.extend((source_id, k, node.id, kind, prio) for k, kind, prio in keys if k)
    with _bulk_fts(conn):
        conn.executemany(
            "INSERT INTO nodes (id, title, body, type, tags, fields, aliases, source_id, source_path,"
            " file, parent_id, position, created, updated, content_hash, tokens)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            node_rows,
        )
    conn.executemany(
        "INSERT INTO node_keys (source_id, key, node_id, kind, priority) VALUES (?, ?, ?, ?, ?)",
        key_rows,
    )
    edges = edges + _tag_edges(nodes)
    conn.executemany(
        "INSERT INTO edges (source_id, file, src, type, target, by_id, label, position)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                source_id,
                rel,
                renamed.get(e.src, e.src),
                e.type,
                renamed.get(e.target, e.target) if e.by_id else e.target,
                1 if e.by_id else 0,
                e.label,
                e.position,
            )
            for rel, e in edges
        ],
    )
    report.nodes_written += len(node_rows)
    report.edges_written += len(edges)


def _json(value: list[str] | dict[str, list[str]]) -> str:
    # Most outline blocks have no tags, fields or aliases; skipping json.dumps for those saves
    # about a tenth of a large import.
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, ensure_ascii=False)


@contextmanager
def _bulk_fts(conn: sqlite3.Connection) -> Iterator[None]:
    """Index a batch of new nodes in the full-text index with one statement, not a trigger per row.

    The per-row insert trigger costs about 3x more than one INSERT ... SELECT over the new rows
    (measured on dwarves-brain: 0.175 s vs 0.06 s), so inside the import's transaction the trigger
    is set aside and put back; a rollback restores it with everything else.
    """
    trigger = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'nodes_ai'").fetchone()
    if trigger is None:
        yield
        return
    before = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM nodes").fetchone()[0]
    conn.execute("DROP TRIGGER nodes_ai")
    yield
    conn.execute(
        "INSERT INTO nodes_fts (rowid, title, aliases, body)"
        " SELECT rowid, title, aliases, body FROM nodes WHERE rowid > ?",
        (before,),
    )
    conn.execute(trigger[0])


def tag_node_id(tag: str) -> str:
    return f"tag:{tag.strip().lstrip('#').lower()}"


def _tag_edges(nodes: list[tuple[str, NodeRecord]]) -> list[tuple[str, EdgeRecord]]:
    """Every tag becomes an edge to a shared tag node, so notes that share a tag are two hops apart."""
    out = []
    for rel, node in nodes:
        for position, tag in enumerate(dict.fromkeys(node.tags)):
            if tag.strip().lstrip("#"):
                out.append((rel, EdgeRecord(node.id, "tag", tag_node_id(tag), by_id=True, position=position)))
    return out


def _insert_tag_nodes(conn: sqlite3.Connection, source_id: int) -> None:
    """Create the tag nodes this source's tags need and no node has yet (derived, file='')."""
    from ctx.tokens import count_many

    # A full sort (case-folded, then exact) so that when `#TODO` and `#todo` both occur, the
    # spelling that names the shared tag node is the same in every run, not set-order luck.
    tags = sorted(
        {
            r[0].strip().lstrip("#")
            for r in conn.execute(
                "SELECT DISTINCT j.value FROM nodes n, json_each(n.tags) j WHERE n.source_id = ?",
                (source_id,),
            )
            if isinstance(r[0], str) and r[0].strip().lstrip("#")
        },
        key=lambda tag: (tag.lower(), tag),
    )
    wanted: dict[str, str] = {}
    for tag in tags:
        wanted.setdefault(tag_node_id(tag), tag)
    existing = _existing_ids(conn, list(wanted))
    new_nodes = [
        NodeRecord(id=node_id, title=f"#{tag}", type="tag")
        for node_id, tag in wanted.items()
        if node_id not in existing
    ]
    rows = list(zip(new_nodes, count_many([n.title for n in new_nodes]), strict=True))
    with _bulk_fts(conn):
        conn.executemany(
            "INSERT INTO nodes (id, title, body, type, source_id, file, content_hash, tokens)"
            " VALUES (?, ?, '', 'tag', ?, '', ?, ?)",
            [(n.id, n.title, source_id, content_hash(n), t) for n, t in rows],
        )
    conn.executemany(
        "INSERT INTO node_keys (source_id, key, node_id, kind, priority) VALUES (?, ?, ?, ?, ?)",
        [(source_id, n.title.lower(), n.id, "title", 90) for n, _ in rows],
    )


def _existing_ids(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN ({marks})", chunk))
    return found


def _unique_id(conn: sqlite3.Connection, wanted: str, seen: set[str], tried: dict[str, int]) -> str:
    # ``tried`` remembers how far each name was counted: 10,000 blocks sharing one id would
    # otherwise count 1, 2, 3, ... again for each (quadratic).
    n = tried.get(wanted, 1)
    candidate = wanted if n == 1 else f"{wanted}~{n}"
    while candidate in seen or conn.execute("SELECT 1 FROM nodes WHERE id = ?", (candidate,)).fetchone():
        n += 1
        candidate = f"{wanted}~{n}"
    tried[wanted] = n
    return candidate


def resolve_edges(conn: sqlite3.Connection, source_id: int) -> None:
    """Point every edge of a source at the node its target names now, or at nothing.

    Names resolve within the source first; when two nodes share a name, the lower priority wins,
    then the shorter id (the note nearer the vault root, as Obsidian does), then the id itself.
    """
    conn.execute(
        """
        UPDATE edges SET dst = CASE
            WHEN by_id = 1 THEN (SELECT n.id FROM nodes n WHERE n.id = edges.target)
            ELSE (
                SELECT k.node_id FROM node_keys k
                WHERE k.key = edges.target AND k.kind != 'id' AND k.source_id = edges.source_id
                ORDER BY k.priority, length(k.node_id), k.node_id LIMIT 1
            )
        END
        WHERE source_id = ?
        """,
        (source_id,),
    )
    # Other sources may point at nodes this import removed (shared tag nodes, ids).
    conn.execute(
        "UPDATE edges SET dst = NULL WHERE dst IS NOT NULL AND source_id != ?"
        " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)",
        (source_id,),
    )
