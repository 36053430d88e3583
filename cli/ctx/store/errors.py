"""The store's failures as the rest of ctx sees them, whatever engine raised them.

Code outside ``ctx.store`` never names a database driver's exception types: it asks here whether
an exception is the database's own (a lock held too long, a read-only graph, a damaged file) and
for the one-line ``CtxError`` that says so. Each engine adds its driver's types here.
"""

from __future__ import annotations

from ctx.errors import CtxError


class GraphBusyError(CtxError):
    """Another writer holds the graph's write lock and did not let go in time (an engine that
    words its own lock wait raises this): a sync stops at once rather than waiting again for
    each of its sources, as a lock error from SQLite does."""


def _psycopg_error(exc: BaseException) -> bool:
    """A PostgreSQL driver error (ctx.store.postgres); psycopg is imported only if it already was."""
    import sys

    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(exc, psycopg.Error)


def is_storage_error(exc: BaseException) -> bool:
    """Whether ``exc`` came from the database itself rather than from ctx's own code."""
    import sqlite3

    return isinstance(exc, sqlite3.Error) or _psycopg_error(exc)


def is_lock_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another writer holds the graph's write lock (raised by the engine, or
    already worded as a one-line error)."""
    if isinstance(exc, GraphBusyError):
        return True
    text = str(exc)
    return (is_storage_error(exc) or isinstance(exc, CtxError)) and ("locked" in text or "busy" in text)


def is_read_only(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite refusing a write to a graph in a read-only file or folder (a
    read-only mount, another user's graph); a PostgreSQL role or replica raises ``AccessRefused``."""
    import sqlite3

    return isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc)


# SQLite's words for pages that do not fit together: a file replaced under open connections, or
# a damaged one.
_MIXED_PAGES = ("malformed", "vtable constructor failed", "not a database")


def is_mixed_pages(exc: BaseException) -> bool:
    """Whether ``exc`` says the graph's pages do not fit together (SQLite: "database disk image is
    malformed", "vtable constructor failed: nodes_fts", ...), as a file replaced under an open
    connection reads; reopened, a replaced file reads right again and a damaged one does not."""
    import sqlite3

    return isinstance(exc, sqlite3.DatabaseError) and any(words in str(exc) for words in _MIXED_PAGES)


def as_ctx_error(exc: BaseException, where: str | None = None) -> CtxError | None:
    """The one-line error for a database failure (``where``: the graph's location), or None
    when ``exc`` is not one the store knows how to word."""
    import sqlite3

    if isinstance(exc, sqlite3.DatabaseError):
        from ctx.store.db import storage_error

        return storage_error(exc, where)
    if _psycopg_error(exc):
        from ctx.store.postgres.db import storage_error as postgres_error

        return postgres_error(exc, where)
    return None
