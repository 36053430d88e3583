"""Search relevance for lens ``semantic.rank: fused``: full-text and vector rankings fused by rank.

Cosine similarity alone loses what BM25 knows (names, rare words); fusing the two rankings (RRF)
keeps both without calibrating their scores. With ``semantic.feedback: N`` the full-text query is
widened by the names in the first N seeds' text (pseudo-relevance feedback): a multi-hop question
names the first entity, its note names the second ("Brand" -> "Henrik Ibsen"), and the note about
the second shares that name even when it shares no word with the question. A capitalised word
found in hundreds of notes names nothing in particular and is left out. The result is each
node's fused score as a share of the best one, in (0, 1]; it fills the ``relevance`` score term
and chooses the extras the walk did not reach.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ctx.semantic.fusion import POOL
from ctx.stopwords import STOPWORDS, content_words

if TYPE_CHECKING:
    from ctx.assemble import BuildRequest
    from ctx.assemble.passage_rank import PassageRanking
    from ctx.lenses import Lens
    from ctx.semantic.topic import TopicVector
    from ctx.store.protocols import GraphReader

_HEADING = re.compile(r"\A#[^\n]*\n")
_NAME = re.compile(r"(?<![\w'’-])[^\W\d_][\w'’-]*", re.UNICODE)
_WORD = re.compile(r"\w+", re.UNICODE)


def names_in(text: str, known: set[str]) -> list[str]:
    """Capitalised words of ``text`` not among ``known`` (lowercase), once each, in order."""
    out: dict[str, None] = {}
    for match in _NAME.finditer(_HEADING.sub("", text.strip(), count=1)):
        word = match.group().strip("'’-")
        if len(word) > 1 and word[0].isupper() and word.lower() not in known and word.lower() not in STOPWORDS:
            out.setdefault(word, None)
    return list(out)


# A name in more notes than this does not single out the note about it, and ranking every note
# that has any of the names costs more than the rest of a build: in a generated 100k-note graph
# the capitalised words of two notes (Back, One, Value, ...) matched nearly every note, and BM25
# ranked them all (~300 ms). A graph of up to twice this many notes loses only words found in
# more than half of its notes, which BM25 weighs at next to nothing anyway.
FEEDBACK_MAX_NOTES = 500


def feedback_query(graph: "GraphReader", topic: str, seeds: list[str], count: int) -> str:
    """The topic's content words, plus the names in the first ``count`` seeds' text that are in
    at most ``FEEDBACK_MAX_NOTES`` notes."""
    query = content_words(topic)
    if count <= 0 or not seeds:
        return query
    from ctx.assemble import warm

    known = {w.lower() for w in _WORD.findall(topic)}
    extra: list[str] = []
    for seed in seeds[:count]:
        for name in names_in(graph.bodies([seed]).get(seed, ""), known):
            known.add(name.lower())
            if warm.notes_matching(graph, name, at_most=FEEDBACK_MAX_NOTES + 1) <= FEEDBACK_MAX_NOTES:
                extra.append(name)
    return " ".join([query, *extra]) if extra else query


def _has_vectors(topic: "TopicVector | None") -> bool:
    return topic is not None and topic.vector is not None and topic.model is not None


def _vector_ranking(
    graph: "GraphReader", query: str, topic: "TopicVector", others: list[list[str]],
) -> tuple[list[str], set[str]]:
    """The nearest node vectors, and which nodes of the ``others`` rankings have no vector."""
    # Only here: the vector ranking loads numpy, which a graph without vectors never needs.
    from ctx.semantic.hybrid import fused_ranking

    assert topic.model is not None
    nearest = [h.id for h in fused_ranking(graph, query, topic, mode="vector")]
    # A note edited or added since the last `ctx embed` is not among the nearest vectors: it
    # counts as first there, so the other rankings alone place it (``semantic.fusion``).
    listed = set(nearest)
    unlisted = [i for r in others for i in r if i not in listed]
    return nearest, graph.unvectored_nodes(topic.model, unlisted) if nearest else set()


def _passages_by_meaning(ranking: "PassageRanking | None") -> bool:
    return ranking is not None and bool(ranking.nodes) and "vectors" in ranking.method


def fused_relevance(
    graph: "GraphReader",
    request: "BuildRequest",
    lens: "Lens",
    seeds: list[str],
    topic: "TopicVector | None",
    ranking: "PassageRanking | None" = None,
) -> dict[str, float] | None:
    """Each visible node in any ranking's top ``POOL`` -> fused score / best; None when there is
    nothing to rank by (no passage ranking and no vectors).

    The rankings: the topic's passage ranking by node (``passage_rank``), the nearest node
    vectors (unless the passages were ranked by meaning already), and full-text search widened by
    the seeds' names (feedback), fused by rank.
    """
    from ctx.semantic.fusion import reciprocal_rank_fusion

    has_passages = ranking is not None and bool(ranking.nodes)
    if not has_passages and not _has_vectors(topic):
        return None
    rankings: list[list[str]] = []
    if ranking is not None and has_passages:
        rankings.append(ranking.node_order()[:POOL])
    text = " ".join(t.strip() for t in request.topics if t.strip())
    query = feedback_query(graph, text, seeds, lens.semantic.feedback)
    if ranking is None or lens.semantic.feedback > 0:
        rankings.append([h.id for h in graph.search(query, limit=POOL, mode="or", snippets=False)])
    unseen: list[set[str] | None] = [None] * len(rankings)
    # The nearest node vectors join only where the passages were not ranked by meaning: a node's
    # vector sees the first ~256 word pieces of its note, so for a long note it speaks for the
    # opening, not for the passage that answers, and the passage ranking already places every
    # note by its nearest passage. On long multi-topic logs the node vectors let a session whose
    # opening reads like the question take the budget: the graph with vectors fell below itself
    # without them at 1,000 tokens (issue 23).
    if topic is not None and _has_vectors(topic) and not _passages_by_meaning(ranking):
        nearest, unvectored = _vector_ranking(graph, query, topic, rankings)
        # The vector ranking goes between the passages' and full text's, as it always has: RRF
        # adds in list order, and the same floats keep builds byte-identical.
        at = 1 if has_passages else 0
        rankings.insert(at, nearest)
        unseen.insert(at, unvectored)
    kept = [i for i, r in enumerate(rankings) if r]
    fused = reciprocal_rank_fusion(
        [rankings[i] for i in kept], k=lens.semantic.rrf_k, unseen=[unseen[i] for i in kept],
    )
    if not fused:
        return {}
    best = fused[0][1]
    return {node_id: round(score / best, 6) for node_id, score in fused}
