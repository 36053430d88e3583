"""How many distinct nodes link to a node (or it links to) by one edge type, kept for the classes
with many: a tag's notes, a popular note's backlinks.

A hub's count of fresh neighbours (``hub_scan``) starts from the size of its biggest class.
Counting that from the index costs a step per link (60-80 ms for a tag of 200,000 notes at a
million nodes, on every build that meets it); kept here it is one row. Rows are made for the
classes of at least ``KEPT_AT_LEAST`` links when the graph is first filled (the first import into
it, or the migration), and triggers on ``edges`` keep every row exact through every later write
(imports, sync, watch, removed sources): a link counts once however many edge rows repeat it,
and self-links not at all. A class that grows past the threshold later has no row; its count is
read from the index as before.
"""

from __future__ import annotations

import sqlite3

KEPT_AT_LEAST = 1_000

TABLE = """
CREATE TABLE IF NOT EXISTS link_counts (
    node TEXT NOT NULL,
    dir TEXT NOT NULL,              -- 'in': distinct src of edges to node; 'out': distinct dst from it
    type TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (node, dir, type)
) WITHOUT ROWID
"""


def _step(row: str, sign: str) -> str:
    """Statements counting the link of edge ``row`` (new/old) in or out (``sign``) at both ends,
    unless another edge row makes the same link."""
    alone = (
        f"NOT EXISTS (SELECT 1 FROM edges WHERE src = {row}.src AND type = {row}.type"
        f" AND dst = {row}.dst AND id != {row}.id)"
    )
    real = f"{row}.dst IS NOT NULL AND {row}.dst != {row}.src"
    return "".join(
        f"    UPDATE link_counts SET n = n {sign} 1 WHERE node = {row}.{end} AND dir = '{direction}'"
        f" AND type = {row}.type AND {real} AND {alone};\n"
        for end, direction in (("dst", "in"), ("src", "out"))
    )


TRIGGERS = {
    "link_counts_ai": f"CREATE TRIGGER link_counts_ai AFTER INSERT ON edges BEGIN\n{_step('new', '+')}END",
    "link_counts_ad": f"CREATE TRIGGER link_counts_ad AFTER DELETE ON edges BEGIN\n{_step('old', '-')}END",
    "link_counts_au": (
        "CREATE TRIGGER link_counts_au AFTER UPDATE OF src, dst, type ON edges"
        " WHEN old.dst IS NOT new.dst OR old.src != new.src OR old.type != new.type BEGIN\n"
        f"{_step('old', '-')}{_step('new', '+')}END"
    ),
}


def create(conn: sqlite3.Connection) -> None:
    """The table and its triggers, filled from the graph as it is (inside the caller's transaction)."""
    conn.execute(TABLE)
    for name, sql in TRIGGERS.items():
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute(sql)
    fill(conn)


def fill(conn: sqlite3.Connection) -> None:
    """Count every class of at least ``KEPT_AT_LEAST`` links anew: first those with that many
    edge rows (one pass over each index), then their distinct other ends."""
    conn.execute("DELETE FROM link_counts")
    for direction, near, far in (("in", "dst", "src"), ("out", "src", "dst")):
        big = conn.execute(
            f"SELECT {near}, type FROM edges WHERE dst IS NOT NULL GROUP BY {near}, type HAVING COUNT(*) >= ?",
            (KEPT_AT_LEAST,),
        ).fetchall()
        for node, etype in big:
            n = conn.execute(
                f"SELECT COUNT(DISTINCT {far}) FROM edges WHERE {near} = ? AND type = ? AND {far} != ?",
                (node, etype, node),
            ).fetchone()[0]
            if n >= KEPT_AT_LEAST:
                conn.execute(
                    "INSERT INTO link_counts (node, dir, type, n) VALUES (?, ?, ?, ?)", (node, direction, etype, n)
                )


def kept(conn: sqlite3.Connection, node_id: str, direction: str, etype: str) -> int | None:
    """The kept count of a class, or None (not kept, or a graph from before the table)."""
    try:
        row = conn.execute(
            "SELECT n FROM link_counts WHERE node = ? AND dir = ? AND type = ?", (node_id, direction, etype)
        ).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise
    return None if row is None else int(row[0])
