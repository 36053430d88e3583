"""Opening the graph database: one SQLite file per graph, WAL mode, migrated on open.

A graph file is marked as ctx's with ``PRAGMA application_id``. A path that holds anything else
is refused before a single byte is written: another application's SQLite database is never given
ctx's tables or switched to WAL, and a read command on an empty file does not turn it into a
graph. A graph in a read-only file or folder can still be read; a lock held by another process is
waited for (30 s by default) and then reported in one line, as is a write to a read-only graph.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ctx.errors import CtxError, NoGraphError, UsageError
from ctx.store.migrations import APPLICATION_ID, MIGRATIONS, current_version, migrate, readable_as_is

# Long enough for an import or `ctx embed` batch to commit; after it, "locked" is reported.
# $CTX_BUSY_TIMEOUT_MS changes it (a script that would rather fail fast).
DEFAULT_BUSY_TIMEOUT_MS = 30_000


def busy_timeout_ms() -> int:
    value = os.environ.get("CTX_BUSY_TIMEOUT_MS", "")
    return int(value) if value.isdigit() else DEFAULT_BUSY_TIMEOUT_MS
# Tables every ctx graph has had since migration 1: a file with them and a schema version but no
# application id was written by a ctx from before the mark (it gets the mark on its next write).
GRAPH_TABLES = frozenset({"meta", "sources", "files", "nodes", "edges", "node_keys"})


class NotAGraphError(CtxError):
    """The path holds a database that is not a ctx graph; nothing was written to it."""


def connect(path: str | Path, *, create: bool = False) -> sqlite3.Connection:
    """Open (and, with ``create``, make) the graph at ``path``, bringing its schema up to date.

    The connection is in autocommit mode: writers open explicit transactions, so an interrupted
    import rolls back to the previous state instead of leaving half a file behind.
    """
    from ctx.paths import db_url_scheme

    scheme = db_url_scheme(path)  # an engine this build cannot open is an error, never a path
    if scheme is not None:
        raise UsageError(f"a {scheme}:// graph is not a SQLite file")
    path = Path(path)
    if path.is_dir():
        raise CtxError(f"{path} is a folder, not a graph file; give --db a file (such as {path / 'graph.db'})")
    if not create and not path.exists():
        raise NoGraphError(path)
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = _open(path, create=create)
        version = current_version(conn)
        if version > len(MIGRATIONS):
            raise CtxError(f"{path} was written by a newer ctx (schema {version}); upgrade ctx")
        if version < len(MIGRATIONS):
            try:
                if version == 0 and create:
                    _set_page_size(conn)
                _use_wal(conn)
                # Before the migrations, not after: each runs in its own transaction, and with
                # SQLite's default (FULL) every one of their commits waited for the disk -- a new
                # graph's 18 took ~160 ms of wall time for ~25 ms of work. In WAL mode NORMAL
                # still never leaves a half-applied migration; a power cut can at worst undo the
                # last ones, which the next open applies again.
                conn.execute("PRAGMA synchronous = NORMAL")
                migrate(conn)
                if version == 0 and create:
                    # Born here: the file records its own inode, which no copy carries (ctx/trust.py).
                    conn.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES ('birth', ?)", (str(os.stat(path).st_ino),)
                    )
            except sqlite3.OperationalError as exc:
                if create or "readonly" not in str(exc) or not readable_as_is(version):
                    raise
                # A read-only graph from an older ctx that lacks only what reading can do
                # without: read it as it is.
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        raise storage_error(exc, path) from None
    return conn


@contextmanager
def discarded_on_failure(path: str | Path) -> Iterator[None]:
    """A graph that did not exist before the block is removed again if the block fails: its file,
    WAL and shared-memory files, and the folders made for it. ``ctx import does-not-exist`` must
    not leave an empty graph behind (after which every build said "no node matches" instead of
    "no graph"). Connections to it must be closed inside the block."""
    from ctx.paths import is_db_url

    if is_db_url(path):  # a database server's graph: a failed first import committed nothing
        yield
        return
    path = Path(path)
    if path.exists():
        yield
        return
    missing = [folder for folder in path.absolute().parents if not folder.exists()]
    try:
        yield
    except BaseException:
        if _open_elsewhere(path):
            # Another process made the same new graph at the same instant (two first imports)
            # and is writing it: removed, its next statement failed with "no such file".
            raise
        for leftover in (path, *(Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))):
            try:
                leftover.unlink()
            except OSError:
                pass
        for folder in missing:  # deepest first
            try:
                folder.rmdir()
            except OSError:
                break
        raise


# Page size of a new graph file. Nodes rows are mostly a note's body (~1-2 KB in a typical vault),
# and a 4 KB page holds two of them with a third of the page left over: at 100k markdown notes the
# nodes table took 1.38x the raw text for 1.07x of rows. 8 KB pages hold five or six, and the
# graph file is ~4% smaller (10k generated notes, vacuumed: 6.44x -> 6.27x the raw markdown,
# 4.27x -> 4.15x the JSON); 16 KB saves only 0.03-0.05x more for reads twice as large. A file
# keeps the page size it was made with (SQLite cannot change it in WAL mode): older graphs
# stay at 4 KB and read as before.
PAGE_SIZE = 8192


def _set_page_size(conn: sqlite3.Connection) -> None:
    """Before the first table of a new file is written (a no-op on a file that has pages)."""
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")


def _use_wal(conn: sqlite3.Connection) -> None:
    """Switch a graph to WAL, waiting like any other lock if another process holds the file.

    SQLite answers a journal-mode change that meets a lock with "database is locked" at once,
    without calling the busy handler, so two first imports of the same new graph would fail one
    of them; this waits up to the same busy timeout instead.
    """
    deadline = time.monotonic() + busy_timeout_ms() / 1000
    pause = 0.005
    while True:
        try:
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)


def _open(path: Path, *, create: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
    try:
        _check_ours(conn, path, create=create)
    except sqlite3.OperationalError as exc:
        if create or "unable to open" not in str(exc):
            conn.close()
            raise
        # A WAL graph in a read-only folder: SQLite cannot create the shared-memory file readers
        # normally use. Opened immutable, it is read as the file stands.
        conn.close()
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?immutable=1", uri=True, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        _check_ours(conn, path, create=False)
    return conn


def _check_ours(conn: sqlite3.Connection, path: Path, *, create: bool) -> None:
    """Refuse, before any write, a database that is not a ctx graph (reads the header only)."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    if application_id == APPLICATION_ID:
        return
    if application_id != 0:
        raise NotAGraphError(
            f"{path} is another application's SQLite database (application id {application_id}),"
            " not a ctx graph; nothing was written to it (give --db a new file)"
        )
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables and current_version(conn) == 0:
        if create:
            return  # a new (or empty) file: the import makes it a graph
        raise NoGraphError(path)
    if current_version(conn) >= 1 and GRAPH_TABLES <= tables:
        return  # a graph from a ctx that did not mark its files yet
    raise NotAGraphError(
        f"{path} is a SQLite database that is not a ctx graph; nothing was written to it"
        " (give --db a new file)"
    )


# What rebuilds any graph: its sources are the truth, the file only a cache of them.
REBUILD_HINT = "rebuild it from its sources: move the file aside and `ctx import` each source again (`ctx sources` lists them)"


def storage_error(exc: sqlite3.DatabaseError, path: str | Path | None = None) -> CtxError:
    """One line for what SQLite refused: a lock held too long, a read-only graph, not a database."""
    message = str(exc)
    where = f"{path}" if path is not None else "the graph"
    if "locked" in message or "busy" in message:
        return CtxError(
            f"{where} is locked by another process (an import, sync or embed still running?);"
            f" waited {busy_timeout_ms() / 1000:g} s. Try again when it has finished"
        )
    if "readonly" in message or "read-only" in message:
        return CtxError(f"{where} is read-only (the file or its folder): it can be read, not changed")
    if "unable to open" in message:
        return CtxError(f"cannot open {where} for writing: the file or its folder is read-only, or missing")
    if "malformed" in message or "vtable constructor failed" in message:
        return CtxError(f"{where} is damaged ({message}): `ctx doctor` says where; to repair, {REBUILD_HINT}")
    if "not a database" in message:
        return NotAGraphError(f"{where} is not a usable ctx graph: {message}")
    return CtxError(f"{where}: {message}")


def file_birth(path: str | Path) -> str | None:
    """The ``birth`` mark (meta, written when the file was created) as the main file holds it,
    read without the graph's WAL or shared memory (``immutable``): what tells a graph copied over
    this path from the graph that was here, whose pages a WAL left beside it may still hold.
    None when the file alone does not say (no mark yet, not a graph, a page being written)."""
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?immutable=1", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'birth'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


# SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: the last connection to close does not copy the WAL into the file.
_NO_CHECKPOINT_ON_CLOSE = 1006


def close_without_checkpoint(conn: sqlite3.Connection) -> bool:
    """Close ``conn`` without the checkpoint SQLite runs when the last connection to a graph
    closes, which copies the write-ahead log into the file: when the file was replaced under the
    connection (``cp`` over it), that log holds the old graph's pages, and copying them would mix
    them into the new graph on disk. False (and the connection left open) where this Python
    cannot ask SQLite for it."""
    if hasattr(conn, "setconfig"):  # Python 3.12+
        conn.setconfig(_NO_CHECKPOINT_ON_CLOSE, True)
        conn.close()
        return True
    if not _no_checkpoint_by_ctypes(conn):
        return False
    conn.close()
    return True


def _no_checkpoint_by_ctypes(conn: sqlite3.Connection) -> bool:
    """``sqlite3_db_config`` called on the connection's handle: the first field after the object
    header in CPython 3.11's connection object, checked by asking SQLite the file's name first."""
    import ctypes
    import sys

    if sys.implementation.name != "cpython":
        return False
    try:
        import _sqlite3

        library = ctypes.CDLL(_sqlite3.__file__)
        handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value
        library.sqlite3_db_filename.restype = ctypes.c_char_p
        library.sqlite3_db_filename.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        main = conn.execute("PRAGMA database_list").fetchone()[2]
        if not handle or library.sqlite3_db_filename(handle, b"main") != os.fsencode(main):
            return False
        now = ctypes.c_int(-1)
        result = library.sqlite3_db_config(
            ctypes.c_void_p(handle), ctypes.c_int(_NO_CHECKPOINT_ON_CLOSE), ctypes.c_int(1), ctypes.byref(now)
        )
        return result == 0 and now.value == 1
    except (OSError, AttributeError, ValueError, sqlite3.Error):
        return False


# SQLite's lock bytes (the file format's "lock-byte page"): every connection to a WAL graph holds
# a read lock on this range for as long as it is open.
_SHARED_FIRST = 0x40000000 + 2
_SHARED_SIZE = 510


def _open_elsewhere(path: Path) -> bool:
    """Whether another process has the SQLite graph at ``path`` open (the read lock every open
    connection holds on SQLite's shared range; this process's own locks never conflict)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        with open(path, "r+b") as file:
            try:
                fcntl.lockf(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, _SHARED_SIZE, _SHARED_FIRST)
            except OSError:
                return True
            fcntl.lockf(file.fileno(), fcntl.LOCK_UN, _SHARED_SIZE, _SHARED_FIRST)
    except OSError:
        return False
    return False


def discard_stale_wal(path: str | Path) -> bool:
    """Remove the write-ahead log and shared-memory files beside ``path`` -- the log of a graph
    no longer in the file -- when no other process has the graph open (this process must have
    closed its connections first). False, and nothing removed, when one does (it still reads or
    writes through that log) or when it cannot be told."""
    try:
        import fcntl
    except ImportError:
        return False
    path = Path(path)
    try:
        with open(path, "r+b") as file:
            try:
                fcntl.lockf(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, _SHARED_SIZE, _SHARED_FIRST)
            except OSError:
                return False  # another process holds it
            try:
                for suffix in ("-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            finally:
                fcntl.lockf(file.fileno(), fcntl.LOCK_UN, _SHARED_SIZE, _SHARED_FIRST)
    except OSError:
        return False
    return True


def open_graph(path: str | Path) -> sqlite3.Connection:
    """Open an existing graph for reading."""
    return connect(path, create=False)


def graph_version(conn: sqlite3.Connection) -> int:
    """A counter bumped by every import that changed something; keys caches to the graph state."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    return int(row[0]) if row else 0


def content_state(conn: sqlite3.Connection) -> tuple[str, int]:
    """What moves whenever a row a build reads was written by any connection (migration 16's
    counter), so that a process can tell its kept results still hold. A read-only graph from
    before the counter falls back to ``PRAGMA data_version``, which moves on any other
    connection's commit, manifests and cached query vectors included."""
    try:
        row = conn.execute("SELECT n FROM content_version").fetchone()
    except sqlite3.OperationalError:
        row = None
    if row is not None:
        return ("content", int(row[0]))
    return ("data", int(conn.execute("PRAGMA data_version").fetchone()[0]))


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    """One graph setting; outside a transaction it commits on its own (autocommit)."""
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def set_meta_nowait(conn: sqlite3.Connection, key: str, value: str) -> None:
    """``set_meta`` if the graph takes the write at once; a read-only or busy graph (an import
    holds the lock) just means the setting is not stored this time. Never waits: the connection
    would otherwise wait up to its busy timeout, and a reader must not stall behind an import."""
    waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        set_meta(conn, key, value)
    except sqlite3.OperationalError:
        pass
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")
