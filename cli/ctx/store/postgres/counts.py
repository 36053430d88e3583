"""Node and edge counts by type for ``ctx stats``, stored by each write (``ctx.store.counts``).

Keyed like SQLite's by (graph version, nodes, edges, private nodes); a reader whose role may
not read the stored counts (they name the types private nodes carry) counts what it can see.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

_KEY = "counts"


def recount(conn: "psycopg.Connection[Any]") -> None:
    stored = {"key": _key(conn), **_count(conn)}
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (_KEY, json.dumps(stored)),
    )


def by_type(conn: "psycopg.Connection[Any]", *, include_private: bool) -> tuple[dict[str, int], dict[str, int]]:
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (_KEY,)).fetchone()
    stored = json.loads(row[0]) if row else None
    counts = stored if stored is not None and stored.get("key") == _key(conn) else _count(conn)
    which = "all" if include_private else "visible"
    return counts["nodes"][which], counts["edges"][which]


def _key(conn: "psycopg.Connection[Any]") -> list[int]:
    row = conn.execute(
        "SELECT (SELECT value FROM meta WHERE key = 'graph_version'), (SELECT count(*) FROM nodes),"
        " (SELECT count(*) FROM edges), (SELECT count(*) FROM nodes WHERE private)"
    ).fetchone()
    assert row is not None
    return [int(row[0]) if row[0] else 0, int(row[1]), int(row[2]), int(row[3])]


def _count(conn: "psycopg.Connection[Any]") -> dict[str, Any]:
    nodes: dict[str, dict[str, int]] = {"all": {}, "visible": {}}
    for node_type, total, visible in conn.execute(
        "SELECT type, count(*), count(*) FILTER (WHERE NOT private) FROM nodes GROUP BY type ORDER BY type"
    ):
        nodes["all"][node_type] = int(total)
        if visible:
            nodes["visible"][node_type] = int(visible)
    every = {
        r[0]: int(r[1])
        for r in conn.execute(
            "SELECT e.type, count(*) FROM edges e WHERE EXISTS (SELECT 1 FROM nodes s WHERE s.id = e.src)"
            " GROUP BY e.type ORDER BY e.type"
        )
    }
    hidden = {
        r[0]: int(r[1])
        for r in conn.execute(
            "SELECT e.type, count(*) FROM edges e JOIN nodes s ON s.id = e.src"
            " LEFT JOIN nodes d ON d.id = e.dst WHERE s.private OR COALESCE(d.private, false) GROUP BY e.type"
        )
    }
    edges = {
        "all": every,
        "visible": {t: n - hidden.get(t, 0) for t, n in every.items() if n > hidden.get(t, 0)},
    }
    return {"nodes": nodes, "edges": edges}
