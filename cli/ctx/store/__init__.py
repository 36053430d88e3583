"""The SQLite knowledge graph: the only code that speaks SQL to it.

* ``db``: opening a graph file (WAL, migrated on open), graph settings in ``meta``;
* ``migrations``: the numbered schema; ``transaction``: the one way to write;
* ``records`` + ``writes``: what importers produce and how an import writes it;
* ``reads``: nodes, names, search, edges, statistics; ``outline``: outliner pages and breadcrumbs;
* ``privacy``: the private flag; ``vectors``: node and query embeddings; ``sources``: registered sources.

The rest of ctx sees the graph only through ``ctx.store.protocols`` (``GraphStore``,
``GraphReader``, ``ImportSession``), opened with ``open_store``; the modules above are the SQLite
engine's internals (``sqlite_store`` puts them behind the protocols).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.store.birth import BIRTH_KEY, file_inode, trusted_file
from ctx.store.db import connect, discard_stale_wal, discarded_on_failure, file_birth, open_graph

if TYPE_CHECKING:
    import sqlite3

    from ctx.store.doctor import Checkup
    from ctx.store.protocols import GraphStore
    from ctx.store.types import WordCover

__all__ = ["BIRTH_KEY", "as_store", "check_graph", "connect", "discard_stale_wal", "discarded_on_failure", "file_birth",
           "file_inode", "open_graph", "open_store", "trusted_file", "word_cover"]


def check_graph(location: str | Path) -> Checkup:
    """``ctx doctor``: the graph file checked as it is (SQLite's integrity, then ctx's invariants),
    without opening it the usual way, which a damaged file could fail before any check ran."""
    import sqlite3

    from ctx.store.db import storage_error
    from ctx.store.doctor import StillLocked, check, open_for_check

    try:
        conn = open_for_check(Path(location))
    except sqlite3.DatabaseError as exc:  # not a database at all: said with its path, as stats says it
        raise storage_error(exc, location) from None
    try:
        return check(conn, Path(location))
    except StillLocked as exc:
        raise storage_error(exc.error, location) from None
    finally:
        conn.close()


def word_cover(words: Sequence[str], texts: Sequence[tuple[str, str]]) -> WordCover:
    """Which of ``words`` each (title, body) of ``texts`` holds, cut as the stemmed passage index
    cuts them, and the share of each title the words say (``ctx.store.word_cut``)."""
    from ctx.store.word_cut import cover

    return cover(words, texts)


def open_store(location: str | Path, *, create: bool = False) -> GraphStore:
    """The graph at ``location`` behind the store's face; NoGraphError if there is none (unless
    ``create``)."""
    from ctx.paths import is_db_url

    if is_db_url(location):
        from ctx.store.postgres.store import PostgresStore

        return PostgresStore.open(str(location), create=create)
    from ctx.store.sqlite_store import SqliteStore

    return SqliteStore.open(location, create=create)


def as_store(graph: GraphStore | sqlite3.Connection) -> GraphStore:
    """A store as it is; a bare SQLite connection (as tests and scripts open with ``connect``)
    wrapped in one. The library's entry points take either."""
    import sqlite3

    if isinstance(graph, sqlite3.Connection):
        from ctx.store.sqlite_store import SqliteStore

        return SqliteStore(graph)
    return graph
