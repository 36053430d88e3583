"""The SQLite engine behind the store's face (``ctx.store.protocols``): one graph file.

``SqliteStore`` is a ``GraphStore``: it owns the connection, makes ``GraphView`` readers and
``SqliteSession`` write sessions (one ``BEGIN IMMEDIATE`` transaction each). The module functions of
``ctx.store`` (``writes``, ``reads``, ``passages``, ``privacy``, ...) are this engine's
internals; nothing outside ``ctx.store`` calls them. The write side's modules load on the first
write: a build opens a store and reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.store.transaction import savepoint, transaction
from ctx.store.types import EdgeRecord, FileRecord, NodeRecord, Removed, Written
from ctx.store.view import ConnectionMarks, GraphView

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader, GraphStore, ImportSession, KeyNormalizer, SourceRecords, StreamedWrites, TokenCounter
    import numpy as np

    from ctx.config import PrivacyConfig, PrivacyRules


@dataclass
class SqliteSession:
    """An ``ImportSession`` on one connection, inside the transaction its store opened."""

    conn: sqlite3.Connection
    _deferred: list[str] | None = None
    _content_triggers: list[str] | None = None  # the content counter's, set aside until ``finish``
    _savepoints: int = 0
    _deferred_text: ExitStack | None = None

    def ensure_source(self, root: Path, fmt: str) -> int:
        from ctx.store import writes

        return writes.ensure_source(self.conn, root, fmt)

    def forget_files(self, source_id: int, replaced: list[str], vanished: list[str]) -> None:
        from ctx.store import writes

        writes.forget_files(self.conn, source_id, replaced, vanished)

    def record_files(self, source_id: int, files: list[FileRecord]) -> None:
        from ctx.store import writes

        writes.record_files(self.conn, source_id, files)

    def forget_derived(self, source_id: int) -> None:
        from ctx.store import writes

        writes.forget_derived(self.conn, source_id)

    def defer_indexes(self) -> None:
        from ctx.store import writes

        if self._content_triggers is None:
            self._content_triggers = writes.set_content_counter_aside(self.conn)
        self._deferred = (self._deferred or []) + writes.defer_indexes(self.conn)
        if self._deferred_text is None:
            # Into an empty graph, the nodes' full-text indexes are filled once, at the end.
            self._deferred_text = ExitStack()
            self._deferred_text.enter_context(writes.nodes_indexed_at_end(self.conn))

    def build_deferred_indexes(self) -> None:
        from ctx.store import writes

        writes.build_indexes(self.conn, self._deferred or [])
        self._deferred = None
        if self._deferred_text is not None:
            self._deferred_text.close()
            self._deferred_text = None

    def finish(self) -> None:
        """The last step of a session that wrote without error, before its commit: the content
        counter's triggers set aside by ``defer_indexes`` are made again."""
        from ctx.store import counts, writes

        if self._content_triggers:
            writes.build_indexes(self.conn, self._content_triggers)
        self._content_triggers = None
        writes.forget_tracking(self.conn)  # already done by resolve_edges, when it ran
        counts.stop_tracking(self.conn)  # and by recount

    def insert_records(
        self,
        source_id: int,
        nodes: list[tuple[str, NodeRecord]],
        edges: list[tuple[str, EdgeRecord]],
        *,
        count: TokenCounter,
        normalize_key: KeyNormalizer,
    ) -> Written:
        from ctx.store import writes

        return writes.insert_records(self.conn, source_id, nodes, edges, count=count, normalize_key=normalize_key)

    def streamed_file(self, source_id: int, rel: str, *, count: TokenCounter, normalize_key: KeyNormalizer) -> StreamedWrites:
        from ctx.store.streamed import StreamedFile

        return StreamedFile(self.conn, source_id, rel, count=count, normalize_key=normalize_key)

    def file_savepoint(self) -> AbstractContextManager[None]:
        return self._savepoint()

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._savepoints += 1
        try:
            with savepoint(self.conn, f"file_{self._savepoints}"):
                yield
        finally:
            self._savepoints -= 1

    def source_records(self, source_id: int) -> SourceRecords:
        from ctx.store import writes

        return writes.SourceView(self.conn, source_id)

    def insert_tag_nodes(self, source_id: int, count: TokenCounter) -> None:
        from ctx.store import writes

        writes.insert_tag_nodes(self.conn, source_id, count)

    def resolve_edges(self, source_id: int) -> None:
        from ctx.store import writes

        # A first import (its indexes set aside) resolves every edge; later ones, what changed.
        writes.resolve_edges(self.conn, source_id, bulk=bool(self._deferred))

    def refresh_private_flags(self, config: PrivacyConfig | PrivacyRules) -> int:
        from ctx.store.privacy import refresh_private_flags

        return refresh_private_flags(self.conn, config)

    def refresh_passages(self, progress: Callable[[int, int], None] | None = None) -> int:
        from ctx.store import passages

        return passages.refresh(self.conn) if progress is None else passages.refresh(self.conn, progress)

    def mark_imported(self, source_id: int, fmt: str) -> None:
        from ctx.store import writes

        writes.mark_imported(self.conn, source_id, fmt)

    def bump_graph_version(self) -> None:
        from ctx.store import writes

        writes.bump_graph_version(self.conn)

    def recount(self) -> None:
        from ctx.store import counts

        counts.recount(self.conn)

    def remove_source(self, source_id: int, config: PrivacyConfig | PrivacyRules) -> Removed:
        from ctx.store import counts

        from ctx.store.sources import remove_source

        removed = remove_source(self.conn, source_id)
        # A node below a removed private one is no longer hidden by it (and vice versa); the
        # counts are stored again for the flags as they are now.
        self.refresh_private_flags(config)
        counts.recount(self.conn)
        return removed

    def set_setting(self, key: str, value: str) -> None:
        from ctx.store.db import set_meta

        set_meta(self.conn, key, value)

    def set_active_model(self, model: str) -> None:
        from ctx.store import vectors

        vectors.set_active_model(self.conn, model)

    def write_vectors(self, model: str, rows: Iterable[tuple[str, str, np.ndarray]]) -> int:
        from ctx.store import vectors

        return vectors.write_vectors(self.conn, model, rows)

    def write_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        from ctx.store import vectors

        vectors.write_passage_vectors(self.conn, model, rows)

    def write_paragraph_vectors(self, model: str, rows: list[tuple[str, str, np.ndarray]]) -> None:
        from ctx.store import vectors

        vectors.write_paragraph_vectors(self.conn, model, rows)

    def copy_paragraph_vectors(self, model: str, rows: list[tuple[str, str]]) -> int:
        from ctx.store import vectors

        return vectors.copy_paragraph_vectors(self.conn, model, rows)

    def prune_paragraph_vectors(self, model: str, stale: list[tuple[str, str]] | None = None) -> int:
        from ctx.store import vectors

        return vectors.prune_paragraph_vectors(self.conn, model, stale)

    def prune_orphan_vectors(self, model: str | None = None, also_keep: str | None = None) -> int:
        from ctx.store import vectors

        return vectors.prune_orphans(self.conn, model, also_keep)

    def index_vectors(self, model: str) -> bool:
        """Nothing: SQLite ranks every vector exactly (a matrix cached beside the graph)."""
        return False


class SqliteStore:
    """A graph file opened by ``ctx.store.db.connect`` (WAL, migrated, checked to be ctx's)."""

    def __init__(self, conn: sqlite3.Connection, location: str | None = None) -> None:
        self._conn = conn
        self._location = location
        self._session: SqliteSession | None = None
        self._marks = ConnectionMarks()  # shared by this connection's views (GraphView.warm_state)

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False) -> SqliteStore:
        from ctx.store.db import connect

        return cls(connect(path, create=create), str(path))

    @property
    def location(self) -> str:
        if self._location is None:
            found = [row[2] for row in self._conn.execute("PRAGMA database_list") if row[1] == "main"]
            self._location = found[0] if found and found[0] else ":memory:"
        return self._location

    def reader(self, *, include_private: bool = False) -> GraphReader:
        return GraphView(self._conn, include_private, marks=self._marks)

    def share_warm_state(self, family: Hashable) -> None:
        self._marks.family = family

    def import_session(self, *, bulk: bool = False) -> AbstractContextManager[ImportSession]:
        return self._session_block(bulk)

    @contextmanager
    def _session_block(self, bulk: bool) -> Iterator[ImportSession]:
        from ctx.store import writes

        if self._session is not None:
            yield self._session  # joins the open session, as ``transaction`` joins a transaction
            return
        cache = writes.import_cache(self._conn) if bulk else _nothing()
        with cache, transaction(self._conn):
            self._session = SqliteSession(self._conn)
            try:
                yield self._session
                self._session.finish()
            finally:
                self._session = None

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        from ctx.store.db import busy_timeout_ms

        self._conn.execute("PRAGMA busy_timeout = 0")
        try:
            yield
        finally:
            self._conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")

    def close(self) -> None:
        self._conn.close()

    def abandon(self) -> bool:
        from ctx.store.db import close_without_checkpoint

        return close_without_checkpoint(self._conn)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _conforms(conn: sqlite3.Connection) -> tuple[GraphStore, GraphReader, ImportSession]:
    """Never called: mypy checks here that the SQLite classes implement the protocols."""
    return SqliteStore(conn), GraphView(conn), SqliteSession(conn)
