"""Resolve: turn each topic the user typed into seed node ids.

Order of trust: an exact node id; an exact title or alias (case-insensitive); else the best BM25
full-text hits, keeping only hits close to the best one so a weak match never becomes a seed.
The semantic layer adds vector search here (rank fusion with BM25) for free-text topics.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ctx.store.reads import find_by_name, search

FTS_MAX_SEEDS = 3
# A hit must score at least this share of the best hit's BM25 to become a seed as well.
FTS_RELATIVE_CUTOFF = 0.6


@dataclass(frozen=True)
class ResolvedTopic:
    topic: str
    ids: tuple[str, ...]
    how: str  # "id", "title", "search" or "none"


def resolve_topic(conn: sqlite3.Connection, topic: str, include_private: bool = False) -> ResolvedTopic:
    text = topic.strip()
    if not text:
        return ResolvedTopic(topic, (), "none")
    visible = "" if include_private else " AND private = 0"
    if conn.execute(f"SELECT 1 FROM nodes WHERE id = ?{visible}", (text,)).fetchone():
        return ResolvedTopic(topic, (text,), "id")
    names = find_by_name(conn, text, include_private=include_private)
    if names:
        return ResolvedTopic(topic, (names[0],), "title")
    hits = search(conn, text, limit=FTS_MAX_SEEDS * 3, include_private=include_private)
    if not hits:
        return ResolvedTopic(topic, (), "none")
    best = hits[0].score
    chosen = [h.id for h in hits if h.score >= best * FTS_RELATIVE_CUTOFF][:FTS_MAX_SEEDS]
    return ResolvedTopic(topic, tuple(chosen), "search")


def resolve_topics(
    conn: sqlite3.Connection, topics: tuple[str, ...], include_private: bool = False
) -> list[ResolvedTopic]:
    return [resolve_topic(conn, t, include_private) for t in topics]


def seed_ids(resolved: list[ResolvedTopic]) -> list[str]:
    """Every seed once, in topic order."""
    out: list[str] = []
    for r in resolved:
        for node_id in r.ids:
            if node_id not in out:
                out.append(node_id)
    return out
