"""Enrich: load what scoring and selection need for every walked node (not bodies: those are
read later, only for the nodes the budget may actually show)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.assemble.candidate import Candidate
from ctx.assemble.traverse import Walk
from ctx.lenses import Lens

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


def enrich(graph: GraphReader, walk: Walk, lens: Lens, include_fields: bool) -> list[Candidate]:
    from ctx.assemble import warm

    out: list[Candidate] = []
    for facts in warm.node_facts(graph, list(walk.reached), with_fields=include_fields):
        reached = walk.reached[facts.id]
        fields: dict[str, list[str]] = {}
        if include_fields:
            fields = {
                name: [str(v) for v in (values if isinstance(values, list) else [values])]
                for name, values in facts.fields.items()
                if lens.fields.allows(name)
            }
        out.append(
            Candidate(
                id=facts.id,
                title=facts.title,
                type=facts.type,
                tags=facts.tags,
                fields=fields,
                source_path=facts.source_path,
                parent_id=facts.parent_id,
                position=facts.position,
                created=facts.created,
                updated=facts.updated,
                store_tokens=facts.tokens,
                hops=reached.hops,
                cost=reached.cost,
                path=reached.path,
                seed=reached.seed,
            )
        )
    return out


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
