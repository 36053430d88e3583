"""Build manifests: what each recent context showed, so a later build can say what changed.

A manifest is a small JSON document written by the assembler (``ctx.assemble.manifest``); the
store only keeps it under its context id, its key (a digest of topics, lens, depth, budget and
encoding) and the reader's visibility, newest last, the last ``keep`` per key and ``keep_total``
in all. Recording is a reader's cache write: it never waits for the write lock and never fails a
build (a read-only or busy graph records nothing, and says so by returning False).
"""

from __future__ import annotations

import sqlite3


def record(
    conn: sqlite3.Connection, context_id: str, key: str, private: bool, version: int, manifest: str,
    *, keep: int, keep_total: int,
) -> bool:
    """Keep ``manifest`` as the newest of its key; False when the graph could not take it at once."""
    if keep < 1 or keep_total < 1:
        return False
    waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        if conn.in_transaction:  # never inside someone else's transaction
            return False
        conn.execute("BEGIN IMMEDIATE")
        try:
            _write(conn, context_id, key, private, version, manifest, keep, keep_total)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return True
    except sqlite3.OperationalError:  # busy, read-only, or a graph from before migration 14
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout = {waited}")


def _write(
    conn: sqlite3.Connection, context_id: str, key: str, private: bool, version: int, manifest: str,
    keep: int, keep_total: int,
) -> None:
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM contexts").fetchone()[0]
    conn.execute(
        "INSERT OR REPLACE INTO contexts (id, key, private, graph_version, seq, manifest) VALUES (?, ?, ?, ?, ?, ?)",
        (context_id, key, int(private), version, seq, manifest),
    )
    conn.execute(
        "DELETE FROM contexts WHERE key = ? AND private = ? AND id NOT IN"
        " (SELECT id FROM contexts WHERE key = ? AND private = ? ORDER BY seq DESC LIMIT ?)",
        (key, int(private), key, int(private), keep),
    )
    # The newest ``keep_total`` by seq (unique: each record takes the greatest plus one, under
    # the write lock) are those from the keep_total-th newest on: found on ``contexts_by_seq``,
    # where ``id NOT IN`` the newest read every record each build (~0.3 ms at 500 records).
    conn.execute(
        "DELETE FROM contexts WHERE seq < (SELECT seq FROM contexts ORDER BY seq DESC LIMIT 1 OFFSET ?)",
        (keep_total - 1,),
    )


def recorded(conn: sqlite3.Connection, context_id: str | None, key: str, private: bool) -> tuple[str, str] | None:
    """(id, manifest) of the context ``context_id``, or of the newest one of ``key`` when it is
    None; only among those recorded by a reader of the same visibility."""
    try:
        if context_id is None:
            row = conn.execute(
                "SELECT id, manifest FROM contexts WHERE key = ? AND private = ? ORDER BY seq DESC LIMIT 1",
                (key, int(private)),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT id, manifest FROM contexts WHERE id = ? AND private = ?", (context_id, int(private))
            ).fetchone()
    except sqlite3.OperationalError:  # a read-only graph from before migration 14
        return None
    return (str(row[0]), str(row[1])) if row else None
