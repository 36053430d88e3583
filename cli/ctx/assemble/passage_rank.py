"""Passage retrieval for a free-text topic: which parts of which notes answer it.

Full-text search ranks passages by BM25 over their text, heading path, note title and ancestor
titles, matching ANY content word of the topic (function words dropped), so one word the answer
does not use never hides it; a stemmed index finds "graph" for "graphs" and an exact one keeps
names apart (``store.passages.search``). When the graph has
passage vectors, the nearest passages by meaning are fused with the BM25 ranking by reciprocal
rank, and a passage that holds every word of a part of the question is never ranked by meaning
below where full text ranks it (``_floor_by_words``). A node's relevance comes from its best
passages; every candidate's passages keep their own relevance, which query-focused rendering uses
to show a long note's relevant parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctx.assemble.build_memo import once
from ctx.stopwords import STOPWORDS
from ctx.store.types import MAX_QUERY_TERMS

if TYPE_CHECKING:
    from ctx.semantic.topic import TopicVector
    from ctx.store.protocols import GraphReader
    from ctx.store.types import PassageHit, StoredPassage

# How deep each ranking goes before fusion: past the first page of any retriever, so a passage one
# of them ranks well and the other poorly still surfaces.
POOL = 200
# Reciprocal rank fusion's constant for passages. The paper's 60 suits fusing a few dozen documents;
# over a pool of 200 passages it flattens relevance: a passage only one retriever found late scores
# about half the best, so every passage of a long note the vectors find vaguely similar competed
# almost as well as the passage that answers, and an embedded graph packed a long note's bulk where
# the same graph without vectors packed other notes' matching passages (issue 23). At 10 a passage
# one retriever ranks 50th is worth 0.09 of one both rank first (0.28 at 60).
RRF_K = 10
# How far down full text's ranking a passage is read for which of the question's words it holds
# (``_floor_by_words``): below it, full text's own term, all the floor can add, is at most
# 1/(RRF_K + SURE_DEPTH), a tenth of the best fused score.
SURE_DEPTH = 50
# Full text's first this many passages count as ranked by meaning no lower than full text ranks
# them when they hold at least ``HALF`` of a part's words and no less of it than any passage of
# full text's first ``SURE_DEPTH`` (``_floor_by_words``): about what a 1,000-token budget packs
# (~200-token passages), the budget where fusion lost what full text alone packed.
SURE_FIRST = 5
HALF = 0.5
# Full text is unsure of a question when none of its first ``SURE_FIRST`` passages holds this
# share of the question's words, weighted by their rarity (``full_text_sureness``): then the
# vectors' rank share prices the passages only they found (``at_least_alone``).
UNSURE = 0.5
# How many notes a word is counted in, at most, to weigh its rarity (``full_text_sureness``):
# a word in more notes weighs as little as one in this many.
NOTES_COUNTED = 2000
# A part of a question this many content words long, none of them shared with every other part,
# has its one passage holding all of them in one paragraph shown first (``_wide_by_parts``).
PART_WORDS = 3
# How many of the nodes nearest the question by their own vectors are read for outline blocks
# whose rank by meaning their page's passage takes (``_by_blocks``).
BLOCK_DEPTH = 50
# How many of the nearest paragraphs lend their passage a rank (``_by_paragraphs``), as many as
# the day pages' blocks (memory28's experiment measured 50).
PARAGRAPH_DEPTH = 50
# What a paragraph's rank is worth to its passage beside the passage's own: half. At full worth
# dendron-site's dated release notes (each paragraph a feature the docs pages answer for) took
# room from the answering pages (bench_facts with embeddings 0.881 -> 0.870; lending only to
# passages already among the nearest, 0.870, or to one passage a note, 0.866, did not help);
# at half, 0.881 (docs/scale.md, memory32).
PARAGRAPH_WEIGHT = 0.5
# A clause of a question needs this many content words to be a part of its own; a shorter one
# ("..., and from whom?") belongs to the clause before it.
MIN_PART_WORDS = 2
# A question's parts are split at these: question marks, semicolons, commas and the
# conjunctions that join clauses.
_CLAUSE = re.compile(r"[?;!]+|,?\s+(?:and|or|but)\s+|,\s+", re.IGNORECASE)
# A question longer than this many distinct content words keeps its first ones (a pasted page
# would otherwise become a query of thousands of OR-ed terms): the same cap as every search.
MAX_TERMS = MAX_QUERY_TERMS

_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str) -> list[str]:
    """The topic's content words, lowercased, once each, in order (at most ``MAX_TERMS``)."""
    out: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.setdefault(word, None)
        if len(out) >= MAX_TERMS:
            break
    if not out:  # a topic made only of function words still searches for them
        out = dict.fromkeys(w for w in _WORD.findall(text.lower())[:MAX_TERMS])
    return list(out)


def known_terms(graph: "GraphReader", terms: list[str]) -> list[str]:
    """The terms that occur somewhere in the passages the reader may see."""
    return graph.passage_terms_known(terms)


@dataclass
class PassageRanking:
    passages: dict[int, float] = field(default_factory=dict)  # passage id -> relevance in (0, 1]
    node_of: dict[int, str] = field(default_factory=dict)  # passage id -> node id
    nodes: dict[str, float] = field(default_factory=dict)  # node id -> relevance in (0, 1]
    method: str = "none"  # "bm25", "vectors" or "bm25+vectors"
    terms: tuple[str, ...] = ()  # the topic's content words (``query_terms``)
    lexical: frozenset[int] = frozenset()  # the passages full text found (by the topic's words)
    # With vectors, each passage's share at least as either ranking alone prices it
    # (``at_least_alone``): what a log's passages are worth (``passage_view``) and what the
    # embedded build reads by (``prepare.read_as_without_vectors``); empty where full text alone
    # ranked.
    floors: dict[int, float] = field(default_factory=dict)
    # With vectors, passage id -> the texts (folded) of the outline blocks whose own vectors
    # found that passage of a day page (``_by_blocks``), best first: the entry the vectors say
    # answers, which a core shows beside the entries holding the question's words
    # (``passage_view``); empty elsewhere.
    found_blocks: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def node_order(self) -> list[str]:
        return sorted(self.nodes, key=lambda n: (-self.nodes[n], n))

    def of_node(self, node_id: str) -> dict[int, float]:
        return {p: s for p, s in self.passages.items() if self.node_of[p] == node_id}


def rank_passages(
    graph: "GraphReader",
    text: str,
    topic: "TopicVector | None",
    *,
    pool: int = POOL,
    mode: str = "hybrid",
) -> PassageRanking:
    """Passages and nodes relevant to ``text``, best first, as shares of the best score.

    ``mode``: ``hybrid`` (full text and vectors), ``fts`` or ``vector`` alone (lens
    ``seeds.retrieval``).

    Where no vector takes part (``fts``, or a topic without one), the ranking is full text's
    alone, made once per build (``build_memo``): a question's build asked for it three times (the
    resolver whether a word is known, then for its seeds, the collector for the candidates'
    pieces), each making the same scores, node relevances and ranking from the one BM25 search.
    Callers only read a ranking."""
    if mode == "fts" or (mode == "hybrid" and (topic is None or topic.vector is None or topic.model is None)):
        # ``_dense`` gives nothing for such a topic: the hybrid ranking is the full-text one.
        return once(("passages by words", text, pool, graph.include_private),
                    lambda: _rank_passages(graph, text, None, pool, "fts"))
    return _rank_passages(graph, text, topic, pool, mode)


def _rank_passages(
    graph: "GraphReader", text: str, topic: "TopicVector | None", pool: int, mode: str,
) -> PassageRanking:
    from ctx.assemble.warm import visible_nodes

    include_private = graph.include_private
    terms = query_terms(text)
    bm25 = (
        once(("passage_bm25", tuple(terms), pool, include_private),
             lambda: graph.search_passages(terms, limit=pool, visible=visible_nodes(graph)))
        if mode != "vector" else []
    )
    node_of = {h.id: h.node_id for h in bm25}
    dense, found_blocks, para_ranks = _dense(graph, topic, pool, text, [h.id for h in bm25]) if mode != "fts" else ({}, {}, {})
    node_of.update(dense)
    method = "+".join(m for m, r in (("bm25", bm25), ("vectors", dense)) if r) or "none"
    scores: dict[int, float] = {}
    floors: dict[int, float] = {}
    if bm25 and not dense:
        # Full-text alone: its own scores say how much better the best is (ranks would flatten it).
        scores = {h.id: max(h.score, 0.0) + 1e-9 for h in bm25}
        _wide_by_parts(scores, graph, text, bm25)
    elif dense:
        from ctx.semantic.fusion import reciprocal_rank_fusion

        # A passage edited or added since the last `ctx embed` has no vector to be ranked by:
        # it counts as first by meaning, so full text alone places it (``semantic.fusion``).
        # On a graph at its first stage, the passages the candidates were drawn from are those
        # with a static vector (``_dense``): only a passage without one was not seen.
        assert topic is not None and topic.model is not None
        seen_by = _first_stage(graph) or topic.model
        unvectored = _unvectored(graph, seen_by, [h.id for h in bm25], dense)
        scores = dict(reciprocal_rank_fusion(
            [[h.id for h in bm25], list(dense)], k=RRF_K, unseen=[None, unvectored],
        ))
        if bm25:
            _floor_by_words(scores, graph, text, bm25, dense, unvectored)
        # Full text's doubt is read only where the vectors ranked too: it decides what the
        # vectors alone may lift (``at_least_alone``).
        unsure = bool(bm25) and full_text_sureness(graph, text, bm25) < UNSURE
        floors = at_least_alone(scores, _score_shares(bm25), list(dense), unsure, _by_nearest_paragraph(dense, para_ranks))
    if not scores:
        return PassageRanking(method=method, terms=tuple(terms))
    best = max(scores.values())
    shares = {pid: s / best for pid, s in scores.items()}
    return PassageRanking(shares, node_of, _node_relevance(shares, node_of), method, tuple(terms),
                          frozenset(h.id for h in bm25), floors,
                          {pid: found for pid, found in found_blocks.items() if pid in shares})


def _by_nearest_paragraph(dense: dict[int, str], paragraph_ranks: dict[int, int]) -> dict[int, int] | None:
    """Each passage's rank by meaning alone (``at_least_alone``): its place in ``dense``, or its
    nearest paragraph's rank among the graph's paragraph vectors (``_by_paragraphs``) where that
    is better; None where no paragraph lent (the places in ``dense`` then).

    A paragraph ranked ``n``-th nearest is what a ranking by meaning of paragraph-sized pieces
    (MiniLM over ~150-token chunks) places ``n``-th. Lent at half a rank's worth and added to its
    passage's own diluted rank, an answer asked in other words whose paragraph was 2nd-20th by
    meaning left its passage 20th-80th by meaning and fused (its relevance 0.1-0.3 of the best),
    and the vectors' pick was in no context at 4,000 tokens: of the ``open`` questions the
    embedded build missed at 4,000 on memory sets 1, 3 and 30, 24 of 49 had their paragraph
    among the 50 nearest (docs/scale.md, memory39). The dense order itself, and so the fusion,
    is left as it is: full worth there took the answering pages' room on bench_facts (memory32)."""
    if not paragraph_ranks:
        return None
    ranks = {pid: rank for rank, pid in enumerate(dense, start=1)}
    for pid, rank in paragraph_ranks.items():
        if pid in ranks:
            ranks[pid] = min(ranks[pid], rank)
    return ranks


def _score_shares(hits: list["PassageHit"]) -> dict[int, float]:
    """Full text's own scores as shares of its best, as the graph without vectors prices them."""
    if not hits:
        return {}
    top = max(max(h.score, 0.0) for h in hits) + 1e-9
    return {h.id: (max(h.score, 0.0) + 1e-9) / top for h in hits}


def full_text_sureness(graph: "GraphReader", text: str, hits: list["PassageHit"]) -> float:
    """How much of the question full text's best matches say: the most of the question's words
    one of its first ``SURE_FIRST`` passages holds (its heading path counted), each word weighted
    by its rarity among the notes the reader may see, ``log(1 + notes / notes holding it)`` (a word no note
    holds weighs most: the question asks in other words than the notes use). An open question
    asked in other words ("What did we end up going with for putting power generation on the
    roof?", answered by the solar panels' entry) shares only common words ("end", "going") with
    whatever full text ranks first: about a third; a fact question's best match holds its
    rare names, three quarters or more (memory sets 1 and 33: half or less for 48 of 82 open
    questions, 5 of 93 single-fact ones). A word's notes are counted up to ``NOTES_COUNTED``
    (~0.1 ms a word on a 100k graph)."""
    import math

    from ctx.assemble import warm
    from ctx.store import word_cover

    words = query_terms(text)
    first = hits[:SURE_FIRST]
    if not words or not first:
        return 1.0

    def sureness() -> float:
        # The notes this reader may see, as ``notes_matching`` counts them: the graph's total
        # would make the weights (and which passages the vectors may lift) move with how many
        # private notes there are (tests/test_privacy_oracle.py).
        notes = max(graph.node_count() - graph.hidden_total(), 1)
        counted = min(notes, NOTES_COUNTED)
        weight = {w: math.log(1 + notes / max(warm.notes_matching(graph, w, at_most=counted), 0.5)) for w in words}
        total = sum(weight.values())
        found = warm.passages_of(graph, list(dict.fromkeys(h.node_id for h in first)))
        by_id = {p.id: p for rows in found.values() for p in rows}
        read = [by_id[h.id] for h in first if h.id in by_id]
        held = word_cover(words, [("", "\n".join([*p.heading, p.text])) for p in read]).held
        return max((sum(weight[w] for w in got) / total for got in held), default=0.0)

    # Once per build: the resolver and the collector both rank the question's passages.
    return once(("full_text_sureness", text, tuple(h.id for h in first), graph.include_private), sureness)


def at_least_alone(
    fused: dict[int, float], full_text: dict[int, float], by_meaning: list[int], unsure: bool = False,
    ranks: dict[int, int] | None = None,
) -> dict[int, float]:
    """Each fused passage's share of the best, but never below what either ranking alone would
    make of it: full text's own score share (the graph without vectors), or, for a passage full
    text found too, the share a ranking by meaning alone gives its rank, ``(RRF_K + 1) / (RRF_K +
    rank)``. A passage only the vectors found keeps its fused share: no word of the question
    says which of its paragraphs answers, so it is shown whole, and lifted, three chat sessions'
    evening passages (111 tokens each) took a 600-token context's room from an answering core.

    Reciprocal rank fusion keeps only ranks, and full text's scores are flat at the top of a log
    whose entries share the question's words: the answer to "What was the cause of the problem
    with the pond restoration?" was full text's 17th passage at 0.73 of its best score, and the
    vectors' 39th, so fused it fell to 0.32 of the best and out of a 1,000-token context the
    graph without vectors shows it in; a passage full text ranks 4th and the vectors 19th fell
    below a dozen both rank middling (memory sets 21, 22: embedded below plain at 1,000 tokens).
    Full text's share alone lifted the lexical passages over those only the vectors found, and
    open questions asked in other words lost their evidence at 4,000 tokens; the vectors' rank
    share keeps what the vectors alone are sure of. Only a log's passages are priced so
    (``passage_view``): every passage so, the node order moved with them, and help pages the
    vectors placed 4th-10th left the context (bench_facts with embeddings 0.885 -> 0.854;
    docs/scale.md, memory20).

    Where full text is ``unsure`` (``full_text_sureness`` below ``UNSURE``), a passage only the
    vectors found keeps their rank share too: an open question asked in other words shares only
    common words with its evidence, full text's lifted shares for entries holding those words
    ("going", "end") outbid the evidence the vectors ranked 4th, and the embedded build lost
    it at 2,000 and 4,000 tokens (memory sets 1, 32, 33; docs/scale.md, memory22). Where full
    text is sure, its matches say which paragraphs answer, and the lifted evening passages
    above stay out. Lifted so, a passage only the vectors found still stays below full text's
    first ``SURE_FIRST`` passages: unsure is not wrong, those often answer (a measurement's
    entry matching "numbers" and "checked"), and the lifted passages, shown whole, took their
    room at 1,000 tokens (memory sets 1, 3, 9, 23, 24, 28; held-out 19 and 29; memory24).

    ``ranks``: each passage's rank by meaning, where not its place in ``by_meaning`` (a log
    passage's nearest paragraph's: ``_by_nearest_paragraph``)."""
    if not fused:
        return fused
    best = max(fused.values())
    if ranks is None:
        ranks = {pid: rank for rank, pid in enumerate(by_meaning, start=1)}
    meaning = {pid: (RRF_K + 1) / (RRF_K + rank) for pid, rank in ranks.items()}
    floors = {pid: max(score / best, full_text.get(pid, 0.0), meaning.get(pid, 0.0) if pid in full_text else 0.0)
              for pid, score in fused.items()}
    if not unsure:
        return floors
    first = sorted(full_text, key=lambda pid: -full_text[pid])[:SURE_FIRST]
    below = min((floors[pid] for pid in first if pid in floors), default=1.0) * (1 - 1e-6)
    return {pid: floor if pid in full_text else max(floor, min(meaning.get(pid, 0.0), below))
            for pid, floor in floors.items()}


def _node_relevance(shares: dict[int, float], node_of: dict[int, str]) -> dict[str, float]:
    """A node is as relevant as its best passage: a long note with many weak matches (a changelog)
    must not outrank the note that answers."""
    out: dict[str, float] = {}
    for pid, share in shares.items():
        node_id = node_of[pid]
        out[node_id] = max(out.get(node_id, 0.0), round(share, 6))
    return out


def _unvectored(graph: "GraphReader", model: str, found: list[int], dense: dict[int, str]) -> set[int]:
    return graph.unvectored_passages(model, [pid for pid in found if pid not in dense])


def _first_stage(graph: "GraphReader") -> str | None:
    """The first stage's model while the graph's passages lack their own vectors (``ctx embed``
    stopped after, or is still running past, its static stage), else None."""
    from ctx.semantic import two_stage

    return once(("first_stage",), lambda: two_stage.first_stage_of(graph))


def _dense(
    graph: "GraphReader", topic: "TopicVector | None", pool: int, text: str = "", lexical: list[int] | None = None,
) -> tuple[dict[int, str], dict[int, tuple[str, ...]], dict[int, int]]:
    """Nearest passages by vector (passage id -> node id, best first), and the day pages' blocks
    that found their passages (``_by_blocks``); empty without vectors.

    While ``ctx embed`` has given the passages only their first stage's static vectors, only the
    question's candidates (static nearest and ``lexical``, full text's ranking) are ranked by the
    model's own vectors, computed for them now if missing (``ctx.semantic.two_stage``)."""
    if topic is None or topic.vector is None or topic.model is None:
        return {}, {}, {}
    from ctx.semantic import two_stage
    from ctx.semantic.passage_index import load_passage_index

    first = _first_stage(graph)
    if first is not None:
        # Once per build: the resolver and the collector both rank the question's passages.
        cut = tuple((lexical or [])[: two_stage.LEXICAL_B])
        key = ("two_stage", topic.model, text, cut, pool, graph.include_private, topic.vector.tobytes())
        statics = once(("passage_index", first), lambda: load_passage_index(graph, first))
        return once(key, lambda: two_stage.dense(graph, topic, text, list(cut), pool, statics)), {}, {}
    model = topic.model
    index = once(("passage_index", model), lambda: load_passage_index(graph, model))
    if not len(index):
        return {}, {}, {}
    # Fetched past the pool by the hidden passages, so that the visible ones fill it as they would
    # in the graph without private notes.
    hits = index.nearest(topic.vector, pool + graph.hidden_passages_total())
    nodes = index.nodes_of([pid for pid, _ in hits])
    visible = graph.visible_ids(sorted(set(nodes.values())))
    kept = [pid for pid, _ in hits if nodes.get(pid) in visible][:pool]
    dense = {pid: nodes[pid] for pid in kept}
    # Once per build: the resolver and the collector both rank the question's passages.
    lent_key = ("by_blocks", model, topic.vector.tobytes(), tuple(dense), pool, graph.include_private)
    paragraphs = once(("paragraph vectors", model), lambda: _paragraph_vectors(graph, model))
    if not paragraphs[0]:  # a graph without paragraph vectors: as before them
        return (*once(lent_key, lambda: _by_blocks(graph, topic, dense, pool)), {})
    return once(lent_key + ("paragraphs",), lambda: _with_paragraphs(graph, topic, dense, pool, paragraphs))


def _paragraph_vectors(graph: "GraphReader", model: str) -> tuple[list[int], list[str], list[str], Any]:
    """The graph's paragraph vectors (``ctx.assemble.paragraph_vectors``); a warm process keeps
    them between builds under the graph's state, as the node vectors."""
    from ctx.assemble.kept_rankings import kept

    return kept(graph, ("paragraph vectors", model), lambda: graph.paragraph_vectors(model))


def _with_paragraphs(
    graph: "GraphReader", topic: "TopicVector", dense: dict[int, str], pool: int,
    paragraphs: tuple[list[int], list[str], list[str], Any],
) -> tuple[dict[int, str], dict[int, tuple[str, ...]], dict[int, int]]:
    """``_by_paragraphs``, then the day pages' blocks (``_by_blocks``) over what it chose; each
    passage keeps the paragraphs and blocks that found it."""
    chosen, found, lent = _by_paragraphs(graph, topic, dense, pool, paragraphs)
    chosen, blocks = _by_blocks(graph, topic, chosen, pool)
    out = {**{pid: f for pid, f in found.items() if pid in chosen}, **blocks}
    return chosen, out, {pid: r for pid, r in lent.items() if pid in chosen}


def _by_paragraphs(
    graph: "GraphReader", topic: "TopicVector", dense: dict[int, str], pool: int,
    paragraphs: tuple[list[int], list[str], list[str], Any],
) -> tuple[dict[int, str], dict[int, tuple[str, ...]], dict[int, int]]:
    """``dense`` with each long log passage ranked by meaning with the help of its paragraphs'
    own vectors, as ``_by_blocks`` does for a day page's passage with its blocks' vectors. A log's
    passage holds several unrelated paragraphs and its one vector speaks for none of them: on
    long lab-notebook notes (~6,000-token sessions) chunk retrieval over ~150-token chunks beat
    the embedded graph at 4,000 tokens, and at 1,000 the embedded graph fell below the same graph
    without vectors (issue 23).

    The ``n``-th nearest paragraph lends ``PARAGRAPH_WEIGHT / (RRF_K + n)`` to its passage (its first, best
    rank), added to the passage's own ``1 / (RRF_K + rank)``; the first ``PARAGRAPH_DEPTH``
    visible paragraphs lend. Each passage keeps the text of its paragraphs among them, folded,
    for its core. Measured as an experiment with vectors computed in the build (docs/scale.md,
    memory28): +29.7/-12.8, +32.3/-8.2, +31.5/-8.7 question-cells at 1k/2k/4k tokens over seven
    file-log dev sets."""
    import numpy as np

    from ctx.assemble import warm
    from ctx.assemble.paragraph_vectors import dated_logs, paragraph_hash, paragraphs_of

    assert topic.vector is not None
    owners, nodes, hashes, matrix = paragraphs
    sims = matrix @ np.asarray(topic.vector, dtype=np.float32)
    order = np.argsort(-sims, kind="stable")
    lent: dict[int, int] = {}
    wanted: dict[int, list[str]] = {}  # passage id -> its paragraphs' hashes among the nearest
    node_of_lent: dict[int, str] = {}
    rank, start, step = 0, 0, PARAGRAPH_DEPTH * 2
    # Hidden notes' paragraphs are passed over, so the visible ones fill the depth as they would
    # in the graph without private notes; so are those of a note that is not a dated log but
    # holds a log's passage text (the key of its paragraph vectors: ``dated_logs``).
    while rank < PARAGRAPH_DEPTH and start < len(order):
        part = [int(i) for i in order[start : start + step]]
        visible = sorted(graph.visible_ids(sorted({nodes[i] for i in part})))
        logs = dated_logs(graph, visible, warm.passages_of(graph, visible))
        for i in part:
            if nodes[i] not in logs:
                continue
            rank += 1
            if rank > PARAGRAPH_DEPTH:
                break
            lent.setdefault(owners[i], rank)
            node_of_lent[owners[i]] = nodes[i]
            wanted.setdefault(owners[i], []).append(hashes[i])
        start += step
    own = {pid: r for r, pid in enumerate(dense, start=1)}
    node_of = dict(dense) | {pid: node_of_lent[pid] for pid in lent if pid not in dense}
    worth = {pid: (1.0 / (RRF_K + own[pid]) if pid in own else 0.0)
             + (PARAGRAPH_WEIGHT / (RRF_K + lent[pid]) if pid in lent else 0.0) for pid in node_of}
    ranked = sorted(node_of, key=lambda pid: (-worth[pid], own.get(pid, len(own) + 1), pid))
    chosen = {pid: node_of[pid] for pid in ranked[:pool]}
    kept_ids = [pid for pid in wanted if pid in chosen]
    if not kept_ids:
        return chosen, {}, lent
    rows = warm.passages_of(graph, sorted({chosen[pid] for pid in kept_ids}))
    texts = {p.id: p.text for found in rows.values() for p in found}
    found: dict[int, tuple[str, ...]] = {}
    for pid in kept_ids:
        by_hash = {paragraph_hash(para): para for para in paragraphs_of(texts.get(pid, ""))}
        held = tuple(fold_spaces(by_hash[h]) for h in wanted[pid] if h in by_hash)
        if held:
            found[pid] = held
    return chosen, found, lent


def _by_blocks(
    graph: "GraphReader", topic: "TopicVector", dense: dict[int, str], pool: int,
) -> tuple[dict[int, str], dict[int, tuple[str, ...]]]:
    """``dense`` with each passage of an outliner's day page (type ``journal``) ranked by meaning
    with the help of the page's blocks it holds. A day page's passage is ~20 unrelated entries,
    and its one vector is so diluted that the entry answering the question ranked 100th-140th by
    meaning where its own block's vector (every block is a node, embedded) ranked it in the first
    ten; fused with full text, the passage fell below passages both rank middling, and an
    embedded journal graph packed worse than the same graph without vectors (issue 23). Each
    such passage also keeps the text of the block that lent it its rank (``found_blocks``).

    The ``n``-th nearest node, when it is a day page's block, lends ``1 / (RRF_K + n)`` to the
    passage of its page that holds its text, added to the passage's own ``1 / (RRF_K + rank)``:
    a passage near by its own vector and its block's comes before one near by either alone, and
    a block far down (a chatty entry near an open question by chance) lends little. (Taking the
    better of the two ranks instead lifted such chance blocks' passages as much as the answering
    ones: set 11 embedded fell 0.866 -> 0.841 at 2,000 tokens, open questions.) Other passages
    keep their own standing; a graph without day pages is unchanged."""
    assert topic.vector is not None and topic.model is not None
    # Where no day page is among the passages found by meaning, nothing would be lent: the node
    # vectors are not read (below 5,000 nodes they come out of SQLite, ~18 ms for 3,000).
    if not any(f.type == "journal" for f in graph.node_facts(sorted(set(dense.values())), with_fields=False)):
        return dense, {}
    from ctx.semantic.search import load_index

    from ctx.assemble.kept_rankings import kept

    model, vector = topic.model, topic.vector
    # A warm process keeps the node vectors between builds under the graph's state (below 5,000
    # nodes they are read out of SQLite each time: ~18 ms for 3,000).
    index = kept(graph, ("node vectors", model), lambda: load_index(graph, model))
    nearest = _nearest_nodes(index, vector, BLOCK_DEPTH + graph.hidden_total())
    visible = graph.visible_ids([i for i, _ in nearest])
    ranked = [i for i, _ in nearest if i in visible][:BLOCK_DEPTH]
    pages: dict[str, str] = {}
    # A block has an outline parent; a note read from its own file has none (one query for all).
    parented = {f.id for f in graph.node_facts(ranked, with_fields=False) if f.parent_id}
    for node_id in (i for i in ranked if i in parented):
        crumbs = graph.breadcrumb(node_id)
        # Only a day page: its entries are unrelated to each other, so its passage's one vector
        # speaks for none of them. A page's blocks are its sections about one thing, and its
        # passage's vector already speaks for them: a long changelog's many blocks near a
        # question by meaning lent it the first rank and the budget (bench_facts embedded
        # 0.885 -> 0.874, logseq-18).
        if crumbs and crumbs[0].type == "journal":
            pages[node_id] = crumbs[0].id
    shown_pages = graph.visible_ids(sorted(set(pages.values())))
    pages = {b: page for b, page in pages.items() if page in shown_pages}
    if not pages:
        return dense, {}
    from ctx.assemble import warm

    texts = graph.block_texts(list(pages))
    found = warm.passages_of(graph, sorted(set(pages.values())))
    folded = {p.id: fold_spaces(p.text) for rows in found.values() for p in rows}
    lent: dict[int, tuple[int, str]] = {}  # passage id -> (its best block's rank, its page)
    blocks: dict[int, tuple[str, ...]] = {}  # passage id -> its best block's text, folded
    for rank, node_id in enumerate(ranked, start=1):
        page = pages.get(node_id)
        text = fold_spaces(texts.get(node_id, ("", ""))[0])
        if page is None or not text:
            continue
        holder = next((p.id for p in found.get(page, []) if text in folded[p.id]), None)
        if holder is None:
            continue
        if holder not in lent:
            lent[holder] = (rank, page)
        # Every block of the passage among the nearest, not only the one that lent the rank:
        # which of a day's entries answers, the nearest of them says no better than the next
        # (memory set 19, "What is the cut-off for my two-wheeler?": the bike shop's deadline
        # was another of the passage's blocks among the nearest, not the one that lent it).
        blocks[holder] = (*blocks.get(holder, ()), text)
    if not lent:
        return dense, {}
    own = {pid: rank for rank, pid in enumerate(dense, start=1)}
    node_of = dict(dense) | {pid: page for pid, (_, page) in lent.items()}
    worth = {pid: (1.0 / (RRF_K + own[pid]) if pid in own else 0.0)
             + (1.0 / (RRF_K + lent[pid][0]) if pid in lent else 0.0) for pid in node_of}
    order = sorted(node_of, key=lambda pid: (-worth[pid], own.get(pid, len(own) + 1), pid))
    chosen = {pid: node_of[pid] for pid in order[:pool]}
    return chosen, {pid: found for pid, found in blocks.items() if pid in chosen}


def _nearest_nodes(index: Any, vector: Any, k: int) -> list[tuple[str, float]]:
    """``index.nearest(vector, k)``; over an exact matrix, its product on one thread: a BLAS
    product of a few thousand rows spread over threads cost ~60 ms of CPU a build in spinning
    threads for ~1 ms of arithmetic (set 10: 85 -> 145 ms CPU a build)."""
    import numpy as np

    from ctx.semantic.search import VectorIndex

    if not isinstance(index, VectorIndex) or not index.ids or k <= 0:
        return index.nearest(vector, k)
    sims = np.einsum("ij,j->i", index.matrix, np.asarray(vector, dtype=np.float32))
    k = min(k, len(sims))
    top = np.argpartition(-sims, k - 1)[: min(len(sims), k + 8)] if k < len(sims) else np.arange(len(sims))
    ranked = sorted((-float(sims[i]), index.ids[i]) for i in top)[:k]
    return [(node_id, -neg) for neg, node_id in ranked]


def fold_spaces(text: str) -> str:
    """``text`` case-folded with its white space made single spaces: how a day page's block is
    found in its page's passage (``_by_blocks``), and its paragraph in the core (``passage_view``)."""
    return " ".join(text.casefold().split())


def question_parts(text: str) -> list[str]:
    """The question's parts, in order: its clauses (split at question marks, semicolons, commas
    and joining conjunctions), a clause of fewer than ``MIN_PART_WORDS`` content words kept with
    the one before it (or after it, first). A question of one clause is one part."""
    parts: list[str] = []
    for piece in (p.strip() for p in _CLAUSE.split(text)):
        if not piece:
            continue
        if parts and (len(_content(parts[-1])) < MIN_PART_WORDS or len(_content(piece)) < MIN_PART_WORDS):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    return parts or [text]


def _content(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def words_held(graph: "GraphReader", text: str, hits: list["PassageHit"]) -> dict[int, float]:
    """Passage id -> the largest share of one part's content words (``question_parts``) the
    passage holds, its heading path included, words compared as the stemmed index cuts them."""
    return {pid: max(shares) for pid, shares in part_shares(graph, text, hits).items()}


def part_shares(graph: "GraphReader", text: str, hits: list["PassageHit"]) -> dict[int, list[float]]:
    """Passage id -> the share of each part's content words the passage holds (``words_held``)."""
    from ctx.assemble import warm
    from ctx.store import word_cover

    words = query_terms(text)
    parts = [[w for w in query_terms(part) if w in words] or words for part in question_parts(text)]
    found = warm.passages_of(graph, list(dict.fromkeys(h.node_id for h in hits)))
    by_id = {p.id: p for rows in found.values() for p in rows}
    read = [h.id for h in hits if h.id in by_id]
    held = word_cover(words, [("", "\n".join([*by_id[pid].heading, by_id[pid].text])) for pid in read]).held
    return {pid: [len(got.intersection(part)) / len(part) for part in parts]
            for pid, got in zip(read, held, strict=True)}


def _floor_by_words(
    scores: dict[int, float], graph: "GraphReader", text: str, bm25: list["PassageHit"],
    dense: dict[int, str], unvectored: set[int],
) -> None:
    """Where full text is sure, the vectors may not bury a passage. RRF adds each passage's two
    reciprocal ranks, so a passage full text ranks first and the vectors miss (a chat passage
    whose answering line is diluted by the lines around it; a two-part question whose one vector
    sits between its parts) fell below passages both rank middling, and the graph with vectors
    packed worse text than the same graph without them (issue 23). A passage holding every word
    of a part of the question (``question_parts``) counts as ranked by meaning no lower than
    full text ranks it; passages the vectors rank higher are unchanged. So does one of full
    text's first ``SURE_FIRST`` holding at least half of a part and the most of it any passage
    holds: an answer does not repeat the question's own words ("Who **took over** X" answered
    by "Hugo has X"), and the vectors ranked such answers 20th-155th (memory11, docs/scale.md).
    Requiring the most of the part keeps chatter out that holds half of it beside the answer.

    Not a share alone: lifting a passage by the cube of the share of a part it holds lifted help
    pages holding four of a question's six words over the page the vectors found (bench_facts
    with embeddings 0.877 -> 0.870, idf-weighted shares 0.874; docs/scale.md)."""
    by_meaning = {pid: 1.0 / (RRF_K + rank) for rank, pid in enumerate(dense, start=1)}
    lifts = {hit.id: lift for rank, hit in enumerate(bm25[:SURE_DEPTH], start=1)
             if hit.id not in unvectored and (lift := 1.0 / (RRF_K + rank) - by_meaning.get(hit.id, 0.0)) > 0}
    if not lifts:
        return
    # Once per build: the resolver and the collector both rank the question's passages.
    read = bm25[:SURE_DEPTH]
    shares = once(("part_shares", text, tuple(h.id for h in read), graph.include_private),
                  lambda: part_shares(graph, text, read))
    parts = len(next(iter(shares.values()), []))
    best = [max((got[i] for got in shares.values()), default=0.0) for i in range(parts)]
    first = {hit.id for hit in bm25[:SURE_FIRST]}
    for pid, lift in lifts.items():
        got = shares.get(pid, [])
        if any(share >= 1.0 for share in got) or (pid in first and any(
                share >= HALF and share >= best[i] for i, share in enumerate(got))):
            scores[pid] += lift


def _wide_by_parts(scores: dict[int, float], graph: "GraphReader", text: str, bm25: list["PassageHit"]) -> None:
    """Wide before deep for a question of several parts (``question_parts``), where full text
    alone ranks: a part's one whole holder among full text's first ``SURE_DEPTH`` passages comes
    first. That is the only passage with a line holding every word of the part (its heading path
    counted on every line), the part ``PART_WORDS`` words long or more (words every part shares
    left out), in a log (``note_shape``). BM25 sums the question's words over a passage, so the
    part whose words are frequent in the graph ("the book for the book club") filled the first
    ranks with its passages, and the other part's answer ("the account for the savings plan is
    going to be an index fund", every word of its part in one sentence) sank below them
    (memory_logs set 32, s32-161: 18th, shown at no budget up to 2,000 tokens). Words are
    counted together on one line, not anywhere in the passage: a chat passage holds "savings"
    and "account" in one message and "plan" in another about something else, and a changelog's
    list, one paragraph, holds any four words somewhere (bench_facts logseq-20 lost its answer to
    such a list counted by paragraph)."""
    parts = question_parts(text)
    if len(parts) < 2:
        return
    from ctx.assemble import matching_lines as ml
    from ctx.assemble import warm

    words = [frozenset(ml.fold(w) for w in query_terms(part)) for part in parts]
    # A word every part holds ("What is the deadline for X, and what is the deadline for Y?")
    # says nothing about which part a passage answers.
    shared = frozenset.intersection(*words)
    words = [part for w in words if len(part := w - shared) >= PART_WORDS]
    if not words:
        return
    read = bm25[:SURE_DEPTH]
    found = warm.passages_of(graph, list(dict.fromkeys(h.node_id for h in read)))
    by_id = {p.id: p for rows in found.values() for p in rows}
    terms = frozenset().union(*words)
    held: list[list[tuple[float, int]]] = [[] for _ in words]  # per part: (share, passage id)
    for hit in read:
        passage = by_id.get(hit.id)
        if passage is None:
            continue
        around = ml.held(" ".join(passage.heading), terms)
        bags = [around | ml.held(line, terms) for line in passage.text.splitlines() if line.strip()] or [around]
        for i, part in enumerate(words):
            held[i].append((max(len(bag & part) for bag in bags) / len(part), hit.id))
    top = max(scores.values())
    node_of = {h.id: h.node_id for h in read}
    for shares in held:
        best = [pid for s, pid in shares if s >= 1.0]
        # Only the one whole holder, of a log: lifted first, a part of two words held by a help
        # page's passing sentence ("up to the next heading", "keep PDFs"), or four words held
        # somewhere in a changelog's list counted as one paragraph, took the place of the page
        # that answers (bench_facts 0.807 -> 0.764 by paragraph, any part; 0.787 with parts of
        # three words; 0.807 by line, in logs). Among several holders (a topic every session names
        # by the same words) which answers is a coin toss, and they fill the first ranks already.
        if len(best) == 1 and _of_a_log(graph, node_of[best[0]], found.get(node_of[best[0]], [])):
            # First, before every passage it was not: at full text's best score exactly, a tie
            # with the first part's own equals went by node id.
            scores[best[0]] = top * (1.0 + 1e-6 * scores[best[0]] / top)


def _of_a_log(graph: "GraphReader", node_id: str, rows: list["StoredPassage"]) -> bool:
    from ctx.assemble.note_shape import is_log

    facts = graph.node_facts([node_id], with_fields=False)
    return bool(facts) and is_log(facts[0].title, [(p.heading, p.text) for p in rows], facts[0].type == "journal")
