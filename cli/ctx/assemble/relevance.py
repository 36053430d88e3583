"""Search relevance for lens ``semantic.rank: fused``: full-text and vector rankings fused by rank.

Cosine similarity alone loses what BM25 knows (names, rare words); fusing the two rankings (RRF)
keeps both without calibrating their scores. With ``semantic.feedback: N`` the full-text query is
widened by the names in the first N seeds' text (pseudo-relevance feedback): a multi-hop question
names the first entity, its note names the second ("Brand" -> "Henrik Ibsen"), and the note about
the second shares that name even when it shares no word with the question. The result is each
node's fused score as a share of the best one, in (0, 1]; it fills the ``relevance`` score term
and chooses the extras the walk did not reach.
"""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING

from ctx.stopwords import STOPWORDS, content_words

if TYPE_CHECKING:
    from ctx.assemble import BuildRequest
    from ctx.lenses import Lens
    from ctx.semantic.topic import TopicVector
    from ctx.store.view import GraphView

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


def feedback_query(conn: sqlite3.Connection, topic: str, seeds: list[str], count: int) -> str:
    """The topic's content words, plus the names in the first ``count`` seeds' text."""
    query = content_words(topic)
    if count <= 0 or not seeds:
        return query
    known = {w.lower() for w in _WORD.findall(topic)}
    extra: list[str] = []
    for seed in seeds[:count]:
        row = conn.execute("SELECT body FROM nodes WHERE id = ?", (seed,)).fetchone()
        for name in names_in(row[0] if row else "", known):
            known.add(name.lower())
            extra.append(name)
    return " ".join([query, *extra]) if extra else query


def fused_relevance(
    graph: "GraphView",
    request: "BuildRequest",
    lens: "Lens",
    seeds: list[str],
    topic: "TopicVector | None",
) -> dict[str, float] | None:
    """Each visible node in either ranking's top ``hybrid.POOL`` -> fused score / best; None without vectors."""
    from ctx.semantic.hybrid import fused_ranking

    if topic is None or topic.vector is None or topic.model is None:
        return None
    text = " ".join(t.strip() for t in request.topics if t.strip())
    query = feedback_query(graph.conn, text, seeds, lens.semantic.feedback)
    fused = fused_ranking(graph, query, topic, k=lens.semantic.rrf_k)
    if not fused:
        return {}
    best = fused[0].score
    return {hit.id: round(hit.score / best, 6) for hit in fused}
