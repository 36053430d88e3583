"""The record every stage after the walk adds to: one candidate node and what happened to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctx.assemble.traverse import Hop


# The reason of a candidate the budget alone left out: the same words in `--explain` and in the
# JSON `omitted` list (which is rendered, and counted, before the audit runs).
NO_ROOM = "no room"


@dataclass
class Candidate:
    id: str
    title: str
    type: str
    tags: list[str]
    fields: dict[str, list[str]]  # already filtered by the lens's field whitelist
    source_path: str | None
    parent_id: str | None
    position: int | None
    created: float | None
    updated: float | None
    store_tokens: int  # tokens of title + body estimated at import time (ctx.tokens.estimate_tokens)
    hops: int
    cost: float  # weighted distance (0 for a seed)
    path: tuple[Hop, ...]
    seed: bool
    semantic: bool = False  # added by similarity, not reached by the walk
    recent: bool = False  # added by the lens's activity window, not reached by the walk
    sibling_offset: int | None = None  # positions away from a seed with the same parent
    relevance: float = 1.0  # a seed's match to its topic (1 for id/title; search score share)
    search: float = 0.0  # fused full-text + vector relevance, 0..1 (lens semantic.rank: fused)
    neighbours: dict[str, list[str]] = field(default_factory=dict)  # lens output.neighbours
    body: str | None = None  # loaded only for candidates the budget may show
    # Query-focused rendering (focus.py): the node's passages with their relevance to a free-text
    # topic, set beside ``body`` when the build ranks passages; None renders the lens's way.
    pieces: list[Any] | None = None
    # score parts: distance, similarity, recency, boost; score = boost * weighted sum
    parts: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    rank: int = 0  # 1 = best
    section: str | None = None
    decision: str = "dropped"  # full | shortened | summarized | dropped
    reason: str = ""  # why it was left out or shortened; NO_ROOM when only the budget decided
    tokens: int = 0  # tokens of this candidate's block in the final output (0 if not shown)
    # Outliners (outline_view.py): where a block sits, the page it groups under, the blocks a
    # page shows beneath it (a store.outline.Outline), and the node whose outline shows this one.
    breadcrumb: tuple[str, ...] = ()
    page: str | None = None
    outline: Any = None
    in_outline_of: str | None = None

    def pieces_matched(self) -> bool:
        """Whether the topic matched any of this node's passages (focus.py)."""
        return any(p.relevance > 0 for p in self.pieces or ())

    @property
    def path_names(self) -> list[str]:
        return [h.edge for h in self.path]

    @property
    def document(self) -> str:
        """The document this node belongs to, for grouping, ordering and citing: an outline
        block's page (in Roam or Tana every node shares one file), else its file, else its
        outline parent, else itself."""
        return self.page or self.source_path or self.parent_id or self.id
