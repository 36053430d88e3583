"""Collect: candidates and annotations that come from lens options rather than from the walk.

Each function serves one general lens option, so a lens for a new kind of task is a YAML file:

* ``activity`` -> ``add_recent``: nodes edited shortly before the graph's newest update;
* ``select: {siblings: N}`` -> ``add_siblings``: the seed's neighbours in its parent's order;
* ``output.neighbours`` -> ``annotate_neighbours``: each node's neighbour ids over named edges;
* ``cycles`` -> ``cycles.find_cycles`` (its own module);
* privacy -> ``private_among`` and ``count_withheld``: what was held back, as a number only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ctx.assemble.activity import recent_nodes
from ctx.assemble.candidate import Candidate
from ctx.assemble.neighbours import neighbour_ids
from ctx.assemble.outline_view import siblings_in_order
from ctx.assemble.traverse import Hop, Reached, Walk
from ctx.lenses import Lens

_CHUNK = 500


def _chunks(ids: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


def add_recent(
    conn: sqlite3.Connection, lens: Lens, walked: Walk, reference: float | None, include_private: bool
) -> set[str]:
    """Add the lens's recently edited nodes to the walk (as non-walked extras); return all of them."""
    if lens.activity.hours <= 0:
        return set()
    ids = recent_nodes(conn, reference, lens.activity.hours, lens.activity.limit, include_private=include_private)
    for node_id in ids:
        if node_id not in walked.reached:
            walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
    return set(ids)


def sibling_window(lens: Lens) -> int | None:
    windows = [s.select.siblings for s in lens.sections if s.select.siblings is not None]
    return max(windows) if windows else None


def add_siblings(
    conn: sqlite3.Connection, seeds: list[str], walked: Walk, window: int, include_private: bool
) -> dict[str, int]:
    """The seeds' siblings at most ``window`` places away in their parent's order: id -> offset.

    Siblings the walk did not reach join it as parent > child paths, so they read like any other
    two-hop node; the offset is kept for ``select: {siblings: N}``.
    """
    offsets: dict[str, int] = {}
    for seed in seeds:
        parent, order = siblings_in_order(conn, seed, include_private)
        if parent is None or seed not in order:
            continue
        here = order.index(seed)
        for i in range(max(0, here - window), min(len(order), here + window + 1)):
            node_id = order[i]
            if node_id == seed or node_id in seeds:
                continue
            offsets[node_id] = min(offsets.get(node_id, abs(i - here)), abs(i - here))
            if node_id not in walked.reached:
                path = (Hop("child", "in", seed, parent), Hop("child", "out", parent, node_id))
                walked.reached[node_id] = Reached(node_id, 2, 2.0, path, False)
    return offsets


def annotate_neighbours(
    conn: sqlite3.Connection, candidates: list[Candidate], names: tuple[str, ...], include_private: bool
) -> None:
    if not names:
        return
    found = neighbour_ids(conn, [c.id for c in candidates], names, include_private=include_private)
    for c in candidates:
        c.neighbours = found.get(c.id, {})


def private_among(conn: sqlite3.Connection, ids: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for chunk in _chunks(sorted(set(ids))):
        marks = ",".join("?" * len(chunk))
        out.update(r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE private = 1 AND id IN ({marks})", chunk))
    return out


def count_withheld(conn: sqlite3.Connection, matched_private: set[str], context_ids: Iterable[str]) -> int:
    """Private nodes the context would otherwise have touched: topic matches plus direct neighbours.

    Only the number is ever reported, never an id or a title.
    """
    if conn.execute("SELECT 1 FROM nodes WHERE private = 1 LIMIT 1").fetchone() is None:
        return 0
    hidden = set(matched_private)
    for chunk in _chunks(sorted(set(context_ids))):
        marks = ",".join("?" * len(chunk))
        for near, far in (("src", "dst"), ("dst", "src")):
            hidden.update(
                r[0]
                for r in conn.execute(
                    f"SELECT DISTINCT n.id FROM edges e JOIN nodes n ON n.id = e.{far}"
                    f" WHERE e.{near} IN ({marks}) AND n.private = 1",
                    chunk,
                )
            )
    return len(hidden)
