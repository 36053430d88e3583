"""Activity: the nodes edited most recently, as candidates for a lens's "recent activity" section.

"Recent" is measured back from the graph's newest update, not from the wall clock: the same graph
state always yields the same context (seed 004's determinism), and an old export still has a
meaningful "last 72 hours". Private nodes are excluded unless the build includes them.
"""

from __future__ import annotations

import sqlite3


def recent_nodes(
    conn: sqlite3.Connection,
    reference: float | None,
    hours: float,
    limit: int,
    *,
    include_private: bool = False,
) -> list[str]:
    """Ids of at most ``limit`` nodes updated within ``hours`` before ``reference``, newest first."""
    if reference is None or limit <= 0:
        return []
    hidden = "" if include_private else " AND private = 0"
    rows = conn.execute(
        f"SELECT id FROM nodes WHERE updated >= ? AND type != 'tag'{hidden} ORDER BY updated DESC, id LIMIT ?",
        (reference - hours * 3600.0, limit),
    ).fetchall()
    return [r[0] for r in rows]

