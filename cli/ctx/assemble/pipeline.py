"""The stages of ``build_context``, in the order ``run`` calls them:

    seeds -> collect -> rank -> describe -> prepare -> pack

* **seeds**: the lens (the default chosen from the topics) and depth; each topic resolved to seed
  nodes (a free-text topic by its best passages); close titles for a topic that named nothing;
* **collect**: the walk from the seeds, plus what lens options add (siblings, recent edits, fused
  search hits, similar nodes); private nodes never become candidates; each candidate's metadata;
  the free-text topics' passage ranking;
* **rank**: scores, diversity, sections, outliner pages folded with their blocks;
* **describe**: the document around the nodes: header notes, cycles, metadata,
  and the header that fits the budget (``describe.py``);
* **prepare**: the text of the candidates the budget may show, with their passages' relevance to a
  free-text topic (``prepare.py``);
* **pack**: the exact-budget packing (``budget.py``) and the audit of what happened to each node.

Each stage is a function of the request, the graph state and what earlier stages put in ``Build``;
nothing depends on the clock, so the same graph and request give byte-identical output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctx.assemble.result import BuildResult
from ctx.assemble.budget import choose_header, content_room, pack
from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.collect import add_recent, add_siblings, annotate_neighbours, sibling_window
from ctx.assemble.describe import describe
from ctx.semantic.models import MODEL_REFUSED
from ctx.assemble.bound import ScoreBound
from ctx.assemble.enrich import enrich, graph_reference_time, load_bodies
from ctx.assemble.explain import explain_caption, explain_rows, explain_text
from ctx.assemble.outline_view import prepare as outline_prepare
from ctx.assemble.passage_rank import PassageRanking
from ctx.assemble.build_memo import build_scope
from ctx.assemble.passage_view import passage_ranking, passage_searcher
from ctx.assemble.pool import Pool, drop_hopeless, keep_best, walk_limit
from ctx.assemble.prepare import prepare_text
from ctx.assemble.relevance import fused_relevance
from ctx.assemble.document import Document, SectionOut
from ctx.assemble.resolve import PassageSearch, ResolvedTopic, resolve_topics, seed_ids
from ctx.assemble.score import (
    DIVERSITY_POOL,
    assign_sections,
    diversify,
    neighbour_ranker,
    score_candidates,
)
from ctx.assemble.similarity import compute_similarity, semantic_extras, topic_for
from ctx.assemble.traverse import Reached, Walk, walk
from ctx.defaults import AUTO_LENS
from ctx.lenses import Lens, load_lens

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader, GraphStore
    from ctx.assemble import BuildRequest
    from ctx.semantic.topic import TopicVector


@dataclass
class Build:
    """One build as it moves through the stages: each stage reads what earlier ones filled in."""

    request: BuildRequest
    lens: Lens
    depth: int
    topics: tuple[str, ...]
    doc: Document
    counter: TokenCounter
    warnings: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # seeds
    passage_search: PassageSearch | None = None  # None: the graph has no passages
    resolved: list[ResolvedTopic] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # topics that matched nothing
    # collect
    reference: float | None = None  # the graph's newest update: what recency is measured from
    walked: Walk | None = None
    extras: set[str] = field(default_factory=set)  # found by similarity or search, not the walk
    recent: set[str] = field(default_factory=set)
    similarity: dict[str, float] | None = None
    similarity_note: str = ""
    ranking: PassageRanking | None = None  # the free-text topics' passages, by relevance
    pool: Pool | None = None  # what the candidate pool left out
    candidates: list[Candidate] = field(default_factory=list)  # best first once ranked
    # rank
    in_outlines: int = 0  # candidates folded into an outliner page's outline
    # describe, prepare
    header_cost: int = 0
    ready: set[str] = field(default_factory=set)  # ids whose text is prepared for packing


def run(store: GraphStore, request: BuildRequest, *, include_private: bool = False) -> BuildResult:
    from ctx.store import as_store

    # What this reader may see is decided once, here: every stage reads through this view.
    graph = as_store(store).reader(include_private=include_private)
    with build_scope():
        return _run(graph, request)


def _run(graph: GraphReader, request: BuildRequest) -> BuildResult:
    from ctx.assemble import warm

    build = start(graph, request)
    before = earlier_context(graph, build) if request.since else None
    if before is not None and before.get("id") == build.doc.context_id and not before.get("partial"):
        # The same inputs at the same graph version give the same context: nothing to build.
        return unchanged(build, before)
    # A warm process (the MCP server) keeps the pool of a request it built before, under the
    # graph's state: the walk and the ranking are then copied, not made again (``warm.py``).
    key = warm.pool_key(graph, build)
    # A diff depends on the manifests recorded since, which the graph's state does not cover:
    # it is never answered from (nor kept as) a warm answer; its pool may be.
    if key is not None and not request.since and (kept := warm.answer(key, build)) is not None:
        return kept  # the same request under the same graph state: the same answer
    if key is None or not warm.restore(key, build):
        warnings_before, meta_before = len(build.warnings), set(build.meta)
        find_seeds(graph, build)
        if not build.seeds:
            return not_found(build)
        collect(graph, build)
        rank(graph, build)
        if key is not None:
            warm.remember(graph, key, build, warnings_before, meta_before)
    _opening(build)
    describe(graph, build)
    build.ready = prepare_text(
        graph, build.candidates, build.lens, content_room(build.doc, build.header_cost), build.ranking, build.counter,
    )
    _common_date(build)
    result = pack_and_report(build)
    if key is not None and not request.since:
        warm.remember_answer(graph, key, build, result)
    from ctx.assemble import manifest

    if not request.since:
        # The manifest changes nothing in this answer: a server writes it once the answer is out.
        def record() -> None:
            manifest.record(graph, manifest.manifest_of(graph, build, build.doc))

        warm.later(record)
        return result
    now = manifest.manifest_of(graph, build, build.doc)
    if before is not None:
        # What the reader has seen after this diff is recorded, not the whole context: a diff cut
        # for room leaves what it could not show to the next one.
        result, now = diff_result(graph, build, result, now, before)
    if not manifest.record(graph, now):
        result.warnings.append(
            f"context {now['id']} not recorded (the graph is busy or read-only): a later --since cannot name it"
        )
    return result


def earlier_context(graph: GraphReader, build: Build) -> dict[str, Any] | None:
    """The manifest ``--since`` names; None (with a notice) when ``last`` finds none."""
    from ctx.assemble import manifest
    from ctx.errors import UsageError

    since = build.request.since or ""
    found = manifest.recorded(graph, since, manifest.key_of(build), build.request.format)
    if found is None:
        if since != manifest.LAST:
            raise UsageError(
                f"--since {since}: no such context recorded in this graph (the last"
                " contexts.keep per topic, lens, depth, budget, encoding and format are kept)"
            )
        build.warnings.append("--since last: no earlier context with these arguments; the whole context follows")
    return found


def unchanged(build: Build, before: dict[str, Any]) -> BuildResult:
    from ctx.assemble import since

    diff = since.Diff(build.doc.context_id, before.get("graph_version"), build.doc.context_id,
                      int(before.get("graph_version") or 0), kept=len(before.get("nodes") or []))
    build.doc.found = True
    text, used = since.fit(build.doc, diff, build.counter)
    build.meta["tokens"] = {"used": used, "budget": build.request.max_tokens}
    build.meta["diff"] = since.json_section(diff)
    build.meta["lens"] = build.lens.name
    return BuildResult(text, True, build.warnings, [], build.meta)


def diff_result(
    graph: GraphReader, build: Build, result: BuildResult, now: dict[str, Any], before: dict[str, Any],
) -> tuple[BuildResult, dict[str, Any]]:
    """``result`` (the whole context, packed) as what changed since ``before``, and the manifest
    of what the reader has seen once it reads it (``now`` unless the diff was cut for room)."""
    from ctx.assemble import since

    diff = since.compare(graph, build.doc, build.candidates, now, before)
    whole = since.Shown.of(diff)
    text, used = since.fit(build.doc, diff, build.counter)
    result.meta["context_tokens"] = result.meta["tokens"]["used"]
    result.meta["tokens"] = {"used": used, "budget": build.request.max_tokens}
    result.meta["diff"] = since.json_section(diff)
    seen = since.seen_manifest(now, before, diff, whole)
    return BuildResult(text, True, result.warnings, result.candidates, result.meta), seen


def _opening(build: Build) -> None:
    """A free-text question whose passages full text ranked (alone or with vectors) opens with
    the shown note that holds it best (``opening.py``); the packing is the ranking's either way."""
    ranking = build.ranking
    if build.lens.passages and ranking is not None and "bm25" in ranking.method:
        from ctx.assemble.passage_rank import query_terms
        from ctx.assemble.passage_view import free_text

        build.doc.opening_words = tuple(query_terms(free_text(build.resolved)))


def _common_date(build: Build) -> None:
    """When every note the context could show has the same date, markdown says it once."""
    doc = build.doc
    if not doc.show_dates or doc.fmt == "json":
        return
    from ctx.assemble.document import node_date

    days = {node_date(c) for c in build.candidates if c.id in build.ready}
    if len(days) == 1 and len(build.ready) > 1:
        doc.common_date = days.pop()


# ---------------------------------------------------------------------------------------------
# seeds


def start(graph: GraphReader, request: BuildRequest) -> Build:
    """The lens, the depth it allows, and the (empty) document for this request."""
    if isinstance(request.lens, Lens) or request.lens != AUTO_LENS:
        lens = request.lens if isinstance(request.lens, Lens) else load_lens(request.lens)
        lens_choice = {"lens": lens.name, "why": request.lens_why or "named by the caller"}
    else:
        from ctx.assemble.lens_choice import choose

        name, why = choose(graph, tuple(t for t in request.topics if t.strip()))
        lens_choice = {"lens": name, "why": why}
        lens = load_lens(name)
    warnings: list[str] = []
    depth = lens.depth if request.depth is None else request.depth
    if depth > lens.max_depth:
        warnings.append(f"--depth {depth} capped to {lens.max_depth}: the most lens {lens.name!r} allows")
        depth = lens.max_depth
    topics = tuple(t.strip() for t in request.topics if t.strip())
    doc = Document(
        label=" + ".join(topics),
        topics=topics,
        lens=lens.name,
        budget=request.max_tokens,
        fmt=request.format,
        found=False,
        sections=[SectionOut(s.name, s.order, s.group_by, layout=s.layout) for s in lens.sections],
        show_scores=lens.output.show_scores,
        show_metadata=lens.output.metadata,
        summary=lens.output.summary,
        citations=lens.output.citations,
        empty_sections=lens.output.empty_sections,
        show_dates=lens.output.dates,
    )
    if lens.output.dates:
        from ctx.assemble.timeline import about_time

        doc.chronological = about_time(topics)
    build = Build(request, lens, depth, topics, doc, TokenCounter(request.encoding), warnings)
    if request.freshness is not None:
        # Stated in every answer; a stale graph says so in one line, on stderr and in the header.
        build.meta["freshness"] = request.freshness.as_meta()
        doc.freshness = request.freshness.line()
        doc.freshness_short = request.freshness.short()
        if doc.freshness:
            build.warnings.append(doc.freshness)
    build.meta["lens_choice"] = lens_choice
    from ctx.assemble.manifest import context_id

    build.meta["context"] = doc.context_id = context_id(graph, build)
    return build


def find_seeds(graph: GraphReader, build: Build) -> None:
    seeds = build.lens.seeds
    build.passage_search = passage_searcher(graph) if build.lens.passages else None
    build.resolved = resolve_topics(
        graph, build.topics, seeds.max, seeds.cutoff, seeds.retrieval, seeds.mentions, build.passage_search,
    )
    build.seeds = seed_ids(build.resolved)
    build.missing = [r.topic for r in build.resolved if not r.ids]
    if build.seeds:
        # When nothing matched at all, the not-found error says so; a partial miss is a notice.
        build.warnings += [f"no matching nodes found for {topic!r}" for topic in build.missing]
    suggestions = _suggestions(graph, build.resolved)
    for topic, titles in suggestions.items():
        build.warnings.append(f"{topic!r} names no node; did you mean " + " or ".join(repr(t) for t in titles) + "?")
    build.doc.found = bool(build.seeds)
    build.meta.update({
        "resolved": [{"topic": r.topic, "ids": list(r.ids), "how": r.how} for r in build.resolved],
        **({"suggestions": suggestions} if suggestions else {}),
        "depth": build.depth,
        "encoding": build.request.encoding,
    })


def _suggestions(graph: GraphReader, resolved: list[ResolvedTopic]) -> dict[str, list[str]]:
    """Close titles for each short topic that did not name a node exactly (a likely typo)."""
    from ctx.assemble.suggest import close_titles, close_titles_among, looks_like_a_name

    out: dict[str, list[str]] = {}
    for r in resolved:
        if r.how in ("id", "title") or not looks_like_a_name(r.topic):
            continue
        # Found by search: the title meant is among the notes found (a few index steps); only a
        # topic nothing answered is compared with every title in the graph.
        titles = close_titles_among(graph, r.topic, list(r.ids)) if r.ids else close_titles(graph, r.topic)
        if titles:
            out[r.topic] = titles
    return out


def not_found(build: Build) -> BuildResult:
    """The empty context that says no topic matched, within the budget like any other."""
    build.doc.meta = dict(build.meta)  # what the not-found text says (suggestions) comes from here
    header_cost = choose_header(build.doc, build.lens, build.counter)
    text, used = pack(build.doc, [], build.lens, build.counter, header_cost, set())
    build.meta["tokens"] = {"used": used, "budget": build.request.max_tokens}
    return BuildResult(text, False, build.warnings, [], build.meta)


# ---------------------------------------------------------------------------------------------
# collect


def collect(graph: GraphReader, build: Build) -> None:
    """Every candidate: walked from the seeds, or added by a lens option; never a hidden one."""
    request, lens, seeds = build.request, build.lens, build.seeds
    build.reference = reference = graph_reference_time(graph)
    topic = topic_for(graph, build.topics)
    # The free-text topics' passages: what a long node shows of itself, and, for a lens that ranks
    # by passages, what ranks the nodes.
    build.ranking = passage_ranking(graph, build.resolved, topic)
    search_relevance = _search_relevance(graph, build, topic) if lens.semantic.rank == "fused" else None
    # The walk goes only as far as the pool of candidates a context of this budget can use needs.
    has_similarity = topic is not None and topic.vector is not None
    bound = ScoreBound(lens, has_similarity, reference, search_relevance)
    from ctx.assemble import warm

    shared = warm.bound_facts(graph, lens, reference)
    if shared is not None:
        bound.share(shared)
    limit = walk_limit(request.max_tokens, bound)
    walked = build.walked = walk(graph, lens, seeds, build.depth, neighbour_ranker(lens, reference), limit)
    window = sibling_window(lens)
    sibling_offsets = add_siblings(graph, seeds, walked, window) if window is not None else {}
    build.recent = add_recent(graph, lens, walked, reference)
    if search_relevance is not None:
        # Extras by fused search rank: BM25 evidence counts as well as the vectors'.
        _add_extras(build, walked, [i for i in search_relevance if i not in walked.reached][: lens.semantic.top_k])
        if lens.passages and build.ranking is not None:
            from ctx.assemble.prepare import PASSAGE_ESTIMATE, passage_owners

            _add_extras(build, walked, [i for i in passage_owners(build.ranking, request.max_tokens, PASSAGE_ESTIMATE)
                                        if i not in walked.reached])
    added = build.extras | build.recent | set(sibling_offsets)
    build.pool = Pool(limit.pool, drop_hopeless(walked, bound, limit.pool, added))
    build.similarity, build.similarity_note = compute_similarity(graph, topic, sorted(walked.reached))
    if build.similarity is None and build.similarity_note.startswith(MODEL_REFUSED):
        build.warnings.append(build.similarity_note)
    if search_relevance is None and lens.semantic.top_k > 0:
        similar = semantic_extras(
            graph, topic, seeds, set(walked.reached) | build.pool.beyond, lens.semantic.top_k,
            lens.semantic.min_similarity,
        )
        _add_similar(build, walked, similar)
    # Whatever a collector proposes, a node the reader may not see never becomes a candidate.
    for node_id in graph.hidden_among(walked.reached):
        del walked.reached[node_id]
        build.extras.discard(node_id)
        build.recent.discard(node_id)
    candidates = enrich(graph, walked, lens, request.include_fields)
    _mark(build, candidates, search_relevance, sibling_offsets)
    annotate_neighbours(graph, candidates, lens.output.neighbours)
    build.candidates = candidates


def _search_relevance(graph: GraphReader, build: Build, topic: TopicVector | None) -> dict[str, float] | None:
    """The fused search relevance of the question's nodes (``relevance.fused_relevance``). It
    depends on the topics, the lens, the seeds and the topic's vector, not on the depth or the
    budget: a warm process keeps it for the same question asked again (``kept_rankings``)."""
    from ctx.assemble.kept_rankings import kept, topic_key

    request, lens, seeds = build.request, build.lens, build.seeds
    ranking = build.ranking if lens.passages else None
    # The ranking is the topics' own under this state (``passage_ranking``): the key holds its inputs.
    key = ("fused relevance", request.topics, lens.as_key(), tuple(seeds), topic_key(topic))
    found = kept(graph, key, lambda: fused_relevance(graph, request, lens, seeds, topic, ranking))
    return None if found is None else dict(found)


def _add_extras(build: Build, walked: Walk, ids: list[str]) -> None:
    """Nodes found by search or similarity join the walk at distance 0."""
    for node_id in ids:
        walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
        build.extras.add(node_id)


def _add_similar(build: Build, walked: Walk, similar: list[tuple[str, float]]) -> None:
    for node_id, sim in similar:
        if node_id in walked.reached:
            continue
        _add_extras(build, walked, [node_id])
        if build.similarity is not None:
            build.similarity[node_id] = sim  # found by similarity: it is what ranks them


def _mark(
    build: Build, candidates: list[Candidate], search_relevance: dict[str, float] | None,
    sibling_offsets: dict[str, int],
) -> None:
    """How each candidate came in: protected seed or not, search relevance, similar, recent, sibling."""
    seeds, lens = build.seeds, build.lens
    relevance = {i: r.relevance_of(i) for r in build.resolved for i in r.ids}
    protected = set(seeds if lens.seeds.protect is None else seeds[: lens.seeds.protect])
    for c in candidates:
        if c.seed and c.id not in protected:
            # An unprotected seed competes like any node at distance 0: packed whole or not at all.
            c.seed = False
        if search_relevance is not None:
            c.search = search_relevance.get(c.id, 0.0)
        c.semantic = c.id in build.extras
        c.recent = c.id in build.recent and not c.seed and not c.path
        c.sibling_offset = sibling_offsets.get(c.id)
        if c.seed:
            c.relevance = relevance.get(c.id, 1.0)


# ---------------------------------------------------------------------------------------------
# rank


def rank(graph: GraphReader, build: Build) -> None:
    """Best first: scored, diversified if the lens asks, in sections, blocks folded into pages."""
    lens = build.lens
    ranked = score_candidates(build.candidates, lens, build.similarity, build.reference)
    if build.pool is not None:
        ranked = keep_best(ranked, build.pool)
    if lens.scoring.diversity > 0:
        # Redundancy is read from the words of the top of the ranking: packing reuses the bodies.
        load_bodies(graph, ranked[: DIVERSITY_POOL + sum(1 for c in ranked if c.seed)])
        ranked = diversify(ranked, lens.scoring.diversity)
    assign_sections(ranked, lens.sections)
    # Outliner pages carry their blocks as an outline; blocks it shows leave the pool (counted once).
    build.in_outlines = outline_prepare(
        graph, ranked, lens.output.outline_max_nodes, build.request.max_tokens, lens.output.outline_formats,
    )
    build.candidates = ranked


# ---------------------------------------------------------------------------------------------
# pack


def pack_and_report(build: Build) -> BuildResult:
    """Pack the prepared candidates into the budget; the text, its counts and the audit rows."""
    request, lens, doc, ranked = build.request, build.lens, build.doc, build.candidates
    text, used = pack(doc, ranked, lens, build.counter, build.header_cost, build.ready)
    if doc.summary_only:
        build.warnings.append(
            f"--max-tokens {request.max_tokens} is below {lens.output.summary_below}:"
            " summary-first context (one line per related node; text only where room is left)"
        )
    meta = build.meta
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
        meta["explain"] = explain_text(rows) + explain_caption(meta)
    return BuildResult(text, True, build.warnings, rows, meta)
