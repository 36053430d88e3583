"""Registered sources: the folders and files a graph was imported from, and removing one.

Every import registers its source (``sources`` table, with the format it was read in); ``ctx
sources`` lists them, ``ctx sync`` re-imports them, and removing one takes everything it brought:
its nodes (and, through triggers, their full-text rows and passages), edges, file records, name
keys and vectors, in one transaction.
"""

from __future__ import annotations

import sqlite3

from ctx.store import counts
from ctx.store.types import Removed, Source
from ctx.store.writes import bump_graph_version, resolve_all_next
from ctx.store.transaction import transaction


def list_sources(conn: sqlite3.Connection, *, counted: bool = False) -> list[Source]:
    """The registered sources, by id; their files, nodes and fresh vectors counted if asked."""
    files: dict[int, int] | None = None
    nodes: dict[int, int] | None = None
    fresh: dict[int, int] | None = None
    if counted:
        model_row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()
        model = model_row[0] if model_row else None
        fresh = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT n.source_id, COUNT(*) FROM embeddings e JOIN nodes n"
                " ON n.id = e.node_id AND n.content_hash = e.content_hash"
                " WHERE e.model = ? GROUP BY n.source_id",
                (model,),
            )
        } if model else {}
        nodes = dict(conn.execute("SELECT source_id, COUNT(*) FROM nodes GROUP BY source_id").fetchall())
        files = dict(conn.execute("SELECT source_id, COUNT(*) FROM files GROUP BY source_id").fetchall())
    return [
        Source(
            id=r["id"],
            root=r["root"],
            name=r["name"],
            format=r["format"],
            imported_at=r["imported_at"],
            checked_at=r["checked_at"],
            files=None if files is None else files.get(r["id"], 0),
            nodes=None if nodes is None else nodes.get(r["id"], 0),
            embedded=None if fresh is None else fresh.get(r["id"], 0),
        )
        for r in conn.execute(
            "SELECT id, root, name, format, imported_at, checked_at FROM sources ORDER BY id"
        )
    ]


def remove_source(conn: sqlite3.Connection, source_id: int) -> Removed:
    """Delete a source and everything it brought into the graph (joins an open transaction)."""
    with transaction(conn):
        row = conn.execute("SELECT root FROM sources WHERE id = ?", (source_id,)).fetchone()
        if row is None:
            raise KeyError(source_id)
        # A tag node is created once, by the first source that uses the tag; other sources'
        # notes may carry the same tag. Those tag nodes move to such a source instead of going.
        heir = (
            "SELECT MIN(e.source_id) FROM edges e"
            " WHERE e.dst = nodes.id AND e.type = 'tag' AND e.source_id != :source"
        )
        kept = conn.execute(
            f"UPDATE nodes SET source_id = ({heir}) WHERE source_id = :source AND type = 'tag'"
            f" AND file = '' AND ({heir}) IS NOT NULL",
            {"source": source_id},
        ).rowcount
        conn.execute(
            "UPDATE node_keys SET source_id = (SELECT n.source_id FROM nodes n WHERE n.id = node_keys.node_id)"
            " WHERE source_id = ? AND node_id IN (SELECT id FROM nodes WHERE source_id != ?)",
            (source_id, source_id),
        )
        if kept:
            # The sources that took names over resolve all their links at their next import
            # (a re-import otherwise looks only at what it changed itself).
            resolve_all_next(conn, source_id)
        conn.execute(
            "DELETE FROM node_keys WHERE node_id IN (SELECT id FROM nodes WHERE source_id = ?)",
            (source_id,),
        )
        conn.execute("DELETE FROM node_keys WHERE source_id = ?", (source_id,))
        nodes = conn.execute("DELETE FROM nodes WHERE source_id = ?", (source_id,)).rowcount
        edges = conn.execute("DELETE FROM edges WHERE source_id = ?", (source_id,)).rowcount
        files = conn.execute("DELETE FROM files WHERE source_id = ?", (source_id,)).rowcount
        vectors = conn.execute(
            "DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = embeddings.node_id)"
        ).rowcount
        # The nodes' passages went with them (a trigger, and their index rows with those); a
        # passage vector is shared by every passage with the same text, so it goes only when no
        # passage is left to use it.
        conn.execute(
            "DELETE FROM passage_vectors WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.hash = passage_vectors.hash)"
        )
        # Links from other sources to the removed nodes become unresolved, as after a delete.
        conn.execute(
            "UPDATE edges SET dst = NULL WHERE dst IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)"
        )
        conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        bump_graph_version(conn)
        counts.recount(conn)
    return Removed(row["root"], nodes, edges, files, vectors, kept)
