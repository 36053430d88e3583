"""The SQLite knowledge graph: schema, migrations, reads and writes."""

from ctx.store.db import connect, open_graph

__all__ = ["connect", "open_graph"]
