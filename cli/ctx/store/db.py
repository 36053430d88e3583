"""Opening the graph database: one SQLite file per graph, WAL mode, migrated on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctx.errors import CtxError, NoGraphError
from ctx.store.migrations import MIGRATIONS, current_version, migrate


def connect(path: str | Path, *, create: bool = False) -> sqlite3.Connection:
    """Open (and, with ``create``, make) the graph at ``path``, bringing its schema up to date.

    The connection is in autocommit mode: writers open explicit transactions, so an interrupted
    import rolls back to the previous state instead of leaving half a file behind.
    """
    path = Path(path)
    if not create and not path.exists():
        raise NoGraphError(path)
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 5000")
        if current_version(conn) < len(MIGRATIONS):
            conn.execute("PRAGMA journal_mode = WAL")
            migrate(conn)
        elif current_version(conn) > len(MIGRATIONS):
            raise CtxError(
                f"{path} was written by a newer ctx (schema {current_version(conn)}); upgrade ctx"
            )
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        raise CtxError(f"{path} is not a usable ctx graph: {exc}") from None
    return conn


def open_graph(path: str | Path) -> sqlite3.Connection:
    """Open an existing graph for reading."""
    return connect(path, create=False)


def graph_version(conn: sqlite3.Connection) -> int:
    """A counter bumped by every import that changed something; keys caches to the graph state."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    return int(row[0]) if row else 0
