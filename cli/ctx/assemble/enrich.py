"""Enrich: load what scoring and selection need for every walked node (not bodies: those are
read later, only for the nodes the budget may actually show)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ctx.assemble.candidate import Candidate
from ctx.assemble.traverse import Walk
from ctx.lenses import Lens

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


def enrich(graph: GraphReader, walk: Walk, lens: Lens, include_fields: bool) -> list[Candidate]:
    from ctx.assemble import warm

    out: list[Candidate] = []
    append = out.append
    reached_of = walk.reached
    new = object.__new__
    for facts in warm.node_facts(graph, list(reached_of), with_fields=include_fields):
        reached = reached_of[facts.id]
        fields: dict[str, list[str]] = {}
        if include_fields:
            fields = {
                name: [str(v) for v in (values if isinstance(values, list) else [values])]
                for name, values in facts.fields.items()
                if lens.fields.allows(name)
            }
        # ``Candidate(...)`` with these fields, its others at their defaults: the same attributes
        # in the same order (a dict copied from the defaults, each default factory's dict made
        # afresh), without the dataclass's ``__init__``: ~0.8 against ~1.5 us a candidate (a new
        # 100k note's depth-3 build makes ~550).
        attributes = _DEFAULTS.copy()
        attributes["id"] = facts.id
        attributes["title"] = facts.title
        attributes["type"] = facts.type
        attributes["tags"] = facts.tags
        attributes["fields"] = fields
        attributes["source_path"] = facts.source_path
        attributes["parent_id"] = facts.parent_id
        attributes["position"] = facts.position
        attributes["created"] = facts.created
        attributes["updated"] = facts.updated
        attributes["store_tokens"] = facts.tokens
        attributes["hops"] = reached.hops
        attributes["cost"] = reached.cost
        attributes["path"] = reached.path
        attributes["seed"] = reached.seed
        attributes["neighbours"] = {}
        attributes["parts"] = {}
        candidate = new(Candidate)
        candidate.__dict__ = attributes
        append(candidate)
    return out


def _defaults() -> dict[str, Any]:
    """Every field of ``Candidate`` in its order: its default, or None where ``enrich`` sets it
    (the fields without a default, and ``neighbours`` and ``parts``, whose defaults are new dicts)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(Candidate):
        if f.default_factory is not dataclasses.MISSING:
            # A new field with a default factory: ``enrich`` must make its value per candidate.
            assert f.name in ("neighbours", "parts"), f.name
        out[f.name] = f.default if f.default is not dataclasses.MISSING else None
    return out


_DEFAULTS = _defaults()


def load_bodies(graph: GraphReader, candidates: list[Candidate]) -> None:
    """Fill ``body`` for the given candidates."""
    todo = [c for c in candidates if c.body is None]
    bodies = graph.bodies([c.id for c in todo]) if todo else {}
    for c in todo:
        c.body = bodies.get(c.id, "")


def graph_reference_time(graph: GraphReader) -> float | None:
    """The newest ``updated`` the reader may see: recency is measured from the graph's own "now",
    never the wall clock, so the same graph state always gives the same scores (and a private
    note's date never moves a public reader's scores)."""
    return graph.newest_update()
