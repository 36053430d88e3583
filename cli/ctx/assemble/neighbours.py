"""Neighbours: for each shown node, the ids it is connected to over chosen edges.

A lens lists edge names in ``output.neighbours`` (e.g. ``[supported_by, supports]`` for claims, so
each claim shows what supports it and what it supports, seed 000). Private nodes are left out of
these lists unless the build includes them: an id can itself give away what a note is about.
"""

from __future__ import annotations

import sqlite3

from ctx.store.edge_names import canonical_and_direction

_CHUNK = 500


def neighbour_ids(
    conn: sqlite3.Connection, ids: list[str], names: tuple[str, ...], *, include_private: bool = False
) -> dict[str, dict[str, list[str]]]:
    """id -> {edge name -> sorted neighbour ids}, for every edge name in ``names``."""
    out: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
    hidden = "" if include_private else " AND n.private = 0"
    for name in names:
        canonical, direction = canonical_and_direction(name)
        near, far = ("dst", "src") if direction == "in" else ("src", "dst")
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT e.{near}, e.{far} FROM edges e JOIN nodes n ON n.id = e.{far}"
                f" WHERE e.type = ? AND e.{near} IN ({marks}){hidden}",
                [canonical, *chunk],
            )
            for here, there in rows:
                out[here].setdefault(name, []).append(there)
    for per_node in out.values():
        for name in per_node:
            per_node[name] = sorted(set(per_node[name]))
    return out
