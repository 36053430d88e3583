"""Lenses: YAML files that say how to walk, score, budget and lay out context for one kind of task.

A lens is data, not code: every built-in lens (``lenses/*.yaml``) and every user lens goes through
the same model and validation, so a new kind of task never needs a special code path. The schema is
documented in ``docs/lenses.md``; this module is its single source of truth.

Lookup order for a name: a path to a ``.yaml``/``.yml`` file; the project's ``.ctx/lenses``; the
user's ``<config>/ctx/lenses``; the built-in lenses shipped with the package.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctx.errors import LensError, UsageError

# Walking a canonical edge backwards has its own name; a lens may use either spelling.
INVERSE_EDGE_NAMES: dict[str, str] = {
    "parent": "child",
    "backlink": "link",
    "embedded_by": "embed",
    "tagged": "tag",
    "supported_by": "supports",
    "referenced_by": "ref",
}
CANONICAL_INVERSE: dict[str, str] = {v: k for k, v in INVERSE_EDGE_NAMES.items()}

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


def edge_display_name(canonical: str, direction: str) -> str:
    """The name of walking ``canonical`` in ``direction`` ("link"/"out" -> link, "in" -> backlink)."""
    if direction == "out":
        return canonical
    if canonical in CANONICAL_INVERSE:
        return CANONICAL_INVERSE[canonical]
    if canonical.startswith("field:"):
        return f"{canonical}^-1"
    return f"{canonical}_of"


@dataclass(frozen=True)
class EdgeRule:
    """Follow edges whose canonical type matches ``pattern`` in ``direction`` (out or in)."""

    pattern: str  # canonical type or a glob over canonical types ("field:*", "*")
    direction: str  # "out" or "in" (a "both" entry in the file becomes two rules)
    weight: float
    max_depth: int
    key: str  # the key as written in the lens, for explanations

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
    share: float | None  # share of the budget left after the header; None: split what is left
    order: str
    group_by: str
    max_nodes: int | None
    # Filled before the shares of the other sections are computed, which then split what it left
    # (seed 000: the target first, then 40/30/30 of the rest).
    reserve: bool = False
    layout: str = "list"  # "tree": indent by hops and name the node each one connects to


@dataclass(frozen=True)
class Scoring:
    distance: float = 0.4
    similarity: float = 0.35
    recency: float = 0.25
    # Weight of search relevance (``semantic.rank: fused``): the fused BM25 + vector score, 0..1.
    relevance: float = 0.0
    # Weights used when no similarity is available (seed 003: 60% distance + 40% recency).
    fallback_distance: float = 0.6
    fallback_recency: float = 0.4
    recency_half_life_days: float = 30.0
    # Maximal marginal relevance: 0 ranks by score alone; d > 0 re-ranks the top greedily by
    # (1 - d) * score share - d * (highest word overlap with a node ranked above), so a
    # near-duplicate of a better node gives way to a node about something else.
    diversity: float = 0.0


@dataclass(frozen=True)
class Boosts:
    """Multipliers on a candidate's score; several that apply multiply together."""

    types: dict[str, float] = field(default_factory=dict)
    tags: dict[str, float] = field(default_factory=dict)
    fields: dict[str, float] = field(default_factory=dict)  # the node has this field
    keywords: dict[str, float] = field(default_factory=dict)  # title contains (case-insensitive)


@dataclass(frozen=True)
class FieldFilter:
    include: tuple[str, ...] = ("*",)
    exclude: tuple[str, ...] = ()

    def allows(self, name: str) -> bool:
        low = name.lower()
        if any(fnmatch.fnmatchcase(low, p.lower()) for p in self.exclude):
            return False
        return any(fnmatch.fnmatchcase(low, p.lower()) for p in self.include)


@dataclass(frozen=True)
class OutputOptions:
    summary_below: int = 500  # budgets under this get summary-only mode (seed 003)
    also_related: bool = True  # one-line summaries of what did not fit
    also_related_share: float = 0.1  # budget reserved for them (unused flows back)
    show_scores: bool = True
    # false: a node is its heading and text only (no id/type/distance/source lines), for readers
    # such as question answering where every token should carry content.
    metadata: bool = True
    # The richest header the output may carry: full (counts and scoring notes), compact (label,
    # lens, tokens) or minimal (label and tokens); smaller budgets shrink it further anyway.
    header: str = "full"
    min_shortened_tokens: int = 40  # do not shorten a node to less than this much text
    summary: bool = False  # a closing block: nodes and tokens per section (seed 000)
    neighbours: tuple[str, ...] = ()  # edge names whose neighbour ids each node lists
    citations: bool = False  # number source documents [1], [2] and add a citation map (seed 002)
    empty_sections: bool = False  # show sections that got nothing, saying so
    outline_max_nodes: int = 30  # an outliner page shows up to this many of its blocks (0: none)
    # Source formats whose same-file child edges are outlines (pages of blocks), not documents.
    outline_formats: tuple[str, ...] = ("logseq", "roam", "tana", "notion")


# Slots whose behaviour other parts of ctx implement; the schema and defaults live here so that
# every lens is validated the same way and code can rely on the keys existing.
@dataclass(frozen=True)
class Packing:
    strategy: str = "score"  # score: by score per token; greedy: grouped by document; interleaved


@dataclass(frozen=True)
class Truncation:
    strategy: str = "keep-start"


@dataclass(frozen=True)
class Dedup:
    exact: bool = True
    near: bool = False
    threshold: float = 0.8


@dataclass(frozen=True)
class Semantic:
    top_k: int = 0  # nodes similar to the topic that the walk did not reach (0: none)
    min_similarity: float = 0.3
    # similarity: extras are the nearest vectors; fused: the best of full-text and vector search
    # fused by rank (RRF), which also fills every candidate's ``relevance`` score term.
    rank: str = "similarity"
    rrf_k: int = 60  # RRF's damping constant for ``rank: fused``
    # fused: how many seeds' names (capitalised words of their text that the topic lacks) widen
    # the full-text query, so a second-hop note that shares a name with the first hit is found.
    feedback: int = 0


@dataclass(frozen=True)
class Privacy:
    enabled: bool = True
    tags: tuple[str, ...] = ("private",)
    fields: tuple[str, ...] = ("private",)
    inherit: bool = True  # everything under a private ancestor is private too


@dataclass(frozen=True)
class Activity:
    """Candidates edited within ``hours`` of the graph's newest update (0: none); seed 001."""

    hours: float = 0.0
    limit: int = 10


@dataclass(frozen=True)
class Seeds:
    """How many full-text hits a free-text topic may turn into seeds, and how close to the best."""

    max: int = 3
    cutoff: float = 0.6  # share of the best hit's score a hit needs
    # hybrid: BM25 and vector ranks fused (needs `ctx embed`; BM25 alone without vectors);
    # fts: BM25 only; vector: nearest vectors only.
    retrieval: str = "hybrid"
    # Free-text topics also seed from nodes whose title (without a trailing "(...)"
    # disambiguator) appears verbatim in the topic: the entities the question names.
    mentions: bool = False
    # Only the first ``protect`` seeds are never dropped (shortened to fit instead); later seeds
    # are ranked and packed whole-or-not like any candidate at distance 0. None: every seed.
    protect: int | None = None


@dataclass(frozen=True)
class Lens:
    name: str
    description: str
    source: str  # "builtin", "user", "project" or "file"
    path: str
    depth: int
    max_depth: int
    fan_out: int
    rules: tuple[EdgeRule, ...]
    fields: FieldFilter
    boosts: Boosts
    scoring: Scoring
    sections: tuple[Section, ...]
    output: OutputOptions
    packing: Packing
    truncation: Truncation
    dedup: Dedup
    semantic: Semantic
    privacy: Privacy
    paths: str = "mixed"  # "pure": every hop of a path follows the same edge as the first
    activity: Activity = Activity()
    cycles: tuple[str, ...] = ()  # canonical edge types to report loops over
    seeds: Seeds = Seeds()
    raw: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def rules_for(self, canonical_type: str, direction: str, hop: int) -> EdgeRule | None:
        """The most specific rule that lets the walk take this edge at this hop, if any."""
        best: EdgeRule | None = None
        for rule in self.rules:
            if rule.direction != direction or hop > rule.max_depth or not rule.matches(canonical_type):
                continue
            if best is None or rule.specificity > best.specificity:
                best = rule
        return best


# ---------------------------------------------------------------------------------------------
# Validation: collect every problem, one line each, then raise them all together.


class _Problems:
    def __init__(self, where: str) -> None:
        self.where = where
        self.lines: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.lines.append(f"{self.where}: {key or '(top level)'}: {message}")


def _mapping(value: Any, key: str, problems: _Problems) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(key, f"must be a mapping, not {_kind(value)}")
        return {}
    return value


QUOTED_KEY_MAX = 40


def _kind(value: Any) -> str:
    """What a value is, for a problem line: its kind, never the value itself. A problem line names
    the file and the key; quoting values would let any file passed as a lens (a private note,
    a credentials file) be read back through the error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _label(key: Any) -> str:
    """A key as a problem line names it (the key path locates the problem): short keys as
    written, others cut and escaped."""
    text = str(key)
    if len(text) <= QUOTED_KEY_MAX and text.isprintable():
        return text
    return repr(text[:QUOTED_KEY_MAX])[1:-1] + "…"


def _unknown(data: dict[str, Any], allowed: set[str], prefix: str, problems: _Problems) -> None:
    from difflib import get_close_matches

    for key in data:
        if key not in allowed:
            hint = get_close_matches(str(key)[:100], sorted(allowed), n=1, cutoff=0.6)
            more = f" (did you mean {hint[0]!r}?)" if hint else ""
            problems.add(f"{prefix}{_label(key)}", f"unknown key{more}; allowed: {', '.join(sorted(allowed))}")


def _number(
    data: dict[str, Any], key: str, default: float, prefix: str, problems: _Problems,
    *, low: float | None = None, high: float | None = None, integer: bool = False, low_open: bool = False,
) -> Any:
    if key not in data or data[key] is None:
        return default
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        problems.add(f"{prefix}{key}", f"must be {'an integer' if integer else 'a number'}, not {_kind(value)}")
        return default
    if not math.isfinite(value):
        # .nan passes every range check (all comparisons are false) and .inf breaks arithmetic.
        problems.add(f"{prefix}{key}", f"must be a finite number, not {value}")
        return default
    if low is not None and (value <= low if low_open else value < low):
        problems.add(f"{prefix}{key}", f"must be {'>' if low_open else '>='} {low}, not {value}")
        return default
    if high is not None and value > high:
        problems.add(f"{prefix}{key}", f"must be <= {high}, not {value}")
        return default
    return value


def _bool(data: dict[str, Any], key: str, default: bool | None, prefix: str, problems: _Problems) -> Any:
    if key not in data or data[key] is None:
        return default
    if not isinstance(data[key], bool):
        problems.add(f"{prefix}{key}", f"must be true or false, not {_kind(data[key])}")
        return default
    return data[key]


def _choice(data: dict[str, Any], key: str, default: str, choices: tuple[str, ...], prefix: str, problems: _Problems) -> str:
    if key not in data or data[key] is None:
        return default
    value = data[key]
    if value not in choices:
        problems.add(f"{prefix}{key}", f"must be one of {', '.join(choices)}, not {_kind(value)}")
        return default
    return value


def _strings(value: Any, key: str, problems: _Problems) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add(key, f"must be a list of strings, not {_kind(value)}")
        return ()
    return tuple(value)


def _multipliers(value: Any, key: str, problems: _Problems) -> dict[str, float]:
    data = _mapping(value, key, problems)
    out: dict[str, float] = {}
    for name, factor in data.items():
        if (
            isinstance(factor, bool) or not isinstance(factor, (int, float))
            or not math.isfinite(factor) or factor < 0 or factor > 100
        ):
            problems.add(f"{key}.{_label(name)}", f"must be a number from 0 to 100, not {_kind(factor)}")
            continue
        out[str(name).lower()] = float(factor)
    return out


TOP_KEYS = {
    "name", "description", "depth", "max_depth", "fan_out", "edges", "fields", "boosts", "scoring",
    "sections", "output", "packing", "truncation", "dedup", "semantic", "privacy",
    "paths", "activity", "cycles", "seeds",
}
EDGE_KEYS = {"direction", "weight", "max_depth"}


def _parse_edges(data: dict[str, Any], max_depth: int, problems: _Problems) -> tuple[EdgeRule, ...]:
    rules: list[EdgeRule] = []
    edges = _mapping(data.get("edges"), "edges", problems)
    if "edges" in data and not edges:
        problems.add("edges", "must list at least one edge type to follow")
    for key, spec in edges.items():
        key = str(key)
        prefix = f"edges.{_label(key)}."
        if spec is None:
            spec = {}
        if not isinstance(spec, dict):
            problems.add(f"edges.{_label(key)}", f"must be a mapping (direction, weight, max_depth), not {_kind(spec)}")
            continue
        _unknown(spec, EDGE_KEYS, prefix, problems)
        weight = float(_number(spec, "weight", 1.0, prefix, problems, low=0, high=10, low_open=True))
        depth = int(_number(spec, "max_depth", max_depth, prefix, problems, low=1, high=HARD_MAX_DEPTH, integer=True))
        if key in INVERSE_EDGE_NAMES:
            if "direction" in spec:
                problems.add(f"{prefix}direction", f"{key!r} already names a direction (it is {INVERSE_EDGE_NAMES[key]!r} walked in); drop this key")
            rules.append(EdgeRule(INVERSE_EDGE_NAMES[key], "in", weight, depth, key))
            continue
        if not key or any(c.isspace() for c in key):
            problems.add(f"edges.{_label(key)}", "edge type names cannot be empty or contain spaces")
            continue
        direction = _choice(spec, "direction", "both", DIRECTIONS, prefix, problems)
        for d in ("out", "in") if direction == "both" else (direction,):
            rules.append(EdgeRule(key, d, weight, depth, key))
    # An inverse-name entry (backlink) overrides the "in" half of its canonical entry (link: both).
    chosen: dict[tuple[str, str], EdgeRule] = {}
    for rule in rules:
        slot = (rule.pattern, rule.direction)
        if slot in chosen and chosen[slot].key in INVERSE_EDGE_NAMES and rule.key not in INVERSE_EDGE_NAMES:
            continue
        chosen[slot] = rule
    return tuple(sorted(chosen.values(), key=lambda r: (r.pattern, r.direction)))


SELECT_KEYS = {"seed", "hops", "types", "tags", "via", "via_all", "semantic", "recent", "siblings", "rest"}
SECTION_KEYS = {"name", "select", "share", "order", "group_by", "max_nodes", "reserve", "layout"}


def _parse_selector(value: Any, prefix: str, problems: _Problems) -> Selector:
    if value == "rest":
        return Selector(rest=True)
    if value == "seed":
        return Selector(seed=True)
    if value == "semantic":
        return Selector(semantic=True)
    if value == "recent":
        return Selector(recent=True)
    data = _mapping(value, prefix.rstrip("."), problems)
    _unknown(data, SELECT_KEYS, prefix, problems)
    hops: tuple[int, int] | None = None
    raw_hops = data.get("hops")
    if raw_hops is not None:
        if isinstance(raw_hops, int) and not isinstance(raw_hops, bool) and raw_hops >= 0:
            hops = (raw_hops, raw_hops)
        elif (
            isinstance(raw_hops, list) and len(raw_hops) == 2
            and all(isinstance(h, int) and not isinstance(h, bool) and h >= 0 for h in raw_hops)
            and raw_hops[0] <= raw_hops[1]
        ):
            hops = (raw_hops[0], raw_hops[1])
        else:
            problems.add(f"{prefix}hops", f"must be a hop count or [min, max], not {_kind(raw_hops)}")
    return Selector(
        seed=_bool(data, "seed", None, prefix, problems),
        hops=hops,
        types=tuple(t.lower() for t in _strings(data.get("types"), f"{prefix}types", problems)),
        tags=tuple(t.lower() for t in _strings(data.get("tags"), f"{prefix}tags", problems)),
        via=_strings(data.get("via"), f"{prefix}via", problems),
        via_all=_strings(data.get("via_all"), f"{prefix}via_all", problems),
        semantic=_bool(data, "semantic", None, prefix, problems),
        recent=_bool(data, "recent", None, prefix, problems),
        siblings=_number(data, "siblings", None, prefix, problems, low=0, high=1000, integer=True),
        rest=bool(_bool(data, "rest", False, prefix, problems)),
    )


DEFAULT_SECTIONS = (
    Section("Topic", Selector(seed=True), 0.4, "rank", "none", None),
    Section("Related", Selector(rest=True), None, "rank", "none", None),
)


def _parse_sections(data: dict[str, Any], default_order: str, problems: _Problems) -> tuple[Section, ...]:
    if "sections" not in data:
        return DEFAULT_SECTIONS
    raw = data["sections"]
    if not isinstance(raw, list) or not raw:
        problems.add("sections", f"must be a non-empty list of sections, not {_kind(raw)}")
        return DEFAULT_SECTIONS
    sections: list[Section] = []
    names: set[str] = set()
    for i, spec in enumerate(raw):
        prefix = f"sections[{i}]."
        if not isinstance(spec, dict):
            problems.add(f"sections[{i}]", f"must be a mapping, not {_kind(spec)}")
            continue
        _unknown(spec, SECTION_KEYS, prefix, problems)
        name = spec.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.add(f"{prefix}name", "is required (a non-empty string)")
            name = f"Section {i + 1}"
        elif name in names:
            problems.add(f"{prefix}name", "the same name is used by an earlier section")
        names.add(name)
        if "select" not in spec:
            problems.add(f"{prefix}select", "is required (e.g. {seed: true}, {hops: [1, 2]}, rest)")
        share = spec.get("share")
        if share is not None:
            share = _number(spec, "share", None, prefix, problems, low=0, high=1)
        max_nodes = spec.get("max_nodes")
        if max_nodes is not None:
            max_nodes = _number(spec, "max_nodes", None, prefix, problems, low=0, integer=True)
        sections.append(
            Section(
                name=name,
                select=_parse_selector(spec.get("select"), f"{prefix}select.", problems),
                share=float(share) if share is not None else None,
                order=_choice(spec, "order", default_order, SECTION_ORDERS, prefix, problems),
                group_by=_choice(spec, "group_by", "none", GROUP_BY, prefix, problems),
                max_nodes=max_nodes,
                reserve=bool(_bool(spec, "reserve", False, prefix, problems)),
                layout=_choice(spec, "layout", "list", LAYOUTS, prefix, problems),
            )
        )
    total = sum(s.share or 0 for s in sections)
    if total > 1.0 + 1e-9:
        problems.add("sections", f"shares add up to {total:g}; they must not exceed 1")
    if not any(s.select.seed for s in sections) and not any(s.select.rest for s in sections):
        problems.add("sections", "no section takes the seed (add one with `select: {seed: true}` or `select: rest`)")
    return tuple(sections)


def parse_lens(data: Any, *, where: str, name: str, source: str) -> Lens:
    """Validate a lens document and build the model; raises LensError listing every problem."""
    problems = _Problems(where)
    if not isinstance(data, dict):
        problems.add("", f"a lens file must be a mapping of keys, not {_kind(data)}")
        raise LensError(problems.lines)
    _unknown(data, TOP_KEYS, "", problems)

    max_depth = int(_number(data, "max_depth", 5, "", problems, low=0, high=HARD_MAX_DEPTH, integer=True))
    depth = int(_number(data, "depth", 2, "", problems, low=0, high=HARD_MAX_DEPTH, integer=True))
    if depth > max_depth:
        problems.add("depth", f"the default depth {depth} is above max_depth {max_depth}")
    fan_out = int(_number(data, "fan_out", 50, "", problems, low=1, high=100000, integer=True))
    rules = _parse_edges(data, max_depth, problems) if "edges" in data else _parse_edges(
        {"edges": {"*": {"direction": "both"}}}, max_depth, problems
    )

    fields_data = data.get("fields")
    if isinstance(fields_data, list):
        fields_data = {"include": fields_data}
    fields_map = _mapping(fields_data, "fields", problems)
    _unknown(fields_map, {"include", "exclude"}, "fields.", problems)
    field_filter = FieldFilter(
        include=_strings(fields_map.get("include", ["*"]), "fields.include", problems),
        exclude=_strings(fields_map.get("exclude"), "fields.exclude", problems),
    )

    boosts_map = _mapping(data.get("boosts"), "boosts", problems)
    _unknown(boosts_map, {"types", "tags", "fields", "keywords"}, "boosts.", problems)
    boosts = Boosts(**{k: _multipliers(boosts_map.get(k), f"boosts.{k}", problems) for k in ("types", "tags", "fields", "keywords")})

    s = _mapping(data.get("scoring"), "scoring", problems)
    _unknown(s, {"distance", "similarity", "recency", "relevance", "fallback", "recency_half_life_days", "diversity"}, "scoring.", problems)
    fb = _mapping(s.get("fallback"), "scoring.fallback", problems)
    _unknown(fb, {"distance", "recency"}, "scoring.fallback.", problems)
    scoring = Scoring(
        distance=float(_number(s, "distance", 0.4, "scoring.", problems, low=0, high=1)),
        similarity=float(_number(s, "similarity", 0.35, "scoring.", problems, low=0, high=1)),
        recency=float(_number(s, "recency", 0.25, "scoring.", problems, low=0, high=1)),
        relevance=float(_number(s, "relevance", 0.0, "scoring.", problems, low=0, high=1)),
        fallback_distance=float(_number(fb, "distance", 0.6, "scoring.fallback.", problems, low=0, high=1)),
        fallback_recency=float(_number(fb, "recency", 0.4, "scoring.fallback.", problems, low=0, high=1)),
        diversity=float(_number(s, "diversity", 0.0, "scoring.", problems, low=0, high=1)),
        recency_half_life_days=float(
            _number(s, "recency_half_life_days", 30.0, "scoring.", problems, low=0, high=1e6, low_open=True)
        ),
    )

    o = _mapping(data.get("output"), "output", problems)
    _unknown(o, {"order", "summary_below", "also_related", "also_related_share", "show_scores", "metadata", "header", "min_shortened_tokens",
                 "summary", "neighbours", "citations", "empty_sections", "outline_max_nodes",
                 "outline_formats"}, "output.", problems)
    default_order = _choice(o, "order", "rank", SECTION_ORDERS, "output.", problems)
    output = OutputOptions(
        summary_below=int(_number(o, "summary_below", 500, "output.", problems, low=0, integer=True)),
        also_related=bool(_bool(o, "also_related", True, "output.", problems)),
        also_related_share=float(_number(o, "also_related_share", 0.1, "output.", problems, low=0, high=0.5)),
        show_scores=bool(_bool(o, "show_scores", True, "output.", problems)),
        metadata=bool(_bool(o, "metadata", True, "output.", problems)),
        header=_choice(o, "header", "full", HEADER_LEVELS, "output.", problems),
        min_shortened_tokens=int(_number(o, "min_shortened_tokens", 40, "output.", problems, low=1, integer=True)),
        summary=bool(_bool(o, "summary", False, "output.", problems)),
        neighbours=_strings(o.get("neighbours"), "output.neighbours", problems),
        citations=bool(_bool(o, "citations", False, "output.", problems)),
        empty_sections=bool(_bool(o, "empty_sections", False, "output.", problems)),
        outline_max_nodes=int(_number(o, "outline_max_nodes", 30, "output.", problems, low=0, integer=True)),
        outline_formats=(
            _strings(o["outline_formats"], "output.outline_formats", problems)
            if "outline_formats" in o else OutputOptions.outline_formats
        ),
    )
    sections = _parse_sections(data, default_order, problems)

    p = _mapping(data.get("packing"), "packing", problems)
    _unknown(p, {"strategy"}, "packing.", problems)
    t = _mapping(data.get("truncation"), "truncation", problems)
    _unknown(t, {"strategy"}, "truncation.", problems)
    d = _mapping(data.get("dedup"), "dedup", problems)
    _unknown(d, {"exact", "near", "threshold"}, "dedup.", problems)
    m = _mapping(data.get("semantic"), "semantic", problems)
    _unknown(m, {"top_k", "min_similarity", "rank", "rrf_k", "feedback"}, "semantic.", problems)
    v = _mapping(data.get("privacy"), "privacy", problems)
    _unknown(v, {"enabled", "tags", "fields", "inherit"}, "privacy.", problems)
    a = _mapping(data.get("activity"), "activity", problems)
    _unknown(a, {"hours", "limit"}, "activity.", problems)
    k = _mapping(data.get("seeds"), "seeds", problems)
    _unknown(k, {"max", "cutoff", "retrieval", "mentions", "protect"}, "seeds.", problems)
    cycles = _mapping(data.get("cycles"), "cycles", problems)
    _unknown(cycles, {"edges"}, "cycles.", problems)
    cycle_edges = tuple(
        INVERSE_EDGE_NAMES.get(e, e) for e in _strings(cycles.get("edges"), "cycles.edges", problems)
    )

    description = data.get("description", "")
    if not isinstance(description, str):
        problems.add("description", f"must be a string, not {_kind(description)}")
        description = ""
    declared = data.get("name", name)
    if not isinstance(declared, str) or not declared.strip():
        problems.add("name", f"must be a non-empty string, not {_kind(declared)}")
        declared = name

    lens = Lens(
        name=declared,
        description=description.strip(),
        source=source,
        path=where,
        depth=depth,
        max_depth=max_depth,
        fan_out=fan_out,
        rules=rules,
        fields=field_filter,
        boosts=boosts,
        scoring=scoring,
        sections=sections,
        output=output,
        packing=Packing(_choice(p, "strategy", "score", PACKING_STRATEGIES, "packing.", problems)),
        truncation=Truncation(_choice(t, "strategy", "keep-start", TRUNCATION_STRATEGIES, "truncation.", problems)),
        dedup=Dedup(
            exact=bool(_bool(d, "exact", True, "dedup.", problems)),
            near=bool(_bool(d, "near", False, "dedup.", problems)),
            threshold=float(_number(d, "threshold", 0.8, "dedup.", problems, low=0, high=1)),
        ),
        semantic=Semantic(
            top_k=int(_number(m, "top_k", 0, "semantic.", problems, low=0, high=1000, integer=True)),
            min_similarity=float(_number(m, "min_similarity", 0.3, "semantic.", problems, low=-1, high=1)),
            rank=_choice(m, "rank", "similarity", SEMANTIC_RANKS, "semantic.", problems),
            rrf_k=int(_number(m, "rrf_k", 60, "semantic.", problems, low=1, high=1000, integer=True)),
            feedback=int(_number(m, "feedback", 0, "semantic.", problems, low=0, high=20, integer=True)),
        ),
        privacy=Privacy(
            enabled=bool(_bool(v, "enabled", True, "privacy.", problems)),
            tags=tuple(x.lower() for x in _strings(v.get("tags", ["private"]), "privacy.tags", problems)),
            fields=_strings(v.get("fields", ["private"]), "privacy.fields", problems),
            inherit=bool(_bool(v, "inherit", True, "privacy.", problems)),
        ),
        paths=_choice(data, "paths", "mixed", PATH_MODES, "", problems),
        activity=Activity(
            hours=float(_number(a, "hours", 0.0, "activity.", problems, low=0, high=1e6)),
            limit=int(_number(a, "limit", 10, "activity.", problems, low=0, high=10000, integer=True)),
        ),
        cycles=cycle_edges,
        seeds=Seeds(
            max=int(_number(k, "max", 3, "seeds.", problems, low=1, high=200, integer=True)),
            cutoff=float(_number(k, "cutoff", 0.6, "seeds.", problems, low=0, high=1)),
            retrieval=_choice(k, "retrieval", "hybrid", SEED_RETRIEVAL, "seeds.", problems),
            mentions=bool(_bool(k, "mentions", False, "seeds.", problems)),
            protect=(
                int(_number(k, "protect", 0, "seeds.", problems, low=1, high=200, integer=True))
                if k.get("protect") is not None else None
            ),
        ),
        raw=data,
    )
    if problems.lines:
        raise LensError(problems.lines)
    return lens


# ---------------------------------------------------------------------------------------------
# Finding lens files.


def builtin_lens_dir() -> Path:
    """Built-in lenses: inside the wheel as ``ctx/_builtin_lenses``, else ``<repo>/lenses``."""
    here = Path(__file__).resolve().parent
    packaged = here / "_builtin_lenses"
    if packaged.is_dir():
        return packaged
    return here.parent.parent / "lenses"


def lens_dirs() -> list[tuple[str, Path]]:
    """Where named lenses live, highest precedence first."""
    from ctx.paths import find_project_dir, user_config_dir

    dirs: list[tuple[str, Path]] = []
    project = find_project_dir()
    if project is not None:
        dirs.append(("project", project / "lenses"))
    dirs.append(("user", user_config_dir() / "lenses"))
    dirs.append(("builtin", builtin_lens_dir()))
    return dirs


def _looks_like_path(name: str) -> bool:
    return name.endswith((".yaml", ".yml")) or "/" in name or "\\" in name


LENS_FILE_MAX_BYTES = 1 << 20  # a lens is a page of YAML; anything far larger is not one
LENS_NAME_MAX_CHARS = 100


def lens_name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain lens name (one that can only mean a file in a lens folder).

    Whoever cannot be trusted with the file system (an agent over MCP) may choose a lens only by
    such a name: no separator, no parent or hidden part, no drive or stream (``C:``, ``a:b``), no
    file suffix, no control character. The answer never depends on what exists on disk.
    """
    if not isinstance(name, str) or not name:
        return "a lens name is required"
    if (
        len(name) > LENS_NAME_MAX_CHARS
        or any(ch in name for ch in "/\\:")
        or name.startswith((".", "~"))
        or ".." in name
        or name.lower().endswith((".yaml", ".yml"))
        or not name.isprintable()
        or name != name.strip()
    ):
        shown = repr(name) if len(name) <= LENS_NAME_MAX_CHARS else "a string that long"
        return f"{shown} is not a lens name; give the name of a lens (a path is not accepted here)"
    return None


def read_lens_text(path: Path) -> str:
    """A lens file's text: a regular file (never a FIFO or device), at most LENS_FILE_MAX_BYTES."""
    from ctx.files import FileRefused, read_regular

    where = str(path)
    try:
        data = read_regular(path, limit=LENS_FILE_MAX_BYTES)
    except FileNotFoundError:
        raise UsageError(f"lens file {where} does not exist") from None
    except FileRefused as exc:
        raise UsageError(f"cannot read lens file {where}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read lens file {where}: {exc.strerror or exc.__class__.__name__}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read lens file {where}: not UTF-8 text (byte {exc.start})") from None


def load_lens_file(path: Path, *, name: str | None = None, source: str = "file") -> Lens:
    import yaml

    from ctx import yaml_safe

    where = str(path)
    text = read_lens_text(path)
    try:
        data = yaml_safe.load(text)
    except (yaml.YAMLError, yaml_safe.YamlRefused) as exc:
        line, problem = yaml_safe.problem_parts(exc)
        raise LensError([f"{where}: {line}: invalid YAML: {problem}"]) from None
    return parse_lens(data, where=where, name=name or path.stem, source=source)


def _unknown_lens(name: str) -> UsageError:
    known = ", ".join(sorted({entry.name for entry in list_lenses()}))
    return UsageError(f"no lens named {name!r}; available: {known}")


def find_named_lens(name: str) -> tuple[str, Path]:
    """(source, path) of the lens called ``name`` in the lens folders; never a path.

    UsageError for anything that is not a plain name (see ``lens_name_problem``) or names no lens.
    """
    problem = lens_name_problem(name)
    if problem is not None:
        raise UsageError(problem)
    for source, folder in lens_dirs():
        for suffix in (".yaml", ".yml"):
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return source, candidate
    raise _unknown_lens(name)


def find_lens_path(name: str) -> tuple[str, Path]:
    """(source, path) of the lens called ``name`` (or at that path); UsageError if there is none.

    Paths are for the user's own shell; callers acting for someone else use ``find_named_lens``.
    """
    if _looks_like_path(name):
        path = Path(name).expanduser()
        if not path.is_file():
            raise UsageError(f"lens file {name} does not exist")
        return "file", path
    return find_named_lens(name)


def load_lens(name: str) -> Lens:
    source, path = find_lens_path(name)
    return load_lens_file(path, name=None if source == "file" else name, source=source)


def load_named_lens(name: str) -> Lens:
    """A lens by name from the lens folders only: what an agent may choose (no file paths)."""
    source, path = find_named_lens(name)
    return load_lens_file(path, name=name, source=source)


@dataclass(frozen=True)
class LensEntry:
    name: str
    source: str
    path: Path
    shadowed: bool  # a lens of the same name with higher precedence hides this one


def list_lenses() -> list[LensEntry]:
    entries: list[LensEntry] = []
    seen: set[str] = set()
    for source, folder in lens_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix not in (".yaml", ".yml") or not path.is_file():
                continue
            entries.append(LensEntry(path.stem, source, path, path.stem in seen))
            seen.add(path.stem)
    return sorted(entries, key=lambda e: (e.name, e.shadowed))
