"""Validating a lens document: every problem collected, one line each, then raised together.

Each line reads ``file: key.path: what is wrong`` (with a "did you mean" for a misspelt key), so a
user fixes a lens in one pass. Options and their defaults come from the model's fields
(``ctx.lenses.model``); this module holds only what the fields cannot say: structure (edges,
sections, selectors) and the rules that tie options together.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, TypeVar

from ctx.errors import LensError
from ctx.lenses.model import (
    DEFAULT_SECTIONS,
    DIRECTIONS,
    GROUP_BY,
    HARD_MAX_DEPTH,
    LAYOUTS,
    SECTION_ORDERS,
    Activity,
    Boosts,
    Dedup,
    EdgeRule,
    FieldFilter,
    Lens,
    OutputOptions,
    Packing,
    Privacy,
    Scoring,
    Section,
    Selector,
    Semantic,
    Seeds,
    Truncation,
)
from ctx.edges import CANONICAL_OF

T = TypeVar("T")


class _Problems:
    def __init__(self, where: str) -> None:
        self.where = where
        self.lines: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.lines.append(f"{self.where}: {key or '(top level)'}: {message}")


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


def _mapping(value: Any, key: str, problems: _Problems) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(key, f"must be a mapping, not {_kind(value)}")
        return {}
    return value


def _unknown(data: dict[str, Any], allowed: set[str], prefix: str, problems: _Problems) -> None:
    for key in data:
        if key not in allowed:
            # Imported only for a mistake: difflib costs more than validating a whole lens.
            from difflib import get_close_matches

            hint = get_close_matches(str(key)[:100], sorted(allowed), n=1, cutoff=0.6)
            more = f" (did you mean {hint[0]!r}?)" if hint else ""
            problems.add(f"{prefix}{_label(key)}", f"unknown key{more}; allowed: {', '.join(sorted(allowed))}")


def _number(
    data: dict[str, Any], key: str, default: Any, prefix: str, problems: _Problems,
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
    return int(value) if integer else float(value)


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


def _option(spec: Any, data: dict[str, Any], key: str, default: Any, prefix: str, problems: _Problems) -> Any:
    """One option read as its field's spec says (see ``ctx.lenses.model.number`` and friends)."""
    kind = spec["kind"]
    if kind == "number":
        return _number(data, key, default, prefix, problems, low=spec["low"], high=spec["high"],
                       integer=spec["integer"], low_open=spec["low_open"])
    if kind == "bool":
        return _bool(data, key, default, prefix, problems)
    if kind == "choice":
        return _choice(data, key, default, spec["choices"], prefix, problems)
    if kind == "strings":
        if key not in data:
            return default
        found = _strings(data[key], f"{prefix}{key}", problems)
        return tuple(s.lower() for s in found) if spec["lower"] else found
    return _multipliers(data.get(key), f"{prefix}{key}", problems)


def _options_of(cls: type[T]) -> list[tuple[dataclasses.Field[Any], tuple[str, ...]]]:
    """The fields of ``cls`` a lens can set, each with its key path in the lens section."""
    return [(f, f.metadata["key"] or (f.name,)) for f in dataclasses.fields(cls) if f.metadata]  # type: ignore[arg-type]


def _parse_options(
    cls: type[T], data: dict[str, Any], prefix: str, problems: _Problems, *, extra_keys: tuple[str, ...] = (),
) -> T:
    """An options dataclass from a lens section: unknown keys reported, defaults from the fields."""
    options = _options_of(cls)
    _unknown(data, {path[0] for _, path in options} | set(extra_keys), prefix, problems)
    nested: dict[str, dict[str, Any]] = {}
    for _, path in options:
        if len(path) == 2 and path[0] not in nested:
            sub = _mapping(data.get(path[0]), f"{prefix}{path[0]}", problems)
            _unknown(sub, {p[1] for _, p in options if len(p) == 2 and p[0] == path[0]}, f"{prefix}{path[0]}.", problems)
            nested[path[0]] = sub
    values: dict[str, Any] = {}
    for f, path in options:
        source, where = (nested[path[0]], f"{prefix}{path[0]}.") if len(path) == 2 else (data, prefix)
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[operator]
        values[f.name] = _option(f.metadata, source, path[-1], default, where, problems)
    return cls(**values)


def _section_options(cls: type[T], data: dict[str, Any], key: str, problems: _Problems, **kwargs: Any) -> T:
    return _parse_options(cls, _mapping(data.get(key), key, problems), f"{key}.", problems, **kwargs)


# ---------------------------------------------------------------------------------------------
# Structure: edges, sections and their selectors.

TOP_KEYS = {
    "name", "description", "depth", "max_depth", "fan_out", "edges", "fields", "boosts", "scoring",
    "sections", "output", "packing", "truncation", "dedup", "semantic", "privacy",
    "paths", "activity", "cycles", "seeds", "passages",
}
EDGE_KEYS = {"direction", "weight", "max_depth"}
SELECT_KEYS = {f.name for f in dataclasses.fields(Selector)}
SECTION_KEYS = {f.name for f in dataclasses.fields(Section)}


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
        weight = _number(spec, "weight", EdgeRule.weight, prefix, problems, low=0, high=10, low_open=True)
        depth = _number(spec, "max_depth", max_depth, prefix, problems, low=1, high=HARD_MAX_DEPTH, integer=True)
        if key in CANONICAL_OF:
            if "direction" in spec:
                problems.add(f"{prefix}direction", f"{key!r} already names a direction (it is {CANONICAL_OF[key]!r} walked in); drop this key")
            rules.append(EdgeRule(CANONICAL_OF[key], "in", key, depth, weight))
            continue
        if not key or any(c.isspace() for c in key):
            problems.add(f"edges.{_label(key)}", "edge type names cannot be empty or contain spaces")
            continue
        direction = _choice(spec, "direction", "both", DIRECTIONS, prefix, problems)
        for d in ("out", "in") if direction == "both" else (direction,):
            rules.append(EdgeRule(key, d, key, depth, weight))
    # An inverse-name entry (backlink) overrides the "in" half of its canonical entry (link: both).
    chosen: dict[tuple[str, str], EdgeRule] = {}
    for rule in rules:
        slot = (rule.pattern, rule.direction)
        if slot in chosen and chosen[slot].key in CANONICAL_OF and rule.key not in CANONICAL_OF:
            continue
        chosen[slot] = rule
    return tuple(sorted(chosen.values(), key=lambda r: (r.pattern, r.direction)))


# A selector written as one word: ``select: rest`` is ``select: {rest: true}``.
SELECTOR_WORDS = {"rest": Selector(rest=True), "seed": Selector(seed=True),
                  "semantic": Selector(semantic=True), "recent": Selector(recent=True)}


def _parse_selector(value: Any, prefix: str, problems: _Problems) -> Selector:
    if isinstance(value, str) and value in SELECTOR_WORDS:
        return SELECTOR_WORDS[value]
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
        sections.append(
            Section(
                name=name,
                select=_parse_selector(spec.get("select"), f"{prefix}select.", problems),
                share=_number(spec, "share", Section.share, prefix, problems, low=0, high=1),
                order=_choice(spec, "order", default_order, SECTION_ORDERS, prefix, problems),
                group_by=_choice(spec, "group_by", Section.group_by, GROUP_BY, prefix, problems),
                max_nodes=_number(spec, "max_nodes", Section.max_nodes, prefix, problems, low=0, integer=True),
                reserve=bool(_bool(spec, "reserve", Section.reserve, prefix, problems)),
                layout=_choice(spec, "layout", Section.layout, LAYOUTS, prefix, problems),
            )
        )
    total = sum(s.share or 0 for s in sections)
    if total > 1.0 + 1e-9:
        problems.add("sections", f"shares add up to {total:g}; they must not exceed 1")
    if not any(s.select.seed for s in sections) and not any(s.select.rest for s in sections):
        problems.add("sections", "no section takes the seed (add one with `select: {seed: true}` or `select: rest`)")
    return tuple(sections)


def _field_filter(data: dict[str, Any], problems: _Problems) -> FieldFilter:
    value = data.get("fields")
    if isinstance(value, list):
        value = {"include": value}  # `fields: [status, owner]` is short for include
    return _parse_options(FieldFilter, _mapping(value, "fields", problems), "fields.", problems)


def _top_level(data: dict[str, Any], key: str, problems: _Problems) -> Any:
    """A top-level option of the Lens itself (depth, max_depth, fan_out, paths)."""
    f = next(f for f in dataclasses.fields(Lens) if f.name == key)
    return _option(f.metadata, data, key, f.default, "", problems)


# The lens sections that are plain option groups, by the Lens field (and YAML key) they fill.
_OPTION_GROUPS: dict[str, type] = {
    "boosts": Boosts,
    "scoring": Scoring,
    "packing": Packing,
    "truncation": Truncation,
    "dedup": Dedup,
    "semantic": Semantic,
    "privacy": Privacy,
    "activity": Activity,
    "seeds": Seeds,
}


def parse_lens(data: Any, *, where: str, name: str, source: str) -> Lens:
    """Validate a lens document and build the model; raises LensError listing every problem."""
    problems = _Problems(where)
    if not isinstance(data, dict):
        problems.add("", f"a lens file must be a mapping of keys, not {_kind(data)}")
        raise LensError(problems.lines)
    _unknown(data, TOP_KEYS, "", problems)
    # Parsed in the file's reading order, so that problems are listed the same way every time.
    parts = _walk(data, problems)
    parts["fields"] = _field_filter(data, problems)
    parts |= _option_groups(data, ("boosts", "scoring"), problems)
    parts |= _output_and_sections(data, problems)
    parts |= _option_groups(data, ("packing", "truncation", "dedup", "semantic", "privacy", "activity", "seeds"), problems)
    parts["cycles"] = _cycle_edges(data, problems)
    declared, description = _name_and_description(data, name, problems)
    parts["paths"] = _top_level(data, "paths", problems)
    parts["passages"] = bool(_top_level(data, "passages", problems))
    if problems.lines:
        raise LensError(problems.lines)
    return Lens(name=declared, description=description, source=source, path=where, raw=data, **parts)


def _walk(data: dict[str, Any], problems: _Problems) -> dict[str, Any]:
    """How far and along which edges the lens walks: depth, max_depth, fan_out and the edge rules."""
    max_depth = _top_level(data, "max_depth", problems)
    depth = _top_level(data, "depth", problems)
    if depth > max_depth:
        problems.add("depth", f"the default depth {depth} is above max_depth {max_depth}")
    fan_out = _top_level(data, "fan_out", problems)
    rules = _parse_edges(data if "edges" in data else {"edges": {"*": {"direction": "both"}}}, max_depth, problems)
    return {"depth": depth, "max_depth": max_depth, "fan_out": fan_out, "rules": rules}


def _option_groups(data: dict[str, Any], keys: tuple[str, ...], problems: _Problems) -> dict[str, Any]:
    return {key: _section_options(_OPTION_GROUPS[key], data, key, problems) for key in keys}


def _output_and_sections(data: dict[str, Any], problems: _Problems) -> dict[str, Any]:
    # ``output.order`` is every section's default order, not an option of its own.
    output_map = _mapping(data.get("output"), "output", problems)
    output = _parse_options(OutputOptions, output_map, "output.", problems, extra_keys=("order",))
    default_order = _choice(output_map, "order", Section.order, SECTION_ORDERS, "output.", problems)
    return {"output": output, "sections": _parse_sections(data, default_order, problems)}


def _cycle_edges(data: dict[str, Any], problems: _Problems) -> tuple[str, ...]:
    cycles = _mapping(data.get("cycles"), "cycles", problems)
    _unknown(cycles, {"edges"}, "cycles.", problems)
    return tuple(CANONICAL_OF.get(e, e) for e in _strings(cycles.get("edges"), "cycles.edges", problems))


def _name_and_description(data: dict[str, Any], name: str, problems: _Problems) -> tuple[str, str]:
    """The lens's declared name (else its file's) and its description, stripped."""
    description = data.get("description", "")
    if not isinstance(description, str):
        problems.add("description", f"must be a string, not {_kind(description)}")
        description = ""
    declared = data.get("name", name)
    if not isinstance(declared, str) or not declared.strip():
        problems.add("name", f"must be a non-empty string, not {_kind(declared)}")
        declared = name
    return declared, description.strip()
