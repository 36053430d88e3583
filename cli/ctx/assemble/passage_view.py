"""The build's view of passages: the topic's passage ranking and each shown node's pieces.

A free-text topic (not an id, title or alias) gets a passage ranking (``passage_rank``); every
candidate the packer may show then carries its passages with their relevance (``focus.Piece``),
so a long node enters the context as its relevant parts. An id or title topic has no ranking:
its nodes render the lens's way (whole, or cut by the lens's truncation strategy).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import Tally
from ctx.assemble.focus import REST_DECAY, Piece
from ctx.assemble.passage_rank import PassageRanking, fold_spaces, known_terms, query_terms, rank_passages
from ctx.assemble.resolve import PassageSearch, ResolvedTopic
from ctx.assemble.suggest import looks_like_a_name

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader
    from ctx.store.types import StoredPassage
    from ctx.assemble.counter import TokenCounter
    from ctx.assemble.matching_lines import Core
    from ctx.semantic.topic import TopicVector

EXACT = ("id", "title")
# A log's standing (its score as a share of the best member's) counts to this power beside its
# passages' own relevance, whoever ranked them (``packing_order.passage_units``); a page's to the
# power 1. At 1 a log ranked below the first lost its answering entry to the first
# log's weak ones (a lab notebook's 4th note, share 0.50: its answering entry, relevance 0.96, was
# worth 0.48, below the first note's entries at 0.50-0.71 that did not answer); at 0 (relevance
# alone) a day page's standing from its whole text was lost. Memory sets without embeddings at
# 1,000 / 2,000 / 4,000 tokens, main then 0.5 then 0.25: set 6 0.683 / 0.793 / 0.868, 0.724 /
# 0.827 / 0.882, 0.733 / 0.827 / 0.891; set 7 0.709 / 0.793 / 0.824, 0.743 / 0.793 / 0.833, 0.734
# / 0.779 / 0.842 (0.25 loses two questions answered in other words, found through their note's
# standing). Damping every note so cost help pages their further sections (bench_facts 0.791 ->
# 0.768): only logs are damped (``note_shape``; docs/scale.md, memory14 and memory15).
STANDING = 0.5


def free_text(resolved: list[ResolvedTopic]) -> str:
    """The topics that are questions or phrases rather than names of nodes, joined."""
    return " ".join(r.topic.strip() for r in resolved if r.how not in EXACT and r.topic.strip())


def passage_ranking(
    graph: GraphReader, resolved: list[ResolvedTopic], topic: "TopicVector | None"
) -> PassageRanking | None:
    """The free-text topics' passage ranking (all of them as one query); None when every topic
    names a node or the graph has no passages."""
    text = free_text(resolved)
    if not text or not graph.has_passages():
        return None
    from ctx.assemble.kept_rankings import kept, topic_key

    return kept(graph, ("passages", text, topic_key(topic)), lambda: rank_passages(graph, text, topic))


def passage_searcher(reader: GraphReader) -> PassageSearch | None:
    """Per-topic passage rankings for the resolver, each computed once per build; None for a
    graph without passages (resolution then searches whole nodes)."""
    if not reader.has_passages():
        return None
    cache: dict[tuple[str, str, bool], PassageRanking] = {}

    def search(graph: GraphReader, text: str, retrieval: str) -> PassageRanking:
        key = (text, retrieval, graph.include_private)
        if key not in cache:
            from ctx.assemble.kept_rankings import kept

            # The same question at another depth or budget finds its ranking kept (warm only).
            cache[key] = kept(graph, ("seed passages", text, retrieval), lambda: rank(graph, text, retrieval))
        return cache[key]

    return search


def rank(graph: GraphReader, text: str, retrieval: str) -> PassageRanking:
    """A topic's passages ranked for its seeds (``passage_searcher``)."""
    if looks_like_a_name(text) and not _a_word_is_known(graph, text, retrieval):
        # A short topic none of whose words occur anywhere ("Canvs") is a typo, not a question
        # to answer by meaning alone: nothing matches, and the build suggests titles instead.
        return PassageRanking(method="none")
    topic = None
    if retrieval != "fts":
        from ctx.assemble.similarity import text_vector

        topic = text_vector(graph, text)
    return rank_passages(graph, text, topic, mode=retrieval)


def _a_word_is_known(graph: GraphReader, text: str, retrieval: str) -> bool:
    """Whether some word of ``text`` occurs in a passage the reader may see. Where full text ranks
    the topic anyway, a passage it found says so: that ranking is made once per build
    (``build_memo``) and the ranking below takes it, where asking the index word by word first
    cost ~1 ms of a 100k-node build. A passage found by the exact index is found by the stemmed
    one too (the same texts; a word's stem matches wherever the word does)."""
    if retrieval != "vector" and rank_passages(graph, text, None, mode="fts").lexical:
        return True
    return bool(known_terms(graph, query_terms(text)))


def attach_pieces(
    graph: GraphReader, candidates: list[Candidate], ranking: PassageRanking, counter: "TokenCounter"
) -> None:
    from ctx.assemble.block_refs import has_refs, resolve

    from ctx.assemble import warm

    found = warm.passages_of(graph, [c.id for c in candidates])
    # A passage shows block references as the text they name, as the note's whole text does.
    referring = [p for rows in found.values() for p in rows if has_refs(p.text)]
    shown = dict(zip((p.id for p in referring), resolve([p.text for p in referring], graph.block_texts)))
    for c in candidates:
        rows = found.get(c.id)
        if not rows:
            continue
        texts = [shown.get(p.id, p.text) for p in rows]
        sectioned = any(p.heading for p in rows)
        log = _is_log(c, rows, texts)
        standing = STANDING if log else 1.0
        # A log is cut to its entries' cores and its standing damped, sections or not, with
        # vectors or without: shown whole, an entry's unrelated neighbours take the room of the
        # next entries' answers, and at full standing the first log's rests outbid the next
        # logs' answering cores, either way (``_is_log``).
        cores = _cores(texts, [ranking.passages.get(p.id, 0.0) for p in rows], ranking.terms, sectioned,
                       items=c.type == "journal", headings=[p.heading for p in rows] if log else None,
                       found=[ranking.found_blocks.get(p.id, ()) for p in rows] if ranking.found_blocks else None)
        c.pieces = []
        for i, (p, text) in enumerate(zip(rows, texts, strict=True)):
            # Counted when packing asks, and only as far as it asks (``counter.Tally``): most of a
            # new question's passages are only ever tried against less room than they take.
            tokens = Tally(text, counter)
            cut = cores.get(i)
            core = cut.text if cut is not None else None
            core_tokens = counter.count(core) if core is not None else 0
            if core is not None and tokens.within(core_tokens) is not None:
                core, core_tokens = None, 0  # the core would not be shorter than the passage
            relevance = ranking.passages.get(p.id, 0.0)
            if log and ranking.floors:
                # With vectors a log's entry is worth no less than either ranking alone makes of
                # it: rank fusion flattened full text's sure answers among entries sharing the
                # question's words (``passage_rank.at_least_alone``; memory20).
                relevance = max(relevance, ranking.floors.get(p.id, 0.0))
            # The rest of a passage is worth less than its core as far as the topic's words placed
            # the passage surely: the best match's rest ``REST_DECAY`` of it, a weak match's
            # (an open question's incidental word) nearly all of it. A passage only the vectors
            # found matched by meaning: its words do not say which paragraph answers at all.
            rest_worth = 1.0 - (1.0 - REST_DECAY) * relevance if p.id in ranking.lexical else 1.0
            if core is not None and ranking.found_blocks.get(p.id):
                # Unless its own paragraphs' vectors found it (``passage_rank._by_paragraphs``):
                # they say which paragraphs answer, as the words do, and the core holds them; the
                # rest is the paragraphs they did not place among the nearest.
                rest_worth = min(rest_worth, 1.0 - (1.0 - REST_DECAY) * relevance)
            if log and "vectors" not in ranking.method:
                # Without vectors a log's rest is worth ``REST_DECAY`` of its passage however
                # weakly the words matched: the rest is the entries beside the matching ones, and
                # on the memory sets they held 3 of the 308 evidence paragraphs ctx showed at
                # 4,000 tokens (sets 1 and 24), yet took 32% of the text at 1,000 tokens and 57% at
                # 4,000 (set 24), kept at up to 0.9 of a weak match's worth. Priced so, a two-part
                # question's first part's weak rest came before the second part's answering core
                # (memory48, docs/scale.md).
                rest_worth = REST_DECAY
            if cut is not None and cut.sections:
                # The core is a section about the topic (a meeting's agenda item) whole; the rest
                # is the passage's next sections, other items holding no word of the question the
                # core lacks: they come last, after every note's matching text, as a day page's
                # other entries do (memory_logs sets 1 and 31 at 4,000 tokens: two more answers).
                rest_worth = 0.0
            if c.type == "journal":
                # A day page's other entries are blocks of their own, each a node ranked on its
                # own words: beside the matching ones they say nothing more, so they come last
                # (a loose budget still shows them), after every other note's matching text.
                rest_worth = 0.0
            wide = cut.wide if cut is not None and core is not None else None
            wide_tokens = counter.count(wide) if wide is not None else 0
            # Where full text alone ranked, a file log stands no lower than its best passage says
            # (``packing_order.passage_units``): with vectors the embedded gates fell (bench_facts
            # with embeddings 0.881 -> 0.851; memory set 4 at 1,000 tokens 0.811 -> 0.802), and a
            # day page's standing comes from its blocks (memory set 41, s41-052; memory43).
            floored = log and "vectors" not in ranking.method and c.type != "journal"
            c.pieces.append(Piece(p.ord, p.heading, text, tokens, relevance, core, core_tokens, rest_worth, standing,
                                  wide, wide_tokens, floored))


def _is_log(c: Candidate, rows: list["StoredPassage"], texts: list[str]) -> bool:
    """Whether ``c`` reads as a log of unrelated entries (``note_shape``), not a page about one
    thing. Its standing counts to the power ``STANDING`` beside its passages' relevance, with
    vectors or without. (Damped with vectors too once its entries were cut to their cores: before
    that, memory sets 7, 8 and 14 lost evidence at 1,000 tokens damped, memory14 and memory15;
    after it, the first log's rests at full standing outbid every later log's answering core, and
    the embedded graph fell below the same graph without vectors at 1,000 tokens: docs/scale.md,
    memory18.)"""
    from ctx.assemble.note_shape import is_log

    return is_log(c.title, [(p.heading, text) for p, text in zip(rows, texts, strict=True)], c.type == "journal")


def _in_topic_section(paras: list[str], path: tuple[str, ...], weight: dict[str, float]) -> bool:
    """Whether a heading of the passage's path names the topic and the passage does not open on
    that heading: its level unknown, every heading inside may be a step under it, so the passage
    stays whole. A passage opening on its own section's heading is cut by ``matching_lines.core``,
    which reads the levels (that section whole, the next agenda item in the passage not)."""
    from ctx.assemble import matching_lines as ml

    named = [h for h in path if ml.words_of(h) & weight.keys()]
    if not named:
        return False
    opens = bool(paras) and ml.is_heading(paras[0]) and paras[0].lstrip(" #").split("\n", 1)[0].strip() == path[-1]
    return not (opens and named == [path[-1]])


def _cores(
    texts: list[str], relevance: list[float], terms: tuple[str, ...], sectioned: bool, items: bool = False,
    headings: "list[tuple[str, ...]] | None" = None, found: "list[tuple[str, ...]] | None" = None,
) -> dict[int, Core]:
    """Index -> the core of each matched passage of one note (``matching_lines``), for a long note
    (more than one passage) under no heading at all, or a log (``note_shape``) in sections;
    ``sectioned``: some passage has a heading path; ``items``: an outliner's day page, whose
    entries are its top-level items; ``headings``: a log's passages' heading paths, None for a
    note read as a page. A note of one passage is already the size of a passage, and
    the packer values it by the node's own score, whole (``packing_order.passage_units``):
    cutting it would only trade its text for more notes' cores where it would have fitted whole.

    A page in sections keeps its passages whole: a section's later paragraphs carry what its
    first introduces. A log's sections are its entries (a lab notebook's "### 17:22", a mail
    digest's "#### Message from Kaja"), each a run of unrelated paragraphs like an unheaded log's:
    shown whole, the answer's neighbours took the room of the next entries' answers (memory_logs2
    sets 5, 9, 21, 22: chunk BM25 above ctx at 1,000 and 2,000 tokens; docs/scale.md, memory17).
    Its cores keep the heading each kept paragraph sits under (when, from whom); a passage in a
    section whose heading, at any level, names the topic (a meeting's agenda item) is about it:
    only that section stays whole, and the passage's next sections (the next agenda items) are cut
    to their cores (memory19's round, where full text alone ranked). With vectors too: there a
    passage holding a section about the topic was shown whole, and a meeting log's first passages
    took the room of the next meetings' answering sections ("What quotes did we get for the
    autumn offsite, and from whom?", memory set 31 at 1,000 tokens: the second answer left out
    where the graph without vectors shows it; file-log multi-part questions were 19 of the 23
    questions the embedded build lost at 1,000 tokens on sets 1, 30-32; docs/scale.md, memory36).

    ``found``: per passage, the texts (folded) of the outline blocks whose own vectors found it
    (``PassageRanking.found_blocks``): the entries holding them are kept in its core too. A day
    page's core was its entries holding the question's words, and an open question asked in other
    words ("What figure did Ugo get when looking at what keeps the radiators warm?") got the entry
    "Drove Ugo to the station" while the one its block's vector ranked first ("Reading for the
    boiler from Ugo - pressure 355.4 bar") stayed in the rest, which a day page shows last: a
    passage the vectors ranked first was in every context and its answer in none (memory set 40)."""
    from ctx.assemble import matching_lines as ml

    log = headings is not None
    if len(texts) < 2 or (sectioned and not log) or not terms or not any(r > 0 for r in relevance):
        return {}
    paragraphs = [ml.paragraphs(text, items) for text in texts]
    if not log and any(ml.is_heading(para) for paras in paragraphs for para in paras):
        return {}  # a page in sections: its passages are shown whole
    folded = frozenset(ml.fold(t) for t in terms)  # only these words are ever compared
    bags = [ml.held(para, folded) for paras in paragraphs for para in paras]
    weight = ml.weights(terms, bags)
    out: dict[int, Core] = {}
    for i, (text, r) in enumerate(zip(texts, relevance, strict=True)):
        if headings is not None and _in_topic_section(paragraphs[i], headings[i], weight):
            # It sits in a section about the topic, at any level (a tips page's "Open Dendron from
            # terminal" over its "Windows" / "CMD" steps: bench_facts dendron-13 lost the step
            # after the matching one when only the nearest heading was asked; ``matching_lines.core``).
            continue
        blocks = found[i] if found is not None else ()
        also = (lambda paras, blocks=blocks: {j for j, para in enumerate(paras)
                                               if any(b in fold_spaces(para) for b in blocks)}) if blocks else None
        if r > 0 and (core := ml.core(text, weight, items, True, also)) is not None:
            if items:
                # A day page's entries are a line each, and a name or a thing recurs in several
                # of them ("Drove Ines to the station", "Ines noted the fuel use of the car as
                # ..."): the fewest covering the question's words kept the first, and a day
                # page's other entries come last, so the entry that answered was in no context
                # at any budget (memory sets 10-14, 41, 42 at 4,000 tokens, where chunk BM25
                # packs it). Every entry holding a word is offered after the cores, before the
                # other entries (``focus.WIDE_WORTH``); kept in the core itself, it cost the
                # cores of other days at 1,000 and 2,000 tokens. With vectors too, beside the
                # entries they found (``also``, in the core): offered only where full text alone
                # ranked, an open question's answer that holds only its name ("Reading for the
                # bike from Sander - ..." for "What figure did Sander get when looking at my
                # two-wheeler?"), its block not among the nearest, was in the graph's context
                # without vectors at 4,000 tokens and not in the embedded graph's (11 of 13 open
                # questions the embedded build lost at 4,000 tokens over memory sets 10-19, 40-42;
                # docs/scale.md, memory36).
                wide = ml.core(text, weight, items, True, also, every=True)
                if wide is not None and wide.text != core.text:
                    core = dataclasses.replace(core, wide=wide.text)
            out[i] = core
    return out
