"""Passages in the store: written after every import, read by retrieval and rendering.

Each node's body is split (``ctx.passages``) into passages: a span of the body, its heading path
and the titles of the node's outline/hierarchy ancestors. A passage is read through the
``passage_texts`` view (title and text from the node; the text kept with the passage only where it
is not the body's span); two FTS5 indexes cover title, ancestors, heading and text, one stemmed and
one exact (``search``). Splitting is incremental: a node inserted by an import has ``split = 0``
and is split by the next ``refresh``; a changed splitter (``SPLITTER_VERSION``) re-splits every
node once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from ctx.passages import SPLITTER_VERSION, split
from ctx.store.fts import deferred_while_empty, indexed_in_bulk, passage_fill_statements
from ctx.store.passage_reads import (  # noqa: F401 - the passages' reads, named here too
    _VERSION_KEY,
    EXACT_WEIGHTS,
    HEADING_SEP,
    STEMMED_WEIGHTS,
    embed_text,
    has_passages,
    passage_hash,
    passages_of,
    search,
    stale,
)
from ctx.store.batches import chunks
from ctx.store.view import GraphView

BATCH = 2000
# Ancestors that give a passage its context: the nearest few, each title clipped.
CONTEXT_DEPTH = 6
CONTEXT_TITLE_CHARS = 80
# An outline page's passages cover at most this many of its blocks (a page of 100,000 blocks is
# an export artefact, not a page anyone reads whole).
OUTLINE_MAX_BLOCKS = 5000


def refresh(conn: sqlite3.Connection, progress: Callable[[int, int], None] | None = None) -> int:
    """Split every node not split by the current splitter; returns how many nodes were split.
    ``progress`` is told (nodes looked at, nodes to look at) after each batch: at 13k notes this
    is the longest step of an import's last phase.

    Runs inside the caller's transaction (the import's), so the graph and its passages change
    together or not at all.
    """
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
    if row is None or int(row[0]) != SPLITTER_VERSION:
        conn.execute("UPDATE nodes SET split = 0 WHERE split != 0")
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_VERSION_KEY, str(SPLITTER_VERSION)))
    # A graph's first passages enter the full-text indexes once, at the end.
    with deferred_while_empty(conn, "passages", ("passages_ai", "passages_bd"), passage_fill_statements(conn)):
        return _split_unsplit(conn, progress)


def _split_unsplit(conn: sqlite3.Connection, progress: Callable[[int, int], None] | None) -> int:
    done = 0
    titles: dict[str, tuple[str, str | None]] = {}
    public = GraphView(conn)  # what a reader without private access sees of an outline page
    total = int(conn.execute("SELECT COUNT(*) FROM nodes WHERE split = 0").fetchone()[0]) if progress else 0
    looked_at = 0
    while True:
        rows = conn.execute(
            "SELECT rowid, id, title, body, parent_id, type FROM nodes WHERE split = 0 LIMIT ?", (BATCH,)
        ).fetchall()
        if progress is not None:
            progress(looked_at, max(total, looked_at))
            looked_at += len(rows)
        if not rows:
            return done
        ids = [r[1] for r in rows]
        _delete_for(conn, ids)
        _load_ancestors(conn, [r[4] for r in rows if r[4]], titles)
        pages = _outline_pages(conn, ids)
        out = []
        for _, node_id, title, body, parent_id, node_type in rows:
            if node_type == "block" and parent_id:
                continue  # an outline block's text is in its page's passages
            context = _context(parent_id, titles)
            text = body or ""
            outline = node_id in pages
            if outline:
                text = _with_outline(public, node_id, text)
            # SQLite's substr() and trim() stop at a NUL: such a body's passages keep their text.
            spans = not outline and "\x00" not in text
            for p in split(text, title):
                heading = HEADING_SEP.join(p.heading)
                digest = passage_hash(embed_text(title, context, heading, p.text))
                own = None if spans and p.text == text[p.start : p.end].strip("\n") else p.text
                out.append((node_id, p.ord, p.start, p.end, context, heading, own, p.tokens, digest))
        with _indexed_in_bulk(conn):
            conn.executemany(
                'INSERT INTO passages (node_id, ord, start, "end", context, heading, own_text, tokens, hash)'
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                out,
            )
        conn.executemany(
            "UPDATE nodes SET split = ? WHERE rowid = ?", [(SPLITTER_VERSION, r[0]) for r in rows]
        )
        done += len(rows)


def _indexed_in_bulk(conn: sqlite3.Connection) -> "AbstractContextManager[None]":
    return indexed_in_bulk(conn, "passages_ai", "passages", "id", passage_fill_statements(conn))


def _outline_pages(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Those of ``ids`` that have outline blocks beneath them (Logseq, Roam, Tana, Notion pages)."""
    out: set[str] = set()
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT DISTINCT parent_id FROM nodes WHERE type = 'block' AND parent_id IN ({marks})"
        out.update(r[0] for r in conn.execute(sql, chunk))
    return out


def _with_outline(public: GraphView, page_id: str, body: str) -> str:
    """An outline page's text: its own body, then its blocks as indented bullets in reading
    order (empty blocks left out), so that passages keep neighbouring blocks together. Read
    through ``public``, a view without private access: a private block and its subtree never
    reach a public page's passages."""
    entries = public.outline(page_id, OUTLINE_MAX_BLOCKS).entries
    lines = []
    for entry in entries:
        text = entry.body.strip()
        if not text:
            continue
        pad = "  " * (entry.depth - 1)
        first, *more = text.split("\n")
        lines.append(f"{pad}- {first}")
        lines.extend(f"{pad}  {line}" for line in more if line.strip())
    outline = "\n".join(lines)
    return f"{body.rstrip()}\n\n{outline}" if body.strip() and outline else (outline or body)


def _delete_for(conn: sqlite3.Connection, ids: list[str]) -> None:
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        conn.execute(f"DELETE FROM passages WHERE node_id IN ({','.join('?' * len(chunk))})", chunk)


def _load_ancestors(
    conn: sqlite3.Connection, parents: list[str], titles: dict[str, tuple[str, str | None]]
) -> None:
    """Fill ``titles`` (id -> (title, parent id)) for every ancestor of ``parents``, level by level."""
    wanted = {p for p in parents if p not in titles}
    for _ in range(CONTEXT_DEPTH):
        if not wanted:
            return
        found: set[str] = set()
        chunk_list = sorted(wanted)
        for start in range(0, len(chunk_list), 500):
            chunk = chunk_list[start : start + 500]
            for node_id, title, parent in conn.execute(
                f"SELECT id, title, parent_id FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk
            ):
                titles[node_id] = (title, parent)
                found.add(node_id)
        # A parent that no longer exists is simply where the chain ends.
        for missing in wanted - found:
            titles[missing] = ("", None)
        wanted = {p for node_id in found for p in [titles[node_id][1]] if p and p not in titles}


def _context(parent_id: str | None, titles: dict[str, tuple[str, str | None]]) -> str:
    chain: list[str] = []
    seen: set[str] = set()
    while parent_id and parent_id in titles and parent_id not in seen and len(chain) < CONTEXT_DEPTH:
        seen.add(parent_id)
        title, parent_id = titles[parent_id]
        if title:
            title = " ".join(title.split())
            chain.append(title if len(title) <= CONTEXT_TITLE_CHARS else title[: CONTEXT_TITLE_CHARS - 1] + "…")
    return HEADING_SEP.join(reversed(chain))
