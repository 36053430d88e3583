"""The stages of ``build_context`` wired together; each stage is a function of its inputs and the DB."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from typing import Any

from ctx.assemble import BuildRequest, BuildResult
from ctx.assemble.budget import TokenCounter, explain_rows, pack
from ctx.assemble.enrich import enrich, graph_reference_time, light_info, load_bodies
from ctx.assemble.render import Document, SectionOut, explain_text
from ctx.assemble.resolve import resolve_topics, seed_ids
from ctx.assemble.score import assign_sections, neighbour_ranker, score_candidates, weights_for
from ctx.assemble.similarity import compute_similarity, semantic_extras
from ctx.assemble.traverse import Reached, walk
from ctx.lenses import Lens, load_lens

FAN_OUT_LISTED = 10


def _day(epoch: float | None) -> str:
    if epoch is None:
        return "none"
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d")


def _scoring_note(lens: Lens, has_similarity: bool, similarity_note: str, reference: float | None) -> str:
    w = weights_for(lens, has_similarity)
    if has_similarity:
        weights = f"{w.distance:g} distance + {w.similarity:g} similarity + {w.recency:g} recency"
    else:
        weights = f"{w.distance:g} distance + {w.recency:g} recency"
    return f"scoring: {weights} ({similarity_note}); recency relative to {_day(reference)}, the graph's newest update"


def run(conn: sqlite3.Connection, request: BuildRequest) -> BuildResult:
    lens = load_lens(request.lens)
    warnings: list[str] = []
    depth = lens.depth if request.depth is None else request.depth
    if depth > lens.max_depth:
        warnings.append(f"--depth {depth} capped to {lens.max_depth}: the most lens {lens.name!r} allows")
        depth = lens.max_depth

    topics = tuple(t.strip() for t in request.topics if t.strip())
    resolved = resolve_topics(conn, topics, request.include_private)
    seeds = seed_ids(resolved)
    missing = [r.topic for r in resolved if not r.ids]
    for topic in missing:
        warnings.append(f"no matching nodes found for {topic!r}")
    counter = TokenCounter(request.encoding)
    doc = Document(
        label=" + ".join(topics),
        topics=topics,
        lens=lens.name,
        budget=request.max_tokens,
        fmt=request.format,
        found=bool(seeds),
        sections=[SectionOut(s.name, s.order, s.group_by) for s in lens.sections],
        show_scores=lens.output.show_scores,
    )
    meta: dict[str, Any] = {
        "resolved": [{"topic": r.topic, "ids": list(r.ids), "how": r.how} for r in resolved],
        "depth": depth,
        "encoding": request.encoding,
    }
    if not seeds:
        text, used = pack(doc, [], lens, counter, lambda cs: None)
        meta["tokens"] = {"used": used, "budget": request.max_tokens}
        return BuildResult(text, False, warnings, [], meta)

    reference = graph_reference_time(conn)

    def rank_neighbours(options: list[tuple[str, float]]) -> list[str]:
        light = light_info(conn, [v for v, _ in options])
        return neighbour_ranker(lens, light, reference)(options)

    walked = walk(conn, lens, seeds, depth, rank_neighbours, request.include_private)
    similarity, similarity_note = compute_similarity(conn, request, seeds, sorted(walked.reached))
    extras: set[str] = set()
    if lens.semantic.top_k > 0:
        for node_id, _sim in semantic_extras(
            conn, request, seeds, set(walked.reached), lens.semantic.top_k, lens.semantic.min_similarity
        ):
            walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
            extras.add(node_id)
    candidates = enrich(conn, walked, lens, request.include_fields)
    for c in candidates:
        c.semantic = c.id in extras
    ranked = score_candidates(candidates, lens, similarity, reference)
    assign_sections(ranked, lens.sections)

    doc.candidates_total = len(ranked)
    doc.notes.append(_scoring_note(lens, similarity is not None, similarity_note, reference))
    if walked.capped:
        left_out = sum(c.omitted for c in walked.capped)
        note = (
            f"fan-out capped at {lens.fan_out} neighbours per node for {len(walked.capped)} node(s);"
            f" {left_out} neighbour link(s) left out"
        )
        doc.notes.append(note)
        warnings.append(note)
    if missing:
        doc.notes.append("not found: " + ", ".join(repr(t) for t in missing))
    meta.update(
        {
            "scoring": {
                "weights": vars(weights_for(lens, similarity is not None)),
                "similarity": similarity_note if similarity is None else f"embeddings: {similarity_note}",
                "recency_reference": _day(reference),
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
    doc.meta = dict(meta)

    text, used = pack(doc, ranked, lens, counter, lambda cs: load_bodies(conn, cs))
    if doc.summary_only:
        warnings.append(
            f"--max-tokens {request.max_tokens} is below {lens.output.summary_below}:"
            " summary-first context (one line per related node; text only where room is left)"
        )
    meta["tokens"] = {"used": used, "budget": request.max_tokens}
    meta["counts"] = {
        "candidates": len(ranked),
        "full": sum(1 for c in ranked if c.decision == "full"),
        "shortened": sum(1 for c in ranked if c.decision == "shortened"),
        "summarized": sum(1 for c in ranked if c.decision == "summarized"),
        "dropped": sum(1 for c in ranked if c.decision == "dropped"),
    }
    meta["store_tokens"] = sum(c.store_tokens for c in ranked)
    meta["lens"] = lens.name
    rows = explain_rows(ranked)
    if request.explain:
        meta["explain"] = explain_text(rows)
    return BuildResult(text, True, warnings, rows, meta)
