"""The writes of one file read a batch at a time: a graph export of any size in bounded memory.

A JSON graph is a single file that can hold a million nodes. Its rules span the whole file: an id
stated twice keeps its first record, a relation stated from both ends is one edge, and an edge
must start at a node of the file. Held in Python, each of these needed a set as large as the
graph; here SQLite holds them, inside the import's transaction:

* nodes are written batch by batch as usual (``insert_records``); a later record's id is checked
  against the nodes this file already wrote (and the ids a clash renamed);
* edges wait in a temporary table in file order; when the file ends, the first of each
  (src, type, target) whose src is a node of the file is written, with the renames applied, in
  one statement.

SQLite spills temporary tables to disk, so the memory this needs does not grow with the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ctx.store.records import EdgeRecord, NodeRecord
from ctx.store.types import Settled, Written
from ctx.store.writes import KeyNormalizer, TokenCounter, insert_records

_CHUNK = 500
DANGLING_LISTED = 20


class StreamedFile:
    """One file's records, written a batch at a time; ``settle`` once its last batch is in."""

    def __init__(
        self, conn: sqlite3.Connection, source_id: int, rel: str, *, count: TokenCounter, normalize_key: KeyNormalizer
    ) -> None:
        self.conn, self.source_id, self.rel = conn, source_id, rel
        self.count, self.normalize_key = count, normalize_key
        self.renames = 0
        conn.execute("DROP TABLE IF EXISTS temp.streamed_edges")
        conn.execute("DROP TABLE IF EXISTS temp.streamed_renames")
        conn.execute(
            "CREATE TEMP TABLE streamed_edges (seq INTEGER PRIMARY KEY, src TEXT, type TEXT, target TEXT,"
            " by_id INTEGER, label TEXT, position INTEGER)"
        )
        conn.execute("CREATE TEMP TABLE streamed_renames (old TEXT PRIMARY KEY, new TEXT) WITHOUT ROWID")

    def known_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that a node this file already wrote was read with."""
        ids = list(ids)
        found: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(
                r[0]
                for r in self.conn.execute(
                    # "+": through the id, never the (source, file) index, which would read every
                    # node of the file so far for each batch (quadratic: hours at 1M nodes).
                    f"SELECT id FROM nodes WHERE id IN ({marks}) AND +source_id = ? AND +file = ?",
                    (*chunk, self.source_id, self.rel),
                )
            )
            if self.renames:
                found.update(
                    r[0] for r in self.conn.execute(f"SELECT old FROM temp.streamed_renames WHERE old IN ({marks})", chunk)
                )
        return found

    def add(self, nodes: list[NodeRecord], edges: list[EdgeRecord]) -> Written:
        """Write a batch's nodes (with their tag edges); hold its other edges until ``settle``."""
        written = insert_records(
            self.conn, self.source_id, [(self.rel, n) for n in nodes], [],
            count=self.count, normalize_key=self.normalize_key,
        )
        if written.renamed:
            self.conn.executemany(
                "INSERT OR REPLACE INTO temp.streamed_renames (old, new) VALUES (?, ?)", written.renamed.items()
            )
            self.renames += len(written.renamed)
        self.conn.executemany(
            "INSERT INTO temp.streamed_edges (src, type, target, by_id, label, position) VALUES (?, ?, ?, ?, ?, ?)",
            [(e.src, e.type, e.target, 1 if e.by_id else 0, e.label, e.position) for e in edges],
        )
        return written

    def settle(self) -> Settled:
        """Write the held edges: the first of each relation, from nodes of this file, renamed as
        their nodes were. Drops the temporary tables."""
        conn, out = self.conn, Settled()
        conn.execute(
            "DELETE FROM temp.streamed_edges WHERE seq NOT IN"
            " (SELECT MIN(seq) FROM temp.streamed_edges GROUP BY src, type, target)"
        )
        held = conn.execute("SELECT COUNT(*) FROM temp.streamed_edges").fetchone()[0]
        before = conn.total_changes
        conn.execute(
            "INSERT INTO edges (source_id, file, src, type, target, by_id, label, position)"
            " SELECT ?, ?, COALESCE(rs.new, s.src), s.type,"
            " CASE WHEN s.by_id = 1 THEN COALESCE(rt.new, s.target) ELSE s.target END,"
            " s.by_id, s.label, s.position"
            " FROM temp.streamed_edges s"
            " LEFT JOIN temp.streamed_renames rs ON rs.old = s.src"
            " LEFT JOIN temp.streamed_renames rt ON rt.old = s.target AND s.by_id = 1"
            " WHERE EXISTS (SELECT 1 FROM nodes n WHERE n.id = COALESCE(rs.new, s.src) AND +n.source_id = ?"
            " AND +n.file = ?)"
            " ORDER BY s.seq",
            (self.source_id, self.rel, self.source_id, self.rel),
        )
        out.edges = conn.total_changes - before
        out.dangling_total = held - out.edges
        if out.dangling_total:
            out.dangling = [
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT s.type, s.src FROM temp.streamed_edges s"
                    " LEFT JOIN temp.streamed_renames rs ON rs.old = s.src"
                    " WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = COALESCE(rs.new, s.src)"
                    " AND +n.source_id = ? AND +n.file = ?) ORDER BY s.seq LIMIT ?",
                    (self.source_id, self.rel, DANGLING_LISTED),
                )
            ]
        if self.renames:
            # A child read before its renamed parent still names the parent as it was read.
            conn.execute(
                "UPDATE nodes SET parent_id = (SELECT new FROM temp.streamed_renames WHERE old = nodes.parent_id)"
                " WHERE source_id = ? AND file = ? AND parent_id IN (SELECT old FROM temp.streamed_renames)",
                (self.source_id, self.rel),
            )
        conn.execute("DROP TABLE temp.streamed_edges")
        conn.execute("DROP TABLE temp.streamed_renames")
        return out
