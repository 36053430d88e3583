"""Opening a team graph on PostgreSQL: a ``postgresql://`` URL, migrated on open, refused when the
database holds something ctx did not make.

psycopg (3) is imported here only, when a URL asks for PostgreSQL: the SQLite path never pays
for it. Connections are in autocommit mode like SQLite's; writers open transactions explicitly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ctx.errors import AccessRefused, CtxError, NoGraphError
from ctx.store.postgres.migrations import APPLICATION, MIGRATIONS

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql://", "postgres://")

# Advisory lock keys: (class, object). The class is "ctxG" in ASCII, as SQLite's application id.
LOCK_CLASS = 0x63747847
MIGRATE_LOCK = 1
GRAPH_WRITE_LOCK = 2


class NotAGraphError(CtxError):
    """The database holds tables that are not a ctx graph's; nothing was written to it."""


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    netloc = f"{parts.username}:***@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise CtxError(
            "a postgresql:// graph needs psycopg: pip install 'ctx-graph[postgres]'"
        ) from None
    return psycopg


def connect(url: str, *, create: bool = False) -> "psycopg.Connection[Any]":
    """Open (and, with ``create``, make) the graph at ``url``, bringing its schema up to date.

    A database with no tables is a graph not made yet: a read command says so (like a missing
    file), an import makes it. One with tables but no ``ctx_schema`` is refused.
    """
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=_connect_timeout(), application_name="ctx")
    except psycopg.Error as exc:
        raise CtxError(f"cannot connect to {redact(url)}: {_first_line(exc)}") from None
    try:
        version = current_version(conn)
        if version is None:
            if _has_tables(conn):
                raise NotAGraphError(
                    f"{redact(url)} holds tables that are not a ctx graph; nothing was written to it"
                    " (give --db an empty database, or a schema of its own with ?options=-csearch_path%3Dctx)"
                )
            if not create:
                raise NoGraphError(redact(url))
            version = 0
        if version > len(MIGRATIONS):
            raise CtxError(f"{redact(url)} was written by a newer ctx (schema {version}); upgrade ctx")
        if version < len(MIGRATIONS):
            migrate(conn)
        _register_vector(conn)
    except psycopg.Error as exc:
        conn.close()
        raise storage_error(exc, url) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _register_vector(conn: "psycopg.Connection[Any]") -> None:
    """pgvector's adapter, when installed: vectors travel as binary float4 (numpy float32, exact)
    instead of text."""
    try:
        from pgvector.psycopg import register_vector
    except ImportError:
        return
    register_vector(conn)


def _connect_timeout() -> int:
    value = os.environ.get("CTX_PG_CONNECT_TIMEOUT", "")
    return int(value) if value.isdigit() else 10


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def current_version(conn: "psycopg.Connection[Any]") -> int | None:
    """The graph's schema version, or None when the database (its search path) has no ctx graph."""
    row = conn.execute("SELECT to_regclass('ctx_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return None
    found = conn.execute("SELECT application, version FROM ctx_schema").fetchone()
    if found is None or found[0] != APPLICATION:
        raise NotAGraphError("a ctx_schema table that is not ctx's; nothing was written")
    return int(found[1])


def _has_tables(conn: "psycopg.Connection[Any]") -> bool:
    """Whether the first schema of the search path holds any table or view."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace"
        " WHERE s.nspname = current_schema() AND c.relkind IN ('r', 'v', 'm', 'p', 'f'))"
    ).fetchone()
    return row is not None and bool(row[0])


def migrate(conn: "psycopg.Connection[Any]") -> int:
    """Apply every migration not yet applied, each in one transaction with its version bump,
    under an advisory lock: two processes making the same new graph do it once."""
    for number, script in enumerate(MIGRATIONS, start=1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_CLASS, MIGRATE_LOCK))
            version = current_version(conn) or 0
            if version >= number:
                continue
            if any(line.strip() and not line.strip().startswith("--") for line in script.splitlines()):
                conn.execute(script)  # a fixed script of ours, no parameters
            conn.execute("UPDATE ctx_schema SET version = %s", (number,))
    return current_version(conn) or 0


def storage_error(exc: BaseException, url: str | None = None) -> CtxError:
    """One line for what the server refused."""
    where = redact(url) if url else "the graph"
    sqlstate = getattr(exc, "sqlstate", None) or ""
    message = _first_line(exc)
    if sqlstate == "42501":  # insufficient_privilege
        return AccessRefused(f"{where}: this role may not do that ({message}); see docs/team.md for the roles")
    if sqlstate in ("55P03", "40P01"):  # lock_not_available, deadlock_detected
        return CtxError(f"{where} is locked by another writer: {message}. Try again when it has finished")
    if sqlstate == "25006":  # read_only_sql_transaction (a replica)
        return AccessRefused(f"{where} is read-only (a replica, or a read-only transaction): it can be read, not changed")
    return CtxError(f"{where}: {message}")
