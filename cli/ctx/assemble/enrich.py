"""Enrich: load what scoring and selection need for every walked node (not bodies: those are
read later, only for the nodes the budget may actually show)."""

from __future__ import annotations

import json
import sqlite3

from ctx.assemble.candidate import Candidate
from ctx.assemble.traverse import Walk
from ctx.lenses import Lens

_CHUNK = 500
_LIGHT_COLUMNS = "id, title, type, tags, fields, source_path, parent_id, position, created, updated, tokens"


def enrich(conn: sqlite3.Connection, walk: Walk, lens: Lens, include_fields: bool) -> list[Candidate]:
    ids = sorted(walk.reached)
    out: list[Candidate] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {_LIGHT_COLUMNS} FROM nodes WHERE id IN ({marks})", chunk):
            reached = walk.reached[row[0]]
            fields: dict[str, list[str]] = {}
            if include_fields:
                raw = json.loads(row[4]) if row[4] else {}
                fields = {
                    name: [str(v) for v in (values if isinstance(values, list) else [values])]
                    for name, values in raw.items()
                    if lens.fields.allows(name)
                }
            out.append(
                Candidate(
                    id=row[0],
                    title=row[1],
                    type=row[2],
                    tags=json.loads(row[3]) if row[3] else [],
                    fields=fields,
                    source_path=row[5],
                    parent_id=row[6],
                    position=row[7],
                    created=row[8],
                    updated=row[9],
                    store_tokens=int(row[10] or 0),
                    hops=reached.hops,
                    cost=reached.cost,
                    path=reached.path,
                    seed=reached.seed,
                )
            )
    out.sort(key=lambda c: c.id)
    return out


def load_bodies(conn: sqlite3.Connection, candidates: list[Candidate]) -> None:
    """Fill ``body`` for the given candidates (one query per 500)."""
    todo = [c for c in candidates if c.body is None]
    by_id = {c.id: c for c in todo}
    ids = sorted(by_id)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for node_id, body in conn.execute(f"SELECT id, body FROM nodes WHERE id IN ({marks})", chunk):
            by_id[node_id].body = body or ""
    for c in todo:
        if c.body is None:
            c.body = ""


def graph_reference_time(conn: sqlite3.Connection) -> float | None:
    """The newest ``updated`` in the graph: recency is measured from the graph's own "now", never
    the wall clock, so the same graph state always gives the same scores."""
    row = conn.execute("SELECT MAX(updated) FROM nodes").fetchone()
    return float(row[0]) if row and row[0] is not None else None
