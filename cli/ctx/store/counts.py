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
    """Store the counts of the graph as it is now (inside the caller's transaction): from the
    counts stored before the transaction and what it changed, when ``track`` noted that (a
    re-import), else by counting the whole graph."""
    counted = _changed_since_tracked(conn)
    stored = {"key": _key(conn), **(counted if counted is not None else _count(conn))}
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_KEY, json.dumps(stored)))


# A re-import changes few rows, yet counting the edges of a 100k-note graph again cost ~0.46 s
# of CPU (730k edges grouped by source and type) for a one-note edit. So, from ``track`` on, the
# rows written are noted by temporary triggers (this connection's, undone with the transaction):
# every node id inserted, deleted or updated in id, type or privacy (with its old type and flag),
# and every edge inserted, deleted or updated in its ends or type (with its old row). The
# counts are then the stored ones minus what the touched rows counted for before the
# transaction plus what they count for now. A row counts for (nodes) its type and flag; (edges)
# its type, whether its source node exists, and whether either end is private: so the rows
# touched are the noted edges, and the edges (unchanged or not) at a node whose existence, type
# or flag differ before and after. A tag node deleted and made again the same is no change.
_TRACK = (
    "CREATE TEMP TABLE counted_nodes_log (seq INTEGER PRIMARY KEY, id TEXT, existed INTEGER, type TEXT, private INTEGER)",
    "CREATE TEMP TABLE counted_edges_log (seq INTEGER PRIMARY KEY, id INTEGER, existed INTEGER, type TEXT, src TEXT, dst TEXT)",
    "CREATE TEMP TRIGGER counted_nodes_ai AFTER INSERT ON main.nodes BEGIN"
    " INSERT INTO counted_nodes_log (id, existed) VALUES (new.id, 0); END",
    "CREATE TEMP TRIGGER counted_nodes_ad AFTER DELETE ON main.nodes BEGIN"
    " INSERT INTO counted_nodes_log (id, existed, type, private) VALUES (old.id, 1, old.type, old.private); END",
    "CREATE TEMP TRIGGER counted_nodes_au AFTER UPDATE OF id, type, private ON main.nodes BEGIN"
    " INSERT INTO counted_nodes_log (id, existed, type, private) VALUES (old.id, 1, old.type, old.private);"
    " INSERT INTO counted_nodes_log (id, existed) VALUES (new.id, 0); END",
    "CREATE TEMP TRIGGER counted_edges_ai AFTER INSERT ON main.edges BEGIN"
    " INSERT INTO counted_edges_log (id, existed) VALUES (new.id, 0); END",
    "CREATE TEMP TRIGGER counted_edges_ad AFTER DELETE ON main.edges BEGIN"
    " INSERT INTO counted_edges_log (id, existed, type, src, dst) VALUES (old.id, 1, old.type, old.src, old.dst); END",
    "CREATE TEMP TRIGGER counted_edges_au AFTER UPDATE OF id, type, src, dst ON main.edges BEGIN"
    " INSERT INTO counted_edges_log (id, existed, type, src, dst) VALUES (old.id, 1, old.type, old.src, old.dst);"
    " INSERT INTO counted_edges_log (id, existed) VALUES (new.id, 0); END",
)
_TRACKED = ("counted_nodes_ai", "counted_nodes_ad", "counted_nodes_au", "counted_edges_ai", "counted_edges_ad", "counted_edges_au")
# Past this many noted rows per row of the graph (and past a few thousand: a small graph is
# counted either way in milliseconds), counting everything again costs less.
_MOST_NOTED_SHARE = 0.2
_NOTED_ALWAYS_APPLIED = 10_000
_CHUNK = 500

NodeState = tuple[str, int] | None  # (type, private flag), None: no such node
EdgeRow = tuple[str, str, str | None] | None  # (type, src, dst), None: no such edge


def track(conn: sqlite3.Connection, *, noting: bool = True) -> None:
    """Note, until ``recount``, the rows this transaction writes, so that the counts stored
    before it are brought up to date instead of counted again. Only inside a transaction, before
    it wrote any node or edge: decided at the first call (``noting=False``: not in this one), as
    rows written before would not be noted; and only when the stored counts describe the graph
    as it is (a graph counted live is counted live)."""
    if not conn.in_transaction:
        return
    if conn.execute(
        "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'counted_decided'"
    ).fetchone() is not None:
        if not noting:
            _stop_noting(conn)  # a later step replaces half the source (a JSON graph streamed again)
        return
    conn.execute("CREATE TEMP TABLE counted_decided (unused INTEGER)")
    if not noting:
        return
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY,)).fetchone()
    stored = json.loads(row[0]) if row else None
    if stored is None or stored.get("key") != _key(conn):
        return
    for statement in _TRACK:
        conn.execute(statement)
    conn.execute("CREATE TEMP TABLE counted_before (counts TEXT)")
    conn.execute("INSERT INTO temp.counted_before (counts) VALUES (?)", (json.dumps({k: stored[k] for k in ("nodes", "edges")}),))


def stop_tracking(conn: sqlite3.Connection) -> None:
    """Nothing noted any more, and the next transaction may note again."""
    _stop_noting(conn)
    conn.execute("DROP TABLE IF EXISTS temp.counted_decided")


def _stop_noting(conn: sqlite3.Connection) -> None:
    """Nothing noted for the rest of the transaction: ``recount`` counts everything."""
    for trigger in _TRACKED:
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{trigger}")
    for table in ("counted_nodes_log", "counted_edges_log", "counted_before"):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")


def _tracking(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'counted_before'"
    ).fetchone() is not None


def _changed_since_tracked(conn: sqlite3.Connection) -> dict[str, Any] | None:
    """The counts now, from those ``track`` saw and the rows noted since; None when nothing was
    noted (no ``track``), or so much that counting everything again costs less."""
    if not _tracking(conn):
        return None
    try:
        noted = sum(
            int(conn.execute(f"SELECT COUNT(*) FROM temp.{table}").fetchone()[0])
            for table in ("counted_nodes_log", "counted_edges_log")
        )
        rows = int(conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]) + int(
            conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
        )
        if noted > max(_MOST_NOTED_SHARE * rows, _NOTED_ALWAYS_APPLIED):
            return None
        return _apply_noted(conn, json.loads(conn.execute("SELECT counts FROM temp.counted_before").fetchone()[0]))
    finally:
        stop_tracking(conn)


def _apply_noted(conn: sqlite3.Connection, before: dict[str, Any]) -> dict[str, Any]:
    # Each noted id's state before the transaction: its first note (what it was when first touched).
    nodes_before: dict[str, NodeState] = {}
    for node_id, existed, node_type, private in conn.execute(
        "SELECT id, existed, type, private FROM temp.counted_nodes_log ORDER BY seq"
    ):
        if node_id not in nodes_before:
            nodes_before[node_id] = (node_type, private) if existed else None
    edges_before: dict[int, EdgeRow] = {}
    for edge_id, existed, edge_type, src, dst in conn.execute(
        "SELECT id, existed, type, src, dst FROM temp.counted_edges_log ORDER BY seq"
    ):
        if edge_id not in edges_before:
            edges_before[edge_id] = (edge_type, src, dst) if existed else None

    nodes_now: dict[str, NodeState] = dict.fromkeys(nodes_before)
    _read_nodes(conn, list(nodes_before), nodes_now)
    changed = [node_id for node_id, state in nodes_before.items() if state != nodes_now[node_id]]
    edges_now: dict[int, EdgeRow] = dict.fromkeys(edges_before)
    _read_edges(conn, "id", list(edges_before), edges_now)
    # Edges at a changed node count differently even where the edge itself did not change.
    at_changed: dict[int, EdgeRow] = {}
    _read_edges(conn, "src", changed, at_changed)
    _read_edges(conn, "dst", changed, at_changed)
    for edge_id, row in at_changed.items():
        if edge_id not in edges_before:
            edges_before[edge_id] = edges_now[edge_id] = row

    ends = {end for rows in (edges_before, edges_now) for row in rows.values() if row is not None
            for end in row[1:] if end is not None}
    states: dict[str, NodeState] = dict.fromkeys(ends - nodes_now.keys())
    _read_nodes(conn, list(states), states)
    states.update(nodes_now)
    states_before = {**states, **nodes_before}

    nodes_all = dict(before["nodes"]["all"])
    nodes_visible = dict(before["nodes"]["visible"])
    for node_id in changed:
        for state, sign in ((nodes_before[node_id], -1), (nodes_now[node_id], 1)):
            if state is not None:
                nodes_all[state[0]] = nodes_all.get(state[0], 0) + sign
                if state[1] == 0:
                    nodes_visible[state[0]] = nodes_visible.get(state[0], 0) + sign
    edges_all = dict(before["edges"]["all"])
    edges_visible = dict(before["edges"]["visible"])
    for rows, node_states, sign in ((edges_before, states_before, -1), (edges_now, states, 1)):
        for row in rows.values():
            if row is None:
                continue
            edge_type, src, dst = row
            source = node_states.get(src)
            if source is None:
                continue  # an edge counts when its source node exists
            edges_all[edge_type] = edges_all.get(edge_type, 0) + sign
            target = node_states.get(dst) if dst is not None else None
            if source[1] != 1 and (target is None or target[1] != 1):
                edges_visible[edge_type] = edges_visible.get(edge_type, 0) + sign
    return {
        "nodes": {"all": _positive(nodes_all), "visible": _positive(nodes_visible)},
        "edges": {"all": _positive(edges_all), "visible": _positive(edges_visible)},
    }


def _positive(counts: dict[str, int]) -> dict[str, int]:
    """Types still counted, in the order ``_count`` gives them (by type)."""
    return {name: counts[name] for name in sorted(counts) if counts[name] > 0}


def _read_nodes(conn: sqlite3.Connection, ids: list[str], into: dict[str, NodeState]) -> None:
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        for node_id, node_type, private in conn.execute(
            f"SELECT id, type, private FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ):
            into[node_id] = (node_type, private)


def _read_edges(conn: sqlite3.Connection, column: str, values: list[Any], into: dict[int, EdgeRow]) -> None:
    for start in range(0, len(values), _CHUNK):
        chunk = values[start : start + _CHUNK]
        for edge_id, edge_type, src, dst in conn.execute(
            f"SELECT id, type, src, dst FROM edges WHERE {column} IN ({','.join('?' * len(chunk))})", chunk
        ):
            into[edge_id] = (edge_type, src, dst)


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
