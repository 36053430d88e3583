"""Full-text indexing of many new rows at once.

FTS5 tables here are kept up to date by triggers, one row at a time. Inside an import that writes
thousands of rows, indexing them with one ``INSERT ... SELECT`` per index instead costs several
times less (10,400 notes: the passages' two indexes took ~5 s of CPU by trigger, ~1 s in bulk),
so the insert trigger is set aside for the batch and put back after it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def indexed_in_bulk(conn: sqlite3.Connection, trigger: str, table: str, key: str, fill: tuple[str, ...]) -> Iterator[None]:
    """Rows inserted into ``table`` inside the block are indexed at its end by the ``fill``
    statements, each taking the rows whose ``key`` is above the largest one before the block.

    Only inside a transaction: dropping the trigger is then undone by a rollback with the rows it
    would have indexed, and no other connection ever sees the table without its trigger. Outside
    one, the trigger indexes row by row as usual.
    """
    found = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (trigger,)).fetchone()
    if found is None or not conn.in_transaction:
        yield
        return
    before = conn.execute(f"SELECT COALESCE(MAX({key}), 0) FROM {table}").fetchone()[0]
    conn.execute(f"DROP TRIGGER {trigger}")
    try:
        yield
    finally:
        # Also after a failed statement: the rows it did insert are indexed, so a caller that
        # goes on in the same transaction still has an index equal to its table.
        for statement in fill:
            conn.execute(statement, (before,))
        conn.execute(found[0])
