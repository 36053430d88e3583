"""Small graphs and imported databases shared by the `ctx build` tests (real SQLite, real import)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ctx.importers.engine import import_path
from ctx.store import connect

DAY = "2024-05-{:02d}"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def import_into(db: Path, source: Path) -> sqlite3.Connection:
    conn = connect(db, create=True)
    import_path(conn, source)
    return conn


def chain_graph() -> list[dict]:
    """seed -> near -> far, plus twins: two nodes identical except for their distance."""
    # Not byte-identical, or exact-duplicate removal (lens dedup) would merge them.
    same = {"type": "note", "updated": "2024-05-01"}
    return [
        {"id": "seed", "title": "Seed", "body": "The topic. It links to near and twin1.", "type": "project",
         "updated": "2024-05-10", "links": ["near", "twin1"], "fields": {"status": "active"}},
        {"id": "near", "title": "Near", "body": "One hop away.", "updated": "2024-05-09", "links": ["far", "twin2"]},
        {"id": "far", "title": "Far", "body": "Two hops away.", "updated": "2024-05-08"},
        {"id": "twin1", "title": "Twin one", "body": "Text about the harbour crane, one.", **same},
        {"id": "twin2", "title": "Twin two", "body": "Text about the harbour crane, two.", **same},
        {"id": "island", "title": "Island", "body": "Unconnected.", "updated": "2024-05-01"},
    ]


def hub_graph(children: int = 120) -> list[dict]:
    """A hub with many children (seed 003: a node with hundreds of children)."""
    records = [{"id": "hub", "title": "Hub", "body": "The hub.", "updated": "2024-05-10"}]
    for i in range(children):
        records.append({"id": f"child{i:03d}", "title": f"Child {i:03d}", "parent": "hub",
                        "body": f"Child number {i}. " * 5, "updated": DAY.format(1 + i % 28)})
    return records
