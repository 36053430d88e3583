"""Node and edge counts by type for ``ctx stats``, kept by the store instead of counted per call.

Counting the edges a reader may see joins every edge with both of its ends (seconds at a million
edges). So each write that changes nodes, edges or privacy counts once, inside its own
transaction, both visibilities in one pass, and stores the result in ``meta``. A reader takes
the stored counts when their key still describes the graph (graph version and the node, edge and
private-node totals, all cheap to read); a graph written otherwise is counted live.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

_KEY = "counts"


def recount(conn: sqlite3.Connection) -> None:
    """Store the counts of the graph as it is now (inside the caller's transaction)."""
    stored = {"key": _key(conn), **_count(conn)}
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_KEY, json.dumps(stored)))


def by_type(conn: sqlite3.Connection, *, include_private: bool) -> tuple[dict[str, int], dict[str, int]]:
    """(nodes by type, edges by type) as a reader sees them: a type, or an edge type, that only
    private nodes carry is left out unless ``include_private``."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    stored = json.loads(row[0]) if row else None
    counts = stored if stored is not None and stored.get("key") == _key(conn) else _count(conn)
    which = "all" if include_private else "visible"
    return counts["nodes"][which], counts["edges"][which]


def kept_and_counted(conn: sqlite3.Connection) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the counts kept, a recount now) when the kept ones claim to describe the graph as it is
    (their key matches), else None: what ``ctx doctor`` compares."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    stored = json.loads(row[0]) if row else None
    if stored is None or stored.get("key") != _key(conn):
        return None
    return stored, _count(conn)


def private_nodes(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0])


def _key(conn: sqlite3.Connection) -> list[int]:
    version = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    nodes = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    edges = conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
    return [int(version[0]) if version else 0, int(nodes), int(edges), private_nodes(conn)]


def _count(conn: sqlite3.Connection) -> dict[str, Any]:
    nodes: dict[str, dict[str, int]] = {"all": {}, "visible": {}}
    for node_type, total, visible in conn.execute(
        "SELECT type, COUNT(*), SUM(private = 0) FROM nodes GROUP BY type ORDER BY type"
    ):
        nodes["all"][node_type] = total
        if visible:
            nodes["visible"][node_type] = visible
    # An edge counts under its type when its source node exists; a reader who may not see
    # private nodes sees it when neither end is private (an unresolved end hides nothing).
    # Joining every edge with its two nodes reads every node row once per edge (2 s at 100k
    # notes); instead the edges are counted from their index per distinct source, and those
    # that touch one of the few private nodes are found through the private nodes.
    every = dict(
        conn.execute(
            "SELECT type, SUM(n) FROM (SELECT src, type, COUNT(*) AS n FROM edges GROUP BY src, type) g"
            " WHERE EXISTS (SELECT 1 FROM nodes s WHERE s.id = g.src) GROUP BY type ORDER BY type"
        ).fetchall()
    )
    hidden = dict(
        conn.execute(
            "SELECT type, COUNT(*) FROM edges e WHERE e.id IN ("
            " SELECT id FROM edges WHERE src IN (SELECT id FROM nodes WHERE private = 1)"
            " UNION SELECT id FROM edges WHERE dst IN (SELECT id FROM nodes WHERE private = 1))"
            " AND EXISTS (SELECT 1 FROM nodes s WHERE s.id = e.src) GROUP BY type"
        ).fetchall()
    )
    edges = {
        "all": every,
        "visible": {t: n - hidden.get(t, 0) for t, n in every.items() if n > hidden.get(t, 0)},
    }
    return {"nodes": nodes, "edges": edges}
