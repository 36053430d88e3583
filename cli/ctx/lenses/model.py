"""The lens model: what a lens says, with every default written once.

Each option's default and its bounds live on its dataclass field (``number``, ``flag``, ``choice``,
``strings``, ``multipliers``); the validator (``ctx.lenses.validate``) reads them from there, so a
default is never written twice and a new option is one field.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

DIRECTIONS = ("out", "in", "both")
SECTION_ORDERS = (
    "rank", "closest", "depth", "chronological", "reverse-chronological", "document", "sandwich", "title",
    "grouped",  # documents by their best node's rank, each document's nodes in reading order (seed 004)
)
GROUP_BY = ("none", "depth", "document")
LAYOUTS = ("list", "tree")
PATH_MODES = ("mixed", "pure")
PACKING_STRATEGIES = ("score", "greedy", "interleaved", "density")
TRUNCATION_STRATEGIES = ("keep-start", "keep-end", "extractive")
SEED_RETRIEVAL = ("hybrid", "fts", "vector")
SEMANTIC_RANKS = ("similarity", "fused")
HEADER_LEVELS = ("full", "compact", "minimal")
HARD_MAX_DEPTH = 10  # no lens may walk further: beyond this a "context" is the whole graph


# ---------------------------------------------------------------------------------------------
# Option fields: a default plus what the validator needs to check a value written in YAML.
# ``key`` is the option's path in the lens section when it differs from the field name.


def number(
    default: Any, *, low: float | None = None, high: float | None = None, integer: bool = False,
    low_open: bool = False, key: tuple[str, ...] | None = None,
) -> Any:
    spec = {"kind": "number", "low": low, "high": high, "integer": integer, "low_open": low_open, "key": key}
    return field(default=default, metadata=spec)


def flag(default: bool | None, *, key: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"kind": "bool", "key": key})


def choice(default: str, choices: tuple[str, ...], *, key: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"kind": "choice", "choices": choices, "key": key})


def strings(default: tuple[str, ...], *, lower: bool = False, key: tuple[str, ...] | None = None) -> Any:
    return field(default=default, metadata={"kind": "strings", "lower": lower, "key": key})


def multipliers() -> Any:
    return field(default_factory=dict, metadata={"kind": "multipliers", "key": None})


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EdgeRule:
    """Follow edges whose canonical type matches ``pattern`` in ``direction`` (out or in)."""

    pattern: str  # canonical type or a glob over canonical types ("field:*", "*")
    direction: str  # "out" or "in" (a "both" entry in the file becomes two rules)
    key: str  # the key as written in the lens, for explanations
    max_depth: int  # the lens's max_depth unless the entry says less
    weight: float = 1.0

    def matches(self, canonical_type: str) -> bool:
        if self.pattern == canonical_type:
            return True
        return any(ch in self.pattern for ch in "*?[") and fnmatch.fnmatchcase(canonical_type, self.pattern)

    @property
    def specificity(self) -> int:
        # An exact name beats a glob; a longer glob beats "*".
        return 1000 if not any(ch in self.pattern for ch in "*?[") else len(self.pattern)


@dataclass(frozen=True)
class Selector:
    """Which candidates a section takes. All given conditions must hold (AND)."""

    seed: bool | None = None
    hops: tuple[int, int] | None = None  # inclusive range of hop counts
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    via: tuple[str, ...] = ()  # edge names (or globs) the FIRST hop of the path must match
    via_all: tuple[str, ...] = ()  # edge names every hop of the path must match
    semantic: bool | None = None  # True: not reached by the walk (added by similarity)
    recent: bool | None = None  # True: added because it was edited recently (lens ``activity``)
    siblings: int | None = None  # same parent as a seed, at most this many positions away
    rest: bool = False  # everything no earlier section took

    def describe(self) -> str:
        parts = []
        for name in ("seed", "hops", "types", "tags", "via", "via_all", "semantic", "recent", "siblings"):
            value = getattr(self, name)
            if value not in (None, ()):
                parts.append(f"{name}={value}")
        if self.rest:
            parts.append("rest")
        return ", ".join(parts) or "any"


@dataclass(frozen=True)
class Section:
    name: str
    select: Selector
    share: float | None = None  # share of the budget left after the header; None: split what is left
    order: str = "rank"  # the lens's output.order when the section does not say
    group_by: str = "none"
    max_nodes: int | None = None
    # Filled before the shares of the other sections are computed, which then split what it left
    # (seed 000: the target first, then 40/30/30 of the rest).
    reserve: bool = False
    layout: str = "list"  # "tree": indent by hops and name the node each one connects to


DEFAULT_SECTIONS = (
    Section("Topic", Selector(seed=True), share=0.4),
    Section("Related", Selector(rest=True)),
)


@dataclass(frozen=True)
class Scoring:
    distance: float = number(0.4, low=0, high=1)
    similarity: float = number(0.35, low=0, high=1)
    recency: float = number(0.25, low=0, high=1)
    # Weight of search relevance (``semantic.rank: fused``): the fused BM25 + vector score, 0..1.
    relevance: float = number(0.0, low=0, high=1)
    # Weights used when no similarity is available (seed 003: 60% distance + 40% recency).
    fallback_distance: float = number(0.6, low=0, high=1, key=("fallback", "distance"))
    fallback_recency: float = number(0.4, low=0, high=1, key=("fallback", "recency"))
    recency_half_life_days: float = number(30.0, low=0, high=1e6, low_open=True)
    # Maximal marginal relevance: 0 ranks by score alone; d > 0 re-ranks the top greedily by
    # (1 - d) * score share - d * (highest word overlap with a node ranked above), so a
    # near-duplicate of a better node gives way to a node about something else.
    diversity: float = number(0.0, low=0, high=1)


@dataclass(frozen=True)
class Boosts:
    """Multipliers on a candidate's score; several that apply multiply together."""

    types: dict[str, float] = multipliers()
    tags: dict[str, float] = multipliers()
    fields: dict[str, float] = multipliers()  # the node has this field
    keywords: dict[str, float] = multipliers()  # title contains (case-insensitive)


@dataclass(frozen=True)
class FieldFilter:
    include: tuple[str, ...] = strings(("*",))
    exclude: tuple[str, ...] = strings(())

    def allows(self, name: str) -> bool:
        return _field_allowed(self.include, self.exclude, name.lower())


@lru_cache(maxsize=1024)
def _field_allowed(include: tuple[str, ...], exclude: tuple[str, ...], low: str) -> bool:
    # Asked for every field of every walked node, and a graph repeats the same few field names.
    if any(fnmatch.fnmatchcase(low, p.lower()) for p in exclude):
        return False
    return any(fnmatch.fnmatchcase(low, p.lower()) for p in include)


@dataclass(frozen=True)
class OutputOptions:
    summary_below: int = number(500, low=0, integer=True)  # budgets under this get summary-only mode (seed 003)
    also_related: bool = flag(True)  # one-line summaries of what did not fit
    also_related_share: float = number(0.1, low=0, high=0.5)  # budget reserved for them (unused flows back)
    show_scores: bool = flag(True)
    # false: a node is its heading and text only (no id/type/distance/source lines), for readers
    # such as question answering where every token should carry content.
    metadata: bool = flag(True)
    # The richest header the output may carry: full (counts and scoring notes), compact (label,
    # lens, tokens) or minimal (label and tokens); smaller budgets shrink it further anyway.
    header: str = choice("full", HEADER_LEVELS)
    min_shortened_tokens: int = number(40, low=1, integer=True)  # do not shorten a node to less than this much text
    summary: bool = flag(False)  # a closing block: nodes and tokens per section (seed 000)
    neighbours: tuple[str, ...] = strings(())  # edge names whose neighbour ids each node lists
    citations: bool = flag(False)  # number source documents [1], [2] and add a citation map (seed 002)
    empty_sections: bool = flag(False)  # show sections that got nothing, saying so
    # Each shown node carries its day (its own date, else when it was modified) and a question
    # about time reads rank-ordered sections oldest first; false: no dates.
    dates: bool = flag(True)
    outline_max_nodes: int = number(30, low=0, integer=True)  # an outliner page shows up to this many of its blocks (0: none)
    # Source formats whose same-file child edges are outlines (pages of blocks), not documents.
    outline_formats: tuple[str, ...] = strings(("logseq", "roam", "tana", "notion"))


# Slots whose behaviour other parts of ctx implement; the schema and defaults live here so that
# every lens is validated the same way and code can rely on the keys existing.
@dataclass(frozen=True)
class Packing:
    strategy: str = choice("score", PACKING_STRATEGIES)  # score: by score per token; greedy: by document; ...
    # A node that does not fit whole first gets a slice of at least this many tokens (or half the
    # room left) before lower-ranked nodes are packed whole; 0: it only gets what is left at the end.
    min_slice: int = number(160, low=0, high=100000, integer=True)


@dataclass(frozen=True)
class Truncation:
    strategy: str = choice("keep-start", TRUNCATION_STRATEGIES)


@dataclass(frozen=True)
class Dedup:
    exact: bool = flag(True)
    near: bool = flag(False)
    threshold: float = number(0.8, low=0, high=1)


@dataclass(frozen=True)
class Semantic:
    top_k: int = number(0, low=0, high=1000, integer=True)  # nodes similar to the topic that the walk did not reach
    min_similarity: float = number(0.3, low=-1, high=1)
    # similarity: extras are the nearest vectors; fused: the best of full-text and vector search
    # fused by rank (RRF), which also fills every candidate's ``relevance`` score term.
    rank: str = choice("similarity", SEMANTIC_RANKS)
    rrf_k: int = number(60, low=1, high=1000, integer=True)  # RRF's damping constant for ``rank: fused``
    # fused: how many seeds' names (capitalised words of their text that the topic lacks) widen
    # the full-text query, so a second-hop note that shares a name with the first hit is found.
    feedback: int = number(0, low=0, high=20, integer=True)


@dataclass(frozen=True)
class Privacy:
    enabled: bool = flag(True)
    tags: tuple[str, ...] = strings(("private",), lower=True)
    fields: tuple[str, ...] = strings(("private",))
    inherit: bool = flag(True)  # everything under a private ancestor is private too


@dataclass(frozen=True)
class Activity:
    """Candidates edited within ``hours`` of the graph's newest update (0: none); seed 001."""

    hours: float = number(0.0, low=0, high=1e6)
    limit: int = number(10, low=0, high=10000, integer=True)


@dataclass(frozen=True)
class Seeds:
    """How many full-text hits a free-text topic may turn into seeds, and how close to the best."""

    max: int = number(3, low=1, high=200, integer=True)
    cutoff: float = number(0.6, low=0, high=1)  # share of the best hit's score a hit needs
    # hybrid: BM25 and vector ranks fused (needs `ctx embed`; BM25 alone without vectors);
    # fts: BM25 only; vector: nearest vectors only.
    retrieval: str = choice("hybrid", SEED_RETRIEVAL)
    # Free-text topics also seed from nodes whose title (without a trailing "(...)"
    # disambiguator) appears verbatim in the topic: the entities the question names.
    mentions: bool = flag(False)
    # Only the first ``protect`` seeds are never dropped (shortened to fit instead); later seeds
    # are ranked and packed whole-or-not like any candidate at distance 0. None: every seed.
    protect: int | None = number(None, low=1, high=200, integer=True)


@dataclass(frozen=True)
class Lens:
    name: str
    description: str = ""
    source: str = "file"  # "builtin", "user", "project" or "file"
    path: str = ""
    depth: int = number(2, low=0, high=HARD_MAX_DEPTH, integer=True)  # default --depth
    max_depth: int = number(5, low=0, high=HARD_MAX_DEPTH, integer=True)  # --depth above this is capped
    fan_out: int = number(50, low=1, high=100000, integer=True)  # new neighbours kept per node
    paths: str = choice("mixed", PATH_MODES)  # "pure": every hop of a path follows the same edge as the first
    # For a free-text topic: resolve it, rank candidates and pack the budget by passages (the
    # parts of notes that match the topic) rather than by whole notes. Without it a long node is
    # still shortened to its most relevant passages.
    passages: bool = flag(False)
    rules: tuple[EdgeRule, ...] = ()
    fields: FieldFilter = FieldFilter()
    boosts: Boosts = Boosts()
    scoring: Scoring = Scoring()
    sections: tuple[Section, ...] = DEFAULT_SECTIONS
    output: OutputOptions = OutputOptions()
    packing: Packing = Packing()
    truncation: Truncation = Truncation()
    dedup: Dedup = Dedup()
    semantic: Semantic = Semantic()
    privacy: Privacy = Privacy()
    activity: Activity = Activity()
    cycles: tuple[str, ...] = ()  # canonical edge types to report loops over
    seeds: Seeds = Seeds()
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def as_key(self) -> str:
        """``repr(self)``, made once per lens object (it is frozen: the text never changes): what a
        warm build keys what it keeps by, asked four times a build, each repr walking every
        setting of the lens and its rules."""
        known: str | None = self.__dict__.get("_as_key")
        if known is None:
            known = repr(self)
            object.__setattr__(self, "_as_key", known)
        return known

    def rules_for(self, canonical_type: str, direction: str, hop: int) -> EdgeRule | None:
        """The most specific rule that lets the walk take this edge at this hop, if any."""
        best: EdgeRule | None = None
        for rule in self.rules:
            if rule.direction != direction or hop > rule.max_depth or not rule.matches(canonical_type):
                continue
            if best is None or rule.specificity > best.specificity:
                best = rule
        return best
