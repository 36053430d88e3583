"""The values the store hands out and takes in, whatever engine holds the graph.

Plain dataclasses and tuples: nothing here knows SQLite or PostgreSQL. Every engine behind the
protocols of ``ctx.store.protocols`` returns exactly these, with the same field values for the
same imported sources (ids, titles, token counts, orderings), so the stages above the store give
the same bytes on either engine.

Conventions every engine follows:

* times are epoch seconds (float, UTC) or None;
* ``tags``, ``fields`` and ``aliases`` are JSON arrays/objects when a row carries them as text
  (``TagsText``): ``json.dumps(value, ensure_ascii=False)`` of what the importer gave, ``"[]"`` /
  ``"{}"`` when empty (the exact text matters: the walk's ranker parses it);
* a node's ``tokens`` is the estimate stored at import (``ctx.tokens.estimate_tokens`` of
  ``title + "\\n" + body``), never recounted by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctx.store.records import EdgeRecord, NodeRecord

__all__ = [
    "Crumb",
    "EdgeRecord",
    "EdgeView",
    "EmbeddingStatus",
    "FileRecord",
    "FileState",
    "MAX_QUERY_TERMS",
    "Node",
    "NodeFacts",
    "NodeRecord",
    "NodeText",
    "Outline",
    "OutlineEntry",
    "PassageHit",
    "Removed",
    "SearchHit",
    "Settled",
    "Source",
    "StoredPassage",
    "WalkEdge",
    "EdgeEnds",
    "WalkDetail",
    "Neighbour",
    "ScanTable",
    "Written",
]

# A full-text query is its first this many distinct words, on every engine (FTS5's cost grows with
# the terms of a query: a 1,500-word query took ~60 s of BM25). A question is a few dozen words.
MAX_QUERY_TERMS = 64

# (mtime_ns, size, content hash) of a file as last imported
FileState = tuple[int, int, str]
# (path, mtime_ns, size, content hash) of a file just read
FileRecord = tuple[str, int, int, str]
# One edge met by the walk: (src, dst, edge type, other end's type, other end's tags as JSON text
# or None, other end's updated, other end's title); the other end is dst when walking out.
WalkEdge = tuple[str, str, str, str, "str | None", "float | None", str]
# An edge without what is at its other end: (src, dst, edge type) (``GraphReader.edge_ends``).
EdgeEnds = tuple[str, str, str]
# What the walk reads of a node: (id, type, tags as JSON text or None, updated, title)
# (``GraphReader.walk_details``; a WalkEdge's last four fields, read on their own).
WalkDetail = tuple[str, str, "str | None", "float | None", str]
# A hub's neighbour: (id, type, tags as JSON text or None, updated, title)
Neighbour = tuple[str, str, "str | None", "float | None", str]
# A Neighbour with the largest weight of an edge to it (GraphReader.ranked_neighbours).
RankedNeighbour = tuple[str, str, "str | None", "float | None", str, float]


@dataclass(frozen=True)
class ScanTable:
    """What a warm process keeps of a hub the store ranks newest first (``GraphReader.scan_table``):
    none of it depends on the walk, which then values the hub's best from it with its own costs.

    ``big`` is the hub's biggest edge class, (type, direction); ``links`` its distinct neighbours,
    hidden ones included; ``hidden`` those of them the reader may not see; ``small`` every visible
    neighbour of the hub's other classes as (id, type, tags, updated, title, w), best first as
    ``best_neighbours`` ranks them, w the largest weight of an edge to it over every class (the
    big one's included); ``in_big`` how many of those are the big class's too. The big class's
    own neighbours are read newest first, a page at a time (``GraphReader.newest_neighbours``)."""

    big: tuple[str, str]
    links: int
    hidden: frozenset[str]
    small: list[RankedNeighbour]
    in_big: int
# (id, title, body, content hash) of a node to embed
NodeText = tuple[str, str, str, str]


@dataclass
class Node:
    """A node as ``ctx show`` and the library's ``Graph.show`` give it: every stored column."""

    id: str
    title: str
    body: str
    type: str
    tags: list[str]
    fields: dict[str, list[str]]
    aliases: list[str]
    source_id: int
    source_path: str | None
    parent_id: str | None
    position: int | None
    created: float | None
    updated: float | None
    content_hash: str
    tokens: int  # of title + body, estimated at import (ctx.tokens.estimate_tokens); older graphs hold exact counts
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeFacts:
    """What scoring and selection need of a walked node (no body: bodies are read later, only for
    the nodes a budget may show). ``fields`` is the stored JSON object parsed (values as the
    importer gave them), or ``{}`` when not asked for."""

    id: str
    title: str
    type: str
    tags: list[str]
    fields: dict[str, Any]
    source_path: str | None
    parent_id: str | None
    position: int | None
    created: float | None
    updated: float | None
    tokens: int


@dataclass
class SearchHit:
    id: str
    title: str
    type: str
    source_path: str | None
    score: float  # the engine's full-text relevance, higher is better (SQLite: BM25 with its sign flipped)
    snippet: str


@dataclass
class EdgeView:
    type: str  # the name as seen from the node: link, backlink, child, parent, ...
    direction: str  # "out" or "in"
    other_id: str | None
    other_title: str | None
    target: str | None
    label: str | None


@dataclass(frozen=True)
class OutlineEntry:
    id: str
    title: str
    body: str
    type: str
    depth: int  # 1 for the page's direct children


@dataclass(frozen=True)
class Outline:
    entries: list[OutlineEntry]
    truncated: bool  # more blocks exist below the page than max_nodes allowed


@dataclass(frozen=True)
class Crumb:
    id: str
    title: str
    type: str


@dataclass(frozen=True)
class StoredPassage:
    id: int
    node_id: str
    ord: int
    heading: tuple[str, ...]
    text: str
    tokens: int
    hash: str


@dataclass(frozen=True)
class PassageHit:
    id: int
    node_id: str
    score: float  # higher is better


@dataclass(frozen=True)
class WordCover:
    """For each text given to ``ctx.store.word_cover``: the question's words it holds (as given),
    and the share of its title's content words the question says (1: the question names it)."""

    held: tuple[frozenset[str], ...]
    named: tuple[float, ...]


@dataclass(frozen=True)
class Source:
    id: int
    root: str
    name: str
    format: str
    imported_at: float | None  # the last import that changed something
    checked_at: float | None  # the last import run, changed or not
    # Counted only when asked (``GraphReader.sources(counted=True)``): the counts scan the graph
    # (130-190 ms at 1M nodes), and the freshness check, sync and privacy only need the roots.
    files: int | None
    nodes: int | None
    embedded: int | None  # nodes with a fresh vector from the graph's active model


@dataclass(frozen=True)
class Removed:
    root: str
    nodes: int
    edges: int
    files: int
    vectors: int
    kept_tags: int  # shared tag nodes handed over to a source that still uses them


@dataclass(frozen=True)
class EmbeddingStatus:
    model: str | None
    nodes: int
    fresh: int  # embedded by the active model from the node's current content

    @property
    def missing(self) -> int:
        """Nodes with no vector, a stale one, or one from another model."""
        return self.nodes - self.fresh


@dataclass
class Written:
    """What one batch of records became: counts, and the ids that had to be renamed."""

    nodes: int = 0
    edges: int = 0
    warnings: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # id as read -> id as stored


@dataclass
class Settled:
    """What a streamed file's edges became once it was read whole."""

    edges: int = 0
    dangling: list[tuple[str, str]] = field(default_factory=list)  # (type, src) of the first few
    dangling_total: int = 0


# NodeRecord and EdgeRecord (ctx.store.records) are what importers produce; re-exported here so
# that an engine needs one module for every value it meets.
_RECORDS = (NodeRecord, EdgeRecord)
