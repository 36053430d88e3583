"""The incremental import engine shared by every format.

One import = stat every file of the source, read only new or changed ones, then apply all
changes in a single transaction: replace the changed files' nodes and edges, drop deleted files,
write the new files' records, recompute derived records, re-resolve links, bump the graph
version. An interrupted import (Ctrl-C, kill) therefore leaves the previous state intact, and an
import of an unchanged folder writes nothing at all.

Files never imported before (all of them, in a first import) are read and written a batch at a
time inside the transaction, so the memory an import needs does not grow with the source.
Files that changed since the last import are parsed first, before the transaction: one that
cannot be parsed keeps what the graph has for it, and the others' old records must all be gone
before any new record is written (a node may move from one file to another).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import hashlib
import itertools
import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ctx.config import ImportLimits, graph_privacy_rules, load_import_limits
from ctx.errors import ImportFormatError, UsageError
from ctx.files import Confinement, FileRefused, read_regular
from ctx.importers.base import FileInfo, Importer, ParsedFile
from ctx.importers.dates import date_problem
from ctx.importers.sanitize import check_parsed
from ctx.store.errors import is_storage_error
from ctx.store import as_store
from ctx.store.types import EdgeRecord, FileState, NodeRecord

if TYPE_CHECKING:
    from ctx.importers.file_text import FileText
    from ctx.store.protocols import GraphReader, GraphStore, ImportSession, StreamedWrites, TokenCounter

# (phase, done, total). The phases, in order: "reading files" (parse the changed files; new files
# are also counted and written as they are read), "counting tokens" (the stored token estimate of
# every node of the changed files), then "saving" (links, privacy, passages, commit: one step
# whose length is not known beforehand).
ProgressFn = Callable[[str, int, int], None]
READING, COUNTING, SAVING = "reading files", "counting tokens", "saving"
# A file read a batch at a time (``Importer.streams``): done and total in megabytes.
READING_GRAPH = "reading graph file"
TOKEN_CHUNK = 256
# New files are read and written in batches of at most this many files or bytes of source.
BATCH_FILES = 1000
BATCH_BYTES = 8 * 1024 * 1024


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


def _file_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


# Byte order marks of the Unicode encodings with NUL bytes in their text, longest first (UTF-32
# LE's starts as UTF-16 LE's): a note saved as "Unicode" by Notepad or PowerShell's ``>`` is
# UTF-16 LE with a BOM, and read as UTF-8 it looked binary and was skipped.
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
              (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _decode(data: bytes, rel: str, report: ImportReport) -> str:
    """A text file's text: UTF-8 (a BOM dropped), or UTF-16/32 when it opens with their BOM;
    undecodable bytes replaced, with a warning."""
    encoding, skip = "utf-8-sig", 0
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            encoding, skip = name, len(bom)
            break
    try:
        return data[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        what = "UTF-8" if skip == 0 else encoding.upper()
        report.warnings.append(f"{rel}: invalid {what} at byte {exc.start + skip}; undecodable bytes replaced")
        return data[skip:].decode(encoding, errors="replace")


@dataclass
class _Change:
    info: FileInfo
    size: int
    mtime_ns: int
    hash: str
    parsed: ParsedFile | None  # None: content identical, only the stat changed


# A file to read: its path relative to the source, its absolute path, its stat.
_Stat = tuple[str, Path, os.stat_result]


@dataclass
class _Plan:
    """What one import must write, decided before its transaction."""

    changes: list[_Change] = field(default_factory=list)  # known files whose content or stat changed
    vanished: list[str] = field(default_factory=list)  # known files gone (or now refused)
    fresh: list[_Stat] = field(default_factory=list)  # files never imported: read inside the transaction
    # Files of a streaming format with new content: read inside the transaction, a batch at a time.
    streamed: list[_Stat] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.fresh or self.streamed or self.changes or self.vanished)


def source_path(path: str | Path) -> Path:
    """The folder or file to import, as given (``~`` expanded); an empty or blank path is a usage
    error: ``Path("")`` is the current folder, so `ctx import "$VAULT"` with ``$VAULT`` unset
    imported wherever the shell stood (as ``ctx sources remove ""`` removed its source)."""
    if isinstance(path, str) and not path.strip():
        raise UsageError("give the folder or file to import (`.` for the current one), not an empty path")
    return Path(path).expanduser()


def import_path(
    store: GraphStore,
    path: str | Path,
    *,
    format: str = "auto",
    progress: ProgressFn | None = None,
) -> ImportReport:
    started = time.perf_counter()
    path = source_path(path)
    store = as_store(store)
    reader = store.reader(include_private=True)
    if not path.exists():
        raise UsageError(f"no such file or folder: {path}")
    importer, root, notes = _choose_importer(reader, path.resolve(), format)
    report = ImportReport(source=str(root), format=importer.format, notes=notes)
    relpaths = importer.list_files(root)
    if not relpaths and reader.source_at(root) is None:
        # Nothing there this format reads (a .md file imported as Notion, a folder as a JSON
        # graph, a Logseq graph without pages/): reporting "unchanged" with exit 0 hid the
        # mistake and left an empty source behind in the graph.
        what = "folder" if root.is_dir() else "file"
        raise ImportFormatError(f"nothing to import: the {importer.format} importer reads no files in {what} {path}")
    source_id, known, as_stored = _load_source(reader, root, importer)
    report.files_seen = len(relpaths)
    candidates, refused = _stat_files(importer.base_dir(root), root, relpaths, known, report)
    vanished = sorted(set(known) - (set(relpaths) - refused))
    limits = load_import_limits()
    reading = _Steps(progress, READING, len(candidates))
    plan = _read_changed(importer, candidates, known, vanished, report, limits, reading)
    if plan:
        try:
            _apply(store, importer, source_id, root, as_stored, plan, _Run(report, limits, reading, progress))
        except _NothingWritten:
            pass  # rolled back: every new file was unreadable or failed to parse
    if not report.changed:
        _nothing_changed(store, reader, report)
    report.seconds = time.perf_counter() - started
    return report


def _choose_importer(reader: GraphReader, root: Path, format: str) -> tuple[Importer, Path, list[str]]:
    """(importer, root, how the format or folder was chosen): ``format`` unless it is "auto",
    else the format the source was read with before, else what ``detect`` finds."""
    from ctx.importers import get_importer
    from ctx.importers.detection import detect

    if format != "auto":
        return get_importer(format), root, []
    recorded = reader.source_at(root)
    if recorded is not None:
        # A source is re-read the way it was read before (also once its notes are all deleted
        # and it no longer looks like anything); --format changes that.
        return get_importer(recorded[1]), root, []
    detection = detect(root)
    return get_importer(detection.format), detection.root, list(detection.notes)


def _stat_files(
    base: Path, root: Path, relpaths: list[str], known: dict[str, FileState], report: ImportReport
) -> tuple[list[_Stat], set[str]]:
    """(files whose stat changed, files refused): what changed is decided from stat alone; only
    changed files are read. Only regular files inside the imported root are read at all: a symlink
    out of the vault (to /etc/passwd, to a private note elsewhere) or a FIFO or device is skipped,
    and counts as gone if it was imported before. A file that cannot be stat'ed leaves ``known``:
    it is neither re-imported nor deleted."""
    candidates: list[_Stat] = []
    refused: set[str] = set()
    confinement = Confinement(root)
    # Paths as strings until a file is read: a Path per file was a third of a no-op re-import.
    base_text = str(base)
    glue = "" if not base_text or base_text.endswith("/") else "/"
    for rel in relpaths:
        # os.path.join's result, without its call per file where paths are POSIX
        where = base_text + glue + rel if os.sep == "/" and rel[:1] != "/" else os.path.join(base_text, rel)
        try:
            st = confinement.check(where)
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
        candidates.append((rel, Path(where), st))
    return candidates, refused


def _read_changed(
    importer: Importer,
    candidates: list[_Stat],
    known: dict[str, FileState],
    vanished: list[str],
    report: ImportReport,
    limits: ImportLimits,
    reading: _Steps,
) -> _Plan:
    """The plan: changed known files are read (and parsed) now, new ones are left to the
    transaction; a known file that cannot be read now keeps what the graph has for it."""
    plan = _Plan(vanished=vanished)
    for rel, abspath, st in candidates:
        if rel not in known:
            (plan.streamed if importer.streams else plan.fresh).append((rel, abspath, st))
            continue
        if importer.streams:
            change = _hash_only(rel, abspath, st, report)
            if change is not None and change.hash != known[rel][2]:
                plan.streamed.append((rel, abspath, st))
                reading.step()
                continue
        else:
            change = _read_and_parse(importer, rel, abspath, st, known.get(rel), report, limits)
        if change is not None:
            plan.changes.append(change)
        else:
            # Unreadable now: keep what the graph already has for it.
            plan.vanished = [v for v in plan.vanished if v != rel]
        reading.step()
    return plan


def _nothing_changed(store: GraphStore, reader: GraphReader, report: ImportReport) -> None:
    """After an import that wrote no file: an error when it read nothing but failures; else new
    privacy settings, or passages missing or made by another splitter, are applied now."""
    if report.failed:
        # An import that read nothing but failures (its one export file is truncated, say) is
        # an error, not "unchanged" with a warning. Nothing was written: the graph keeps what
        # it had and a first import leaves no source behind.
        raise ImportFormatError("\n".join(report.failed[:20]))
    privacy = graph_privacy_rules(store)
    new_privacy = reader.privacy_changed(privacy)
    if new_privacy or reader.passages_stale():
        # New privacy settings apply to the whole graph even when no file changed; a graph
        # made before passages existed (or by another splitter) gets them now.
        with store.import_session() as session:
            if new_privacy:
                session.refresh_private_flags(privacy)
                # What every reader may see changed: caches keyed by the version must go.
                session.bump_graph_version()
            session.refresh_passages()
            session.recount()


class _NothingWritten(Exception):
    """Raised inside the import's transaction to roll back an import that changed nothing."""


class _Steps:
    """Progress of one phase, a step at a time."""

    def __init__(self, progress: ProgressFn | None, phase: str, total: int) -> None:
        self.progress, self.phase, self.total, self.done = progress, phase, total, 0

    def step(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.phase, self.done, self.total)


def _load_source(
    reader: GraphReader, root: Path, importer: Importer
) -> tuple[int | None, dict[str, FileState], dict[str, FileState]]:
    """(source id, what each known file counts as for this import, what each file's stored state
    is now) -- (None, {}, {}) for a source never imported: its row is written in the import's own
    transaction, so a failed or killed first import leaves none.

    The two differ when the format or its reading (``Importer.reading``) changes: every file is
    then read again, but what the write transaction compares against (``_not_older``) is still
    the state as stored when looked at."""
    row = reader.source_at(root)
    if row is None:
        return None, {}, {}
    source_id, recorded_format = row
    as_stored = reader.file_states(source_id)
    known = dict(as_stored)
    if recorded_format != importer.format or read_at(reader, source_id) != importer.reading:
        # Read in another format, or read differently now, every file's records change even
        # where its bytes did not.
        known = {rel: (-1, -1, "") for rel in known}
    return source_id, known, as_stored


def _reading_key(source_id: int) -> str:
    return f"source_reading:{source_id}"


def read_at(reader: GraphReader, source_id: int) -> int:
    """The ``Importer.reading`` a source was last imported at: 1 for a graph that never said (every
    reading before the first raise was 1)."""
    stored = reader.setting(_reading_key(source_id))
    return int(stored) if stored and stored.isdigit() else 1


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
    except (FileRefused, OSError) as exc:
        report.warnings.append(_not_read(rel, exc))
        return None
    digest = _file_hash(data)
    info = FileInfo(relpath=rel, abspath=abspath, mtime=st.st_mtime)
    if previous is not None and previous[2] == digest:
        return _Change(info, st.st_size, st.st_mtime_ns, digest, None)
    if importer.text:
        if _looks_binary(data) and not data.startswith(tuple(bom for bom, _ in _WIDE_BOMS)):
            report.warnings.append(f"{rel}: binary file; skipped")
            return _Change(info, st.st_size, st.st_mtime_ns, digest, ParsedFile())
        text = _decode(data, rel, report)
        # Notes saved on Windows (CRLF) or old Macs (CR) would otherwise carry "\r" into every
        # stored body and so into the context (and its token count); parsers all expect "\n".
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        del data  # a single export file can be most of the import: not held twice while parsed
        parsed = _parse_one(importer, info, text, report)
        del text
    else:
        parsed = _parse_one(importer, info, data, report)
    if parsed is None:
        return None
    check_parsed(parsed, rel, limits)
    report.warnings.extend(parsed.warnings)
    report.files_parsed += 1
    return _Change(info, st.st_size, st.st_mtime_ns, digest, parsed)


def _hash_only(rel: str, abspath: Path, st: os.stat_result, report: ImportReport) -> _Change | None:
    """A changed file of a streaming format, read once for its hash only (a touched but equal
    file is not parsed again); None, with a warning, when it cannot be read."""
    from ctx.files import read_pieces

    digest = hashlib.blake2b(digest_size=16)
    try:
        for piece in read_pieces(abspath, checked=st):
            digest.update(piece)
    except (FileRefused, OSError) as exc:
        report.warnings.append(_not_read(rel, exc))
        return None
    info = FileInfo(relpath=rel, abspath=abspath, mtime=st.st_mtime)
    return _Change(info, st.st_size, st.st_mtime_ns, digest.hexdigest(), None)


def _not_read(rel: str, exc: Exception) -> str:
    """The warning for a file that was refused (not a regular file, outside the root, too large)
    or could not be read; the import goes on without it."""
    if isinstance(exc, OSError):
        return f"{rel}: unreadable ({exc.strerror or exc}); skipped"
    return f"{rel}: {exc}; skipped"


class _StreamFailed(Exception):
    """A streamed file could not be read or parsed: its writes are rolled back to its savepoint.
    Arguments: the warning, and the problem when the file could not be parsed (else None)."""


def _stream_one(session: ImportSession, importer: Importer, source_id: int, file: _Stat, run: _Run) -> bool:
    """Read, parse and write one file of a streaming format a batch at a time, inside the
    import's transaction; whether it was written. Its old records go first, under a savepoint:
    a file that fails half-way (truncated at the end, unreadable) keeps what the graph had."""
    from ctx.files import read_pieces
    from ctx.importers.file_text import FileText
    from ctx.importers.jsongraph import dangling_warnings
    from ctx.tokens import estimate_many

    rel, abspath, st = file
    report = run.report
    info = FileInfo(relpath=rel, abspath=abspath, mtime=st.st_mtime)
    source = FileText(rel, read_pieces(abspath, checked=st))
    first_warning, counted = len(report.warnings), (report.nodes_written, report.edges_written)
    try:
        with session.file_savepoint():
            session.forget_files(source_id, [rel], [])
            target = session.streamed_file(source_id, rel, count=estimate_many, normalize_key=importer.normalize_key)
            batches = _parsed_batches(importer, info, source.text(), target.known_ids)
            try:
                _write_batches(batches, target, source, st, run)
            finally:
                batches.close()
            settled = target.settle()
            report.edges_written += settled.edges
            report.warnings.extend(dangling_warnings(rel, settled.dangling, settled.dangling_total))
            session.record_files(source_id, [(rel, st.st_mtime_ns, st.st_size, source.digest)])
    except _StreamFailed as failed:
        # The savepoint undid the file's writes; the import goes on without it.
        del report.warnings[first_warning:]
        report.nodes_written, report.edges_written = counted
        report.warnings.extend(source.warnings)
        warning, problem = failed.args
        report.warnings.append(warning)
        if problem is not None:  # unparseable, not merely unreadable: the import may fail on it
            report.failed.append(problem)
        return False
    report.warnings[first_warning:first_warning] = source.warnings
    report.files_parsed += 0 if source.binary else 1
    return True


def _write_batches(
    batches: Iterator[ParsedFile], target: StreamedWrites, source: FileText, st: os.stat_result, run: _Run
) -> None:
    """Write a streamed file's parsed batches, each checked and its undated nodes dated."""
    report = run.report
    megabytes = max(1, st.st_size >> 20)
    # A file's mtime can be anything `touch -d` allows; only a storable date stands in.
    mtime = st.st_mtime if date_problem(st.st_mtime) is None else None
    for batch in batches:
        check_parsed(batch, source.rel, run.limits)
        report.warnings.extend(batch.warnings)
        for node in batch.nodes:
            _date_undated(node, mtime)
        written = target.add(batch.nodes, batch.edges)
        report.warnings.extend(written.warnings)
        report.nodes_written += written.nodes
        report.edges_written += written.edges
        if run.progress is not None:
            run.progress(READING_GRAPH, min(megabytes, source.size >> 20), megabytes)


def _parsed_batches(
    importer: Importer, info: FileInfo, text: Iterator[str], known: Callable[[list[str]], set[str]]
) -> Generator[ParsedFile, None, None]:
    """The importer's batches, with any failure of reading or parsing the file (not of writing
    it) turned into ``_StreamFailed``: (warning, whether the file counts as failed)."""
    rel = info.relpath
    try:
        first = next(text, None)
        if first is None:
            # Nothing to parse: an empty or binary file (whose warning the reader gave).
            return
        batches = importer.parse_stream(info, itertools.chain([first], text), known)
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                return
            yield batch
    except (FileRefused, OSError) as exc:
        raise _StreamFailed(_not_read(rel, exc), None) from None
    except Exception as exc:  # noqa: BLE001 - any parser failure is this file's, not the import's
        if is_storage_error(exc):
            raise  # the graph's own failure (a lock, a full disk) is the import's, not the file's
        problem = _parse_problem(rel, exc)
        raise _StreamFailed(f"{problem}; file skipped", problem) from None


PROBLEM_MAX_CHARS = 300


def _parse_one(importer: Importer, info: FileInfo, content: str | bytes, report: ImportReport) -> ParsedFile | None:
    """The file's records, or None with a warning naming it: one bad file never costs the import.

    A file that cannot be parsed at all keeps whatever the graph had for it (it is not recorded
    as read, so the next import tries it again).
    """
    try:
        return importer.parse(info, content)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - any parser failure is this file's, not the import's
        problem = _parse_problem(info.relpath, exc)
    report.warnings.append(f"{problem}; file skipped")
    report.failed.append(problem)
    return None


def _parse_problem(rel: str, exc: Exception) -> str:
    """What a parser's failure says about the file, in one line naming it."""
    if isinstance(exc, ImportFormatError):
        problem = str(exc)
    elif isinstance(exc, RecursionError):
        problem = "nested too deeply to parse"
    elif os.environ.get("CTX_DEBUG"):
        raise exc
    else:
        problem = f"cannot be parsed ({exc.__class__.__name__}: {exc})"
    if not problem.startswith(rel):
        problem = f"{rel}: {problem}"
    if len(problem) > PROBLEM_MAX_CHARS:
        problem = problem[: PROBLEM_MAX_CHARS - 1] + "…"
    return problem


@dataclass
class _Run:
    """What every step of one import's transaction reports to and is bounded by."""

    report: ImportReport
    limits: ImportLimits
    reading: _Steps
    progress: ProgressFn | None = None


def _apply(
    store: GraphStore,
    importer: Importer,
    source_id: int | None,
    root: Path,
    known: dict[str, FileState],
    plan: _Plan,
    run: _Run,
) -> None:
    with store.import_session(bulk=True) as session:
        # Another import of the same folder may have committed while this one parsed: its rows
        # are replaced only by what is newer than them (``_not_older``).
        source_id = session.ensure_source(root, importer.format) if source_id is None else source_id
        if read_at(store.reader(include_private=True), source_id) != importer.reading:
            session.set_setting(_reading_key(source_id), str(importer.reading))
        plan = _not_older(store, source_id, known, plan)
        _replace_changed(session, importer, source_id, plan, run)
        written = bool(plan.changes or plan.vanished)
        written = _write_fresh(session, importer, source_id, plan.fresh, run) or written
        for rel, abspath, st in plan.streamed:
            written = _stream_one(session, importer, source_id, (rel, abspath, st), run) or written
            run.reading.step()
        if not written:
            raise _NothingWritten
        _derive_and_save(session, store, importer, source_id, run)
    run.report.changed = True
    if run.progress is not None:
        run.progress(SAVING, 1, 1)


def _replace_changed(session: ImportSession, importer: Importer, source_id: int, plan: _Plan, run: _Run) -> None:
    """Forget the records of changed, new and deleted files and of the derived ones, then write
    the changed files' new records (parsed before the transaction)."""
    replaced = [c for c in plan.changes if c.parsed is not None]
    # New files too: another import of this folder may have written them while this one read.
    session.forget_files(source_id, [c.info.relpath for c in replaced] + [f[0] for f in plan.fresh], plan.vanished)
    run.report.files_deleted = len(plan.vanished)
    session.record_files(source_id, [(c.info.relpath, c.mtime_ns, c.size, c.hash) for c in plan.changes])
    # Derived records depend on the whole source, so they are recomputed from scratch.
    session.forget_derived(source_id)
    session.defer_indexes()
    nodes, edges = _records_of(replaced)
    _insert(session, importer, source_id, nodes, edges, _token_counter(run.progress, len(nodes)), run.report)


def _write_fresh(session: ImportSession, importer: Importer, source_id: int, fresh: list[_Stat], run: _Run) -> bool:
    """Read, parse and write the files never imported, a batch at a time; whether any was written."""
    from ctx.tokens import estimate_many

    written = False
    for batch in _batches(fresh):
        new = []
        for rel, abspath, st in batch:
            change = _read_and_parse(importer, rel, abspath, st, None, run.report, run.limits)
            if change is not None:
                new.append(change)
            run.reading.step()
        session.record_files(source_id, [(c.info.relpath, c.mtime_ns, c.size, c.hash) for c in new])
        _insert(session, importer, source_id, *_records_of(new), estimate_many, run.report)
        written = written or bool(new)
    return written


def _derive_and_save(session: ImportSession, store: GraphStore, importer: Importer, source_id: int, run: _Run) -> None:
    """The source's derived records, then every step that reads the whole source: tag nodes, link
    resolution, indexes, privacy, passages, counts."""
    from ctx.tokens import estimate_many

    progress, report = run.progress, run.report
    derived = importer.finalize(session.source_records(source_id))
    check_parsed(derived, "derived", run.limits)
    report.warnings.extend(derived.warnings)
    count = _token_counter(progress, len(derived.nodes))
    _insert(session, importer, source_id, [("", n) for n in derived.nodes], [("", e) for e in derived.edges], count, report)
    # The last phase names each step it waits for, and counts the one that takes long (the
    # passages: 11-14 s at 13k notes), instead of sitting at "saving 0/N".
    _saving(progress, "tags")
    session.insert_tag_nodes(source_id, estimate_many)
    _saving(progress, "links")
    session.resolve_edges(source_id)
    _saving(progress, "indexes")
    session.build_deferred_indexes()
    _saving(progress, "privacy")
    # The user's markers, plus those each source's project adds (the new source's too).
    session.refresh_private_flags(graph_privacy_rules(store))
    session.refresh_passages(None if progress is None else lambda done, total: _saving(progress, "passages", done, total))
    _saving(progress, "counts")
    session.mark_imported(source_id, importer.format)
    session.recount()


def _saving(progress: ProgressFn | None, step: str, done: int = 0, total: int = 1) -> None:
    if progress is not None:
        progress(f"{SAVING}: {step}", done, total)


def _not_older(store: GraphStore, source_id: int, known: dict[str, FileState], plan: _Plan) -> _Plan:
    """What is left to write once the file states are read again under the write lock.

    Files were looked at and parsed before the lock was taken: another import may have committed
    some of them since. A file whose stored state changed meanwhile is left as stored when what
    is stored is at least as recent (by modification time) as what this import read, and a
    deletion is left to the next import: rows are never replaced by an older parse (issue 24, M3;
    a build read COUNTER=24, one 1.7 s later COUNTER=16)."""
    paths = [c.info.relpath for c in plan.changes] + plan.vanished + [f[0] for f in plan.fresh]
    # The store's reader shares the session's connection: it sees what the lock now protects.
    stored = store.reader(include_private=True).file_states_of(source_id, paths)
    if all(stored.get(rel) == known.get(rel) for rel in paths):
        return plan

    def newer_stored(rel: str, mtime_ns: int) -> bool:
        now = stored.get(rel)
        return now != known.get(rel) and now is not None and now[0] >= mtime_ns

    return _Plan(
        changes=[c for c in plan.changes if not newer_stored(c.info.relpath, c.mtime_ns)],
        vanished=[rel for rel in plan.vanished if stored.get(rel) == known.get(rel)],
        fresh=[f for f in plan.fresh if not newer_stored(f[0], f[2].st_mtime_ns)],
        streamed=plan.streamed,
    )


def _batches(files: list[_Stat]) -> list[list[_Stat]]:
    out: list[list[_Stat]] = []
    size = 0
    for entry in files:
        if not out or len(out[-1]) >= BATCH_FILES or size + entry[2].st_size > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(entry)
        size += entry[2].st_size
    return out


def _records_of(changes: list[_Change]) -> tuple[list[tuple[str, NodeRecord]], list[tuple[str, EdgeRecord]]]:
    """The (file, record) pairs of parsed files, undated nodes dated by their file's mtime."""
    nodes: list[tuple[str, NodeRecord]] = []
    edges: list[tuple[str, EdgeRecord]] = []
    for change in changes:
        if change.parsed is None:
            continue
        nodes.extend((change.info.relpath, n) for n in change.parsed.nodes)
        edges.extend((change.info.relpath, e) for e in change.parsed.edges)
        # A file's mtime can be anything `touch -d` allows; only a storable date stands in.
        mtime = change.info.mtime if date_problem(change.info.mtime) is None else None
        for node in change.parsed.nodes:
            _date_undated(node, mtime)
    return nodes, edges


def _date_undated(node: NodeRecord, mtime: float | None) -> None:
    """A node's one known date stands for both (a record with only ``updated`` was not created
    when its file was last touched); the file's mtime only for a node with neither."""
    known = node.created if node.created is not None else node.updated
    if known is None:
        known = mtime
    if node.created is None:
        node.created = known
    if node.updated is None:
        node.updated = known


def _insert(
    session: ImportSession,
    importer: Importer,
    source_id: int,
    nodes: list[tuple[str, NodeRecord]],
    edges: list[tuple[str, EdgeRecord]],
    count: TokenCounter,
    report: ImportReport,
) -> None:
    written = session.insert_records(source_id, nodes, edges, count=count, normalize_key=importer.normalize_key)
    report.warnings.extend(written.warnings)
    report.nodes_written += written.nodes
    report.edges_written += written.edges


def _token_counter(progress: ProgressFn | None, total: int) -> Callable[[list[str]], list[int]]:
    """``estimate_many`` (the stored counts are estimates: builds count what they emit), reporting
    its progress a chunk at a time when someone is watching; the store asks for ``total`` counts in
    all, a part at a time."""
    from ctx.tokens import estimate_many

    if progress is None:
        return estimate_many
    done = 0

    def count(texts: list[str]) -> list[int]:
        nonlocal done
        counts: list[int] = []
        for start in range(0, len(texts), TOKEN_CHUNK):
            counts.extend(estimate_many(texts[start : start + TOKEN_CHUNK]))
            progress(COUNTING, done + len(counts), max(total, done + len(counts)))
        done += len(counts)
        return counts

    return count
