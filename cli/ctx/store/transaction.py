"""One way to write: a transaction that commits on success and rolls back on any exception."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; ``ROLLBACK`` on any exception, Ctrl-C included.

    Joins a transaction that is already open instead of nesting (SQLite cannot), so a helper that
    writes can be called both on its own and from inside an import.
    """
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def savepoint(conn: sqlite3.Connection, name: str) -> Iterator[sqlite3.Connection]:
    """``SAVEPOINT`` ... ``RELEASE``, undone on any exception: nests inside an open transaction
    (an import's) or stands on its own (a reader's temporary tables, in autocommit mode)."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")
