"""The stages of ``build_context`` wired together; each stage is a function of its inputs and the DB."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from typing import Any

from ctx.assemble import BuildRequest, BuildResult
from ctx.assemble.budget import TokenCounter, explain_rows, pack
from ctx.assemble.collect import (
    add_recent,
    add_siblings,
    annotate_neighbours,
    count_withheld,
    private_among,
    sibling_window,
)
from ctx.assemble.cycles import find_cycles
from ctx.assemble.enrich import enrich, graph_reference_time, light_info, load_bodies
from ctx.assemble.outline_view import prepare as outline_prepare
from ctx.assemble.render import Document, SectionOut, explain_text
from ctx.assemble.relevance import fused_relevance
from ctx.assemble.resolve import resolve_topics, seed_ids
from ctx.assemble.score import (
    DIVERSITY_POOL,
    assign_sections,
    diversify,
    neighbour_ranker,
    score_candidates,
    weights_for,
)
from ctx.assemble.similarity import compute_similarity, semantic_extras, topic_for
from ctx.assemble.traverse import Reached, walk
from ctx.lenses import Lens, load_lens

FAN_OUT_LISTED = 10


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


def _weights_meta(w) -> dict[str, float]:
    out = {"distance": w.distance, "similarity": w.similarity, "recency": w.recency}
    if w.relevance:
        out["relevance"] = w.relevance
    return out


def _has_private_nodes(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM nodes WHERE private = 1 LIMIT 1").fetchone() is not None


def run(conn: sqlite3.Connection, request: BuildRequest) -> BuildResult:
    lens = request.lens if isinstance(request.lens, Lens) else load_lens(request.lens)
    warnings: list[str] = []
    depth = lens.depth if request.depth is None else request.depth
    if depth > lens.max_depth:
        warnings.append(f"--depth {depth} capped to {lens.max_depth}: the most lens {lens.name!r} allows")
        depth = lens.max_depth

    topics = tuple(t.strip() for t in request.topics if t.strip())
    resolved = resolve_topics(
        conn, topics, request.include_private, lens.seeds.max, lens.seeds.cutoff, lens.seeds.retrieval,
        lens.seeds.mentions,
    )
    seeds = seed_ids(resolved)
    missing = [r.topic for r in resolved if not r.ids]
    if seeds:
        # When nothing matched at all, the not-found error says so; a partial miss is a notice.
        warnings += [f"no matching nodes found for {topic!r}" for topic in missing]
    counter = TokenCounter(request.encoding)
    doc = Document(
        label=" + ".join(topics),
        topics=topics,
        lens=lens.name,
        budget=request.max_tokens,
        fmt=request.format,
        found=bool(seeds),
        sections=[SectionOut(s.name, s.order, s.group_by, layout=s.layout) for s in lens.sections],
        show_scores=lens.output.show_scores,
        show_metadata=lens.output.metadata,
        summary=lens.output.summary,
        citations=lens.output.citations,
        empty_sections=lens.output.empty_sections,
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
    window = sibling_window(lens)
    sibling_offsets = add_siblings(conn, seeds, walked, window, request.include_private) if window is not None else {}
    recent = add_recent(conn, lens, walked, reference, request.include_private)
    extras: set[str] = set()
    topic = topic_for(conn, request)
    search_relevance = (
        fused_relevance(conn, request, lens, seeds, topic) if lens.semantic.rank == "fused" else None
    )
    if search_relevance is not None:
        # Extras by fused search rank: BM25 evidence counts as well as the vectors'.
        fresh = [i for i in search_relevance if i not in walked.reached][: lens.semantic.top_k]
        for node_id in fresh:
            walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
            extras.add(node_id)
    similarity, similarity_note = compute_similarity(conn, topic, sorted(walked.reached))
    if search_relevance is None and lens.semantic.top_k > 0:
        for node_id, sim in semantic_extras(
            conn, topic, request.include_private, seeds, set(walked.reached), lens.semantic.top_k,
            lens.semantic.min_similarity,
        ):
            if node_id in walked.reached:
                continue
            walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
            extras.add(node_id)
            if similarity is not None:
                similarity[node_id] = sim  # found by similarity: it is what ranks them
    if not request.include_private:
        # Whatever a collector proposes, a private node never becomes a candidate.
        for node_id in private_among(conn, walked.reached):
            del walked.reached[node_id]
            extras.discard(node_id)
            recent.discard(node_id)
    candidates = enrich(conn, walked, lens, request.include_fields)
    relevance = {i: r.relevance_of(i) for r in resolved for i in r.ids}
    protected = set(seeds if lens.seeds.protect is None else seeds[: lens.seeds.protect])
    for c in candidates:
        if c.seed and c.id not in protected:
            # An unprotected seed competes like any node at distance 0: packed whole or not at all.
            c.seed = False
        if search_relevance is not None:
            c.search = search_relevance.get(c.id, 0.0)
        c.semantic = c.id in extras
        c.recent = c.id in recent and not c.seed and not c.path
        c.sibling_offset = sibling_offsets.get(c.id)
        if c.seed:
            c.relevance = relevance.get(c.id, 1.0)
    annotate_neighbours(conn, candidates, lens.output.neighbours, request.include_private)
    ranked = score_candidates(candidates, lens, similarity, reference)
    if lens.scoring.diversity > 0:
        # Redundancy is read from the words of the top of the ranking: the packer reuses the bodies.
        load_bodies(conn, ranked[: DIVERSITY_POOL + sum(1 for c in ranked if c.seed)])
        ranked = diversify(ranked, lens.scoring.diversity)
    assign_sections(ranked, lens.sections)
    # Outliner pages carry their blocks as an outline; blocks it shows leave the pool (counted once).
    in_outlines = outline_prepare(
        conn, ranked, lens.output.outline_max_nodes, request.max_tokens, request.include_private,
        lens.output.outline_formats,
    )

    doc.candidates_total = len(ranked) - in_outlines
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
    if lens.output.empty_sections:
        for section in lens.sections:
            if section.select.semantic and similarity is None:
                doc.empty_notes[section.name] = similarity_note
            elif section.select.semantic and not extras:
                doc.empty_notes[section.name] = "no node similar enough to the topic outside the walk"
            elif section.select.recent:
                doc.empty_notes[section.name] = f"nothing edited in the {lens.activity.hours:g} hours before the graph's newest update"
    if lens.cycles:
        cycles = find_cycles(conn, [c.id for c in ranked], lens.cycles)
        meta["cycles"] = [{"edge": c.edge, "path": list(c.path)} for c in cycles]
        for cycle in cycles:
            doc.notes.append(f"cycle ({cycle.edge}): {cycle.text()}")
    if not request.include_private:
        withheld = 0
        if _has_private_nodes(conn):
            # Resolving again with private nodes visible is the only way to count what the topic
            # would have matched; a graph without private nodes skips that second resolution.
            hidden_matches = {
                i for r in resolve_topics(
                    conn, topics, True, lens.seeds.max, lens.seeds.cutoff, lens.seeds.retrieval,
                    lens.seeds.mentions,
                )
                for i in r.ids
            }
            withheld = count_withheld(conn, private_among(conn, hidden_matches), [c.id for c in ranked])
        meta["withheld_private"] = withheld
        if withheld:
            doc.notes.append(f"privacy: {withheld} private node(s) withheld (--include-private to use them)")
    meta.update(
        {
            "scoring": {
                "weights": _weights_meta(weights_for(lens, similarity is not None)),
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
        "in_outline": sum(1 for c in ranked if c.decision == "outline"),
    }
    meta["store_tokens"] = sum(c.store_tokens for c in ranked)
    meta["lens"] = lens.name
    rows = explain_rows(ranked)
    if request.explain:
        meta["explain"] = explain_text(rows)
    return BuildResult(text, True, warnings, rows, meta)
