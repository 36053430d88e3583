"""Passages on PostgreSQL: the same split as SQLite's (``ctx.store.passages``), written by COPY.

What a passage is (its span, heading path, ancestors' titles, text hash) comes from the same
engine-neutral functions, so both engines store the same passages with the same ids: ids are
given here, in the order nodes are split (their insertion order), from the largest id so far,
as SQLite gives an INTEGER PRIMARY KEY.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctx.store.passage_reads import _VERSION_KEY, HEADING_SEP, embed_text, indexed_title, passage_hash
from ctx.store.passages import BATCH, CONTEXT_DEPTH, _context, _with_outline
from ctx.store.postgres import tokens
from ctx.store.vectors import _query_key as query_key

if TYPE_CHECKING:
    import psycopg

__all__ = ["embed_text", "query_key", "refresh"]


def refresh(conn: "psycopg.Connection[Any]", progress: Callable[[int, int], None] | None = None) -> int:
    """Split every node not split by the current splitter (inside the caller's transaction)."""
    from ctx.passages import SPLITTER_VERSION

    _reset_if_splitter_changed(conn, SPLITTER_VERSION)
    _index_nodes(conn)
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS ctx_stage_passages (id bigint, node_id text, ord integer, start integer,"
        ' "end" integer, context text, heading text, own_text text, tokens integer, hash text, stemmed text,'
        " stemmed_tf text, exact text, exact_tf text, fts_length integer) ON COMMIT DROP"
    )
    done = 0
    titles: dict[str, tuple[str, str | None]] = {}
    total = int(conn.execute("SELECT count(*) FROM nodes WHERE split = 0").fetchone()[0])  # type: ignore[index]
    next_id = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM passages").fetchone()[0]) + 1  # type: ignore[index]
    while True:
        rows = conn.execute(
            "SELECT seq, id, title, body, parent_id, type FROM nodes WHERE split = 0 ORDER BY seq LIMIT %s", (BATCH,)
        ).fetchall()
        if not rows:
            return done
        conn.execute("DELETE FROM passages WHERE node_id = ANY(%s)", ([r[1] for r in rows],))
        _load_ancestors(conn, [r[4] for r in rows if r[4]], titles)
        out = _split_rows(conn, rows, titles, next_id)
        next_id += len(out)
        if out:
            _write_passages(conn, out)
        conn.execute("UPDATE nodes SET split = %s WHERE seq = ANY(%s)", (SPLITTER_VERSION, [r[0] for r in rows]))
        done += len(rows)
        if progress is not None:
            progress(done, total)


def _reset_if_splitter_changed(conn: "psycopg.Connection[Any]", version: int) -> None:
    """A new splitter splits every node again."""
    row = conn.execute("SELECT value FROM meta WHERE key = %s", (_VERSION_KEY,)).fetchone()
    if row is None or int(row[0]) != version:
        conn.execute("UPDATE nodes SET split = 0 WHERE split <> 0")
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (_VERSION_KEY, str(version)),
        )


def _split_rows(
    conn: "psycopg.Connection[Any]", rows: list[Any], titles: dict[str, tuple[str, str | None]], next_id: int
) -> list[tuple[Any, ...]]:
    """The passages of a batch of nodes, numbered from ``next_id``: (id, node_id, ord, start, end,
    context, heading, own_text, tokens, hash, indexed title, text). A page's blocks are passages of
    the page (its outline), not of their own."""
    from ctx.passages import split
    from ctx.store.postgres.reader import PostgresReader

    public: Any = PostgresReader(conn)  # duck-typed for _with_outline; what a reader without private access sees of an outline page
    pages = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT parent_id FROM nodes WHERE type = 'block' AND parent_id = ANY(%s)", ([r[1] for r in rows],)
        )
    }
    out: list[tuple[Any, ...]] = []
    for _, node_id, title, body, parent_id, node_type in rows:
        if node_type == "block" and parent_id:
            continue
        context = _context(parent_id, titles)
        text = body or ""
        outline = node_id in pages
        if outline:
            text = _with_outline(public, node_id, text)
        indexed = indexed_title(title, body or "")
        for p in split(text, title):
            heading = HEADING_SEP.join(p.heading)
            digest = passage_hash(embed_text(title, context, heading, p.text))
            own = None if not outline and p.text == text[p.start : p.end].strip("\n") else p.text
            out.append((next_id + len(out), node_id, p.ord, p.start, p.end, context, heading, own, p.tokens, digest,
                        indexed, p.text))
    return out


def _write_passages(conn: "psycopg.Connection[Any]", out: list[tuple[Any, ...]]) -> None:
    """Both full-text indexes of each passage, cut by FTS5's tokenizers (as SQLite's
    passages_fts and passages_exact read title, ancestors, heading path and text), and the
    passages themselves, staged by COPY."""
    texts = [(r[10], r[5], r[6], r[11]) for r in out]
    stemmed = tokens.index_rows(tokens.STEMMED, texts)
    exact = tokens.index_rows(tokens.EXACT, texts)
    conn.execute("TRUNCATE ctx_stage_passages")
    with conn.cursor().copy(
        'COPY ctx_stage_passages (id, node_id, ord, start, "end", context, heading, own_text, tokens, hash,'
        " stemmed, stemmed_tf, exact, exact_tf, fts_length) FROM STDIN"
    ) as copy:
        for item, s, e in zip(out, stemmed, exact, strict=True):
            copy.write_row((*item[:10], s.vector, s.tf, e.vector, e.tf, s.length))
    conn.execute(
        'INSERT INTO passages (id, node_id, ord, start, "end", context, heading, own_text, tokens, hash,'
        " stemmed, stemmed_tf, exact, exact_tf, fts_length)"
        ' SELECT id, node_id, ord, start, "end", context, heading, own_text, tokens, hash,'
        " stemmed::tsvector, stemmed_tf::jsonb, exact::tsvector, exact_tf::jsonb, fts_length"
        " FROM ctx_stage_passages ORDER BY id"
    )


def _index_nodes(conn: "psycopg.Connection[Any]") -> None:
    """Nodes' own full-text index rows where they are missing: nodes written before the index
    held FTS5's tokens (PostgreSQL migration 12). New nodes are indexed as they are written."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS ctx_stage_node_index (seq bigint, fts text, fts_tf text, fts_length integer)"
        " ON COMMIT DROP"
    )
    while True:
        rows = conn.execute(
            "SELECT seq, title, aliases, body FROM nodes WHERE fts_tf IS NULL ORDER BY seq LIMIT %s", (BATCH,)
        ).fetchall()
        if not rows:
            return
        indexed = tokens.index_rows(tokens.NODES, [r[1:] for r in rows])
        conn.execute("TRUNCATE ctx_stage_node_index")
        with conn.cursor().copy("COPY ctx_stage_node_index (seq, fts, fts_tf, fts_length) FROM STDIN") as copy:
            for row, x in zip(rows, indexed, strict=True):
                copy.write_row((row[0], x.vector, x.tf, x.length))
        conn.execute(
            "UPDATE nodes SET fts = s.fts::tsvector, fts_tf = s.fts_tf::jsonb, fts_length = s.fts_length"
            " FROM ctx_stage_node_index s WHERE nodes.seq = s.seq"
        )


def _load_ancestors(conn: "psycopg.Connection[Any]", parents: list[str], titles: dict[str, tuple[str, str | None]]) -> None:
    wanted = {p for p in parents if p not in titles}
    for _ in range(CONTEXT_DEPTH):
        if not wanted:
            return
        found: set[str] = set()
        for node_id, title, parent in conn.execute(
            "SELECT id, title, parent_id FROM nodes WHERE id = ANY(%s)", (sorted(wanted),)
        ):
            titles[node_id] = (title, parent)
            found.add(node_id)
        for missing in wanted - found:
            titles[missing] = ("", None)
        wanted = {p for node_id in found for p in [titles[node_id][1]] if p and p not in titles}
