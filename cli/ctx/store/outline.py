"""Reading outlines back out of the graph: a page's block tree, and a block's ancestor path.

Outliner importers store structure twice: ``nodes.parent_id``/``position`` and ``child`` edges
(parent -> child). These reads walk the ``child`` edges, which every importer writes (Notion's
sub-pages and Logseq's namespaces only have edges, made after the whole source is known), and
order siblings by edge position, then node position, then id — so the same graph always gives
the same outline. Pure reads: no writes, no token counting; the renderer decides what fits.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ctx.store.types import Crumb, Outline, OutlineEntry

BREADCRUMB_MAX_DEPTH = 32  # cycles cannot happen in an outline, but a malformed import could make one


def _children(conn: sqlite3.Connection, node_id: str) -> list[sqlite3.Row | tuple[Any, ...]]:
    return conn.execute(
        """
        SELECT n.id, n.title, n.body, n.type
        FROM edges e JOIN nodes n ON n.id = e.dst
        WHERE e.src = ? AND e.type = 'child'
        ORDER BY e.position IS NULL, e.position, n.position IS NULL, n.position, n.id
        """,
        (node_id,),
    ).fetchall()


def outline_of(conn: sqlite3.Connection, page_id: str, max_nodes: int) -> Outline:
    """The page's descendants in reading order (depth first), at most ``max_nodes`` of them."""
    entries: list[OutlineEntry] = []
    seen = {page_id}
    # A stack of (children still to visit, depth); depth first keeps each block by its parent.
    stack: list[tuple[list[Any], int]] = [(list(reversed(_children(conn, page_id))), 1)]
    while stack:
        pending, depth = stack[-1]
        if not pending:
            stack.pop()
            continue
        row = pending.pop()
        node_id = row[0]
        if node_id in seen:
            continue  # a node reachable twice (a Tana reference) is shown once
        if len(entries) >= max_nodes:
            return Outline(entries, truncated=True)
        seen.add(node_id)
        entries.append(OutlineEntry(node_id, row[1], row[2], row[3], depth))
        children = _children(conn, node_id)
        if children:
            stack.append((list(reversed(children)), depth + 1))
    return Outline(entries, truncated=False)


def breadcrumb(conn: sqlite3.Connection, node_id: str) -> list[Crumb]:
    """The ancestors of ``node_id``, page first and its direct parent last ([] for a root)."""
    crumbs: list[Crumb] = []
    seen = {node_id}
    current = node_id
    for _ in range(BREADCRUMB_MAX_DEPTH):
        row = conn.execute(
            """
            SELECT n.id, n.title, n.type
            FROM edges e JOIN nodes n ON n.id = e.src
            WHERE e.dst = ? AND e.type = 'child'
            ORDER BY n.file = '', length(n.id), n.id
            LIMIT 1
            """,
            (current,),
        ).fetchone()
        if row is None or row[0] in seen:
            break
        seen.add(row[0])
        crumbs.append(Crumb(row[0], row[1], row[2]))
        current = row[0]
    crumbs.reverse()
    return crumbs


def page_of(conn: sqlite3.Connection, node_id: str) -> str:
    """The page a block belongs to (the top of its breadcrumb); a page is its own page.

    The key to group blocks by: for JSON exports (Roam, Tana) every node shares one
    ``source_path``, so the file cannot tell pages apart, but the outline can."""
    crumbs = breadcrumb(conn, node_id)
    return crumbs[0].id if crumbs else node_id
