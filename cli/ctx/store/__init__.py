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

from pathlib import Path
from typing import TYPE_CHECKING

from ctx.store.db import connect, open_graph

if TYPE_CHECKING:
    from ctx.store.protocols import GraphStore

__all__ = ["connect", "open_graph", "open_store"]


def open_store(location: str | Path, *, create: bool = False) -> GraphStore:
    """The graph at ``location`` behind the store's face; NoGraphError if there is none (unless
    ``create``)."""
    from ctx.store.sqlite_store import SqliteStore

    return SqliteStore.open(location, create=create)
