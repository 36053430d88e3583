"""The PostgreSQL engine behind the store's face: a team graph at a ``postgresql://`` URL.

``PostgresStore`` is a ``GraphStore`` (ctx.store.protocols): one connection, readers made on it,
and write sessions of one transaction each. Writers take the graph's write lock, an advisory
lock every ctx on every machine asks for: two ``ctx sync`` runs into the same graph never
interleave, the second waits (up to ``$CTX_BUSY_TIMEOUT_MS``, 30 s by default) and then says in
one line that the graph is busy. Readers never wait for writers (MVCC): a build reads the graph
as the last committed import left it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from ctx.store.errors import GraphBusyError
from ctx.store.postgres import db
from ctx.store.postgres.reader import PostgresReader
from ctx.store.postgres.session import PostgresSession

if TYPE_CHECKING:
    import psycopg

    from ctx.store.protocols import GraphReader, ImportSession


class PostgresStore:
    def __init__(self, conn: "psycopg.Connection[Any]", url: str) -> None:
        self._conn = conn
        self._url = url
        self._session: PostgresSession | None = None
        self._wait = True

    @classmethod
    def open(cls, url: str, *, create: bool = False) -> PostgresStore:
        return cls(db.connect(url, create=create), url)

    @property
    def location(self) -> str:
        return db.redact(self._url)

    @property
    def connection(self) -> "psycopg.Connection[Any]":
        """For the engine's own tests and benchmarks; nothing outside ``ctx.store`` uses it."""
        return self._conn

    def reader(self, *, include_private: bool = False) -> GraphReader:
        return PostgresReader(self._conn, include_private)

    def share_warm_state(self, family: Hashable) -> None:
        """Nothing: a warm process keeps nothing of a PostgreSQL graph (``warm_state`` is None)."""

    def import_session(self, *, bulk: bool = False) -> AbstractContextManager[ImportSession]:
        return self._session_block()

    @contextmanager
    def _session_block(self) -> Iterator[ImportSession]:
        if self._session is not None:
            yield self._session  # joins the open session instead of nesting
            return
        import psycopg

        from ctx.store.db import busy_timeout_ms

        try:
            with self._conn.transaction():
                waited = int(busy_timeout_ms()) if self._wait else 0
                busy = GraphBusyError(
                    f"{self.location} is busy: being written by another ctx (an import, sync or embed still"
                    f" running?); waited {waited / 1000:g} s. Try again when it has finished"
                )
                if not self._wait:
                    taken = self._conn.execute(
                        "SELECT pg_try_advisory_xact_lock(%s, %s)", (db.LOCK_CLASS, db.GRAPH_WRITE_LOCK)
                    ).fetchone()
                    if not taken or not taken[0]:
                        raise busy
                else:
                    self._conn.execute(f"SET LOCAL lock_timeout = {waited}")
                    try:
                        self._conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (db.LOCK_CLASS, db.GRAPH_WRITE_LOCK))
                    except psycopg.errors.LockNotAvailable:
                        raise busy from None
                self._conn.execute("SET LOCAL lock_timeout = 0")
                self._session = PostgresSession(self._conn)
                try:
                    yield self._session
                finally:
                    self._session = None
        except psycopg.Error as exc:
            raise db.storage_error(exc, self._url) from None

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """Write sessions in the block fail at once when another writer holds the lock."""
        before, self._wait = self._wait, False
        try:
            yield
        finally:
            self._wait = before

    def close(self) -> None:
        self._conn.close()

    def abandon(self) -> bool:
        self.close()  # the server keeps the graph: nothing of it is written on close
        return True
