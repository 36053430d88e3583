"""The describe stage: the document around the nodes (header notes, cycles, scoring and fan-out
metadata, empty-section notices) and the richest header the budget allows."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ctx.assemble.budget import choose_header
from ctx.assemble.cycles import find_cycles
from ctx.assemble.score import Weights, weights_for
from ctx.assemble.traverse import Walk
from ctx.lenses import Lens

if TYPE_CHECKING:
    from ctx.assemble.pipeline import Build
    from ctx.store.protocols import GraphReader

FAN_OUT_LISTED = 10


def describe(graph: GraphReader, build: Build) -> None:
    """The document's notes and metadata, and the richest header the budget allows."""
    lens, doc, walked = build.lens, build.doc, build.walked
    assert walked is not None
    ranked = build.candidates
    left_out = build.pool.left_out if build.pool is not None else 0
    doc.candidates_total = len(ranked) + left_out - build.in_outlines
    doc.notes.append(_scoring_note(lens, build.similarity is not None, build.similarity_note, build.reference))
    _pool_meta(build, walked, left_out)
    if walked.capped:
        left_out = sum(c.omitted for c in walked.capped)
        note = (
            f"fan-out capped at {lens.fan_out} neighbours per node for {len(walked.capped)} node(s);"
            f" {left_out} neighbour link(s) left out"
        )
        doc.notes.append(note)
        build.warnings.append(note)
    if build.missing:
        doc.notes.append("not found: " + ", ".join(repr(t) for t in build.missing))
    if lens.output.empty_sections:
        _empty_section_notes(build)
    if lens.cycles:
        cycles = find_cycles(graph, [c.id for c in ranked], lens.cycles)
        build.meta["cycles"] = [{"edge": c.edge, "path": list(c.path)} for c in cycles]
        for cycle in cycles:
            doc.notes.append(f"cycle ({cycle.edge}): {cycle.text()}")
    build.meta.update(
        {
            "scoring": {
                "weights": _weights_meta(weights_for(lens, build.similarity is not None)),
                "similarity": (
                    build.similarity_note if build.similarity is None else f"embeddings: {build.similarity_note}"
                ),
                "recency_reference": _day(build.reference),
                "recency_reference_source": "newest node update in the graph",
                "recency_half_life_days": lens.scoring.recency_half_life_days,
            },
            "fan_out": {
                "cap": lens.fan_out,
                "capped_nodes": len(walked.capped),
                "neighbours_left_out": sum(c.omitted for c in walked.capped),
                "capped": [
                    {"id": c.node_id, "kept": c.kept, "left_out": c.omitted}
                    for c in walked.capped[:FAN_OUT_LISTED]
                ],
            },
        }
    )
    doc.meta = dict(build.meta)
    build.header_cost = choose_header(doc, lens, build.counter)


def _pool_meta(build: Build, walked: Walk, left_out: int) -> None:
    """``meta.pool`` when the pool or the walk left nodes out (JSON and ``--explain`` say it; the
    markdown header does not spend the budget on it)."""
    pool = build.pool
    if pool is None or not (left_out or walked.stopped or walked.unexpanded):
        return
    kept = len(build.candidates)  # ranked and cut to the pool by now
    build.meta["pool"] = {
        "size": pool.size,
        "reached": kept + left_out,
        "kept": kept,
        "walk": {"stopped": walked.stopped, "hops": walked.hops, "unexpanded": walked.unexpanded},
    }


def _empty_section_notes(build: Build) -> None:
    for section in build.lens.sections:
        if section.select.semantic and build.similarity is None:
            build.doc.empty_notes[section.name] = build.similarity_note
        elif section.select.semantic and not build.extras:
            build.doc.empty_notes[section.name] = "no node similar enough to the topic outside the walk"
        elif section.select.recent:
            build.doc.empty_notes[section.name] = (
                f"nothing edited in the {build.lens.activity.hours:g} hours before the graph's newest update"
            )


def _day(epoch: float | None) -> str:
    if epoch is None:
        return "none"
    try:
        return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d")
    except (ValueError, OverflowError, OSError):  # stored by a ctx that did not check dates yet
        return "none"


def _scoring_note(lens: Lens, has_similarity: bool, similarity_note: str, reference: float | None) -> str:
    w = weights_for(lens, has_similarity)
    if has_similarity:
        weights = f"{w.distance:g} distance + {w.similarity:g} similarity + {w.recency:g} recency"
    else:
        weights = f"{w.distance:g} distance + {w.recency:g} recency"
    if w.relevance:
        weights += f" + {w.relevance:g} search relevance"
    return f"scoring: {weights}; {similarity_note}; recency relative to {_day(reference)}, the graph's newest update"


def _weights_meta(w: Weights) -> dict[str, float]:
    out = {"distance": w.distance, "similarity": w.similarity, "recency": w.recency}
    if w.relevance:
        out["relevance"] = w.relevance
    return out
