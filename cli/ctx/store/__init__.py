"""The SQLite knowledge graph: the only code that speaks SQL to it.

* ``db``: opening a graph file (WAL, migrated on open), graph settings in ``meta``;
* ``migrations``: the numbered schema; ``transaction``: the one way to write;
* ``records`` + ``writes``: what importers produce and how an import writes it;
* ``reads``: nodes, names, search, edges, statistics; ``outline``: outliner pages and breadcrumbs;
* ``privacy``: the private flag; ``vectors``: node and query embeddings; ``sources``: registered sources;
* ``edge_names``: canonical edge types and the names of walking them backwards.
"""

from ctx.store.db import connect, open_graph

__all__ = ["connect", "open_graph"]
