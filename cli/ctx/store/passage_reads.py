"""Reading passages: a node's passages, the passage indexes' full-text search, what a passage's
vector is computed from. Written by ``ctx.store.passages.refresh`` after every import.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Container, Iterable

from ctx.digest import text_digest
from ctx.passages import SPLITTER_VERSION
from ctx.store.batches import chunks
from ctx.store.types import PassageHit, StoredPassage
from ctx.store.fts import best_matches, rows_all_visible, schema_has, searched_indexes

_VERSION_KEY = "splitter_version"
HEADING_SEP = " > "


def embed_text(title: str, context: str, heading: str, text: str) -> str:
    """What a passage's vector is computed from: where it sits, then what it says."""
    where = [part for part in (context, title, heading) if part]
    # An outline block's title is its own first words: saying it twice only costs model input.
    if title and text.startswith(title[:40]):
        where = [part for part in where if part != title]
    label = HEADING_SEP.join(where)
    return f"{label}\n{text}" if label else text


def indexed_title(title: str, body: str) -> str:
    """The title a node's passages are indexed under: none where it is only the body's own first
    words (the whole body, or its opening cut to a title ending in "…", as Tana's and the outline
    and JSON importers name a node by its text). Such a title is no name for what the passage is
    about; indexed, its words counted twice and in the column weighted most. SQLite's
    ``passage_texts`` view applies the same rule (migration 18)."""
    if body == title or (title.endswith("…") and body.startswith(title[:-1])):
        return ""
    return title


def passage_hash(embedded: str) -> str:
    return text_digest(embedded)


def stale(conn: sqlite3.Connection) -> bool:
    """Whether some node still needs splitting (an older graph, or a changed splitter)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
    if row is None or int(row[0]) != SPLITTER_VERSION:
        return conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None
    return conn.execute("SELECT 1 FROM nodes WHERE split = 0 LIMIT 1").fetchone() is not None


def passages_of(
    conn: sqlite3.Connection, node_ids: Iterable[str], known: dict[tuple[str, str], bool] | None = None,
) -> dict[str, list[StoredPassage]]:
    """Every passage of the given nodes, in order (nodes without passages are absent). ``known``:
    the reader's answers about the schema (``fts.schema_has``).

    A passage's text is a span of its node's body, cut here from the body read once per node.
    Read through ``passage_texts``, each passage row loaded the whole body again and SQLite's
    ``substr`` walked it character by character to the span: a 250 KB single-file journal of
    300 passages cost ~0.65 s a read (a build reads a note's passages twice), where slicing once
    costs ~1 ms. The spans are the view's: ``own_text``, else the body's characters ``start`` to
    ``end`` with newlines trimmed from both ends (``tests/test_passage_reads.py``)."""
    ids = list(dict.fromkeys(node_ids))
    out: dict[str, list[StoredPassage]] = {}
    if _texts_view(conn, known) == "passages":
        _passages_holding_text(conn, ids, out)
        return out
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        at, body = None, ""
        # The body comes with a node's first passage only (SQLite reads a column when asked).
        for pid, node_id, ord_, heading, own, begin, end, tokens, digest, first_body in conn.execute(
            f'SELECT p.id, p.node_id, p.ord, p.heading, p.own_text, p.start, p."end", p.tokens, p.hash,'
            f" CASE WHEN p.ord = 0 THEN n.body END FROM passages p JOIN nodes n ON n.id = p.node_id"
            f" WHERE p.node_id IN ({','.join('?' * len(chunk))}) ORDER BY p.node_id, p.ord",
            chunk,
        ):
            if node_id != at:
                at = node_id
                body = first_body if ord_ == 0 else _body(conn, node_id)
            text = own if own is not None else body[begin:end].strip("\n")
            parts = tuple(heading.split(HEADING_SEP)) if heading else ()
            out.setdefault(node_id, []).append(StoredPassage(pid, node_id, ord_, parts, text, tokens, digest))
    return out


def span_texts(
    conn: sqlite3.Connection, spans: Iterable[tuple[int, str, str | None, int, int]],
) -> dict[int, tuple[str, str]]:
    """Passage id -> (its node's own title, its text) for ``spans``' (passage id, node id,
    ``own_text``, ``start``, ``end``) whose node exists: what ``passage_texts`` gives those rows
    with ``nodes.title`` beside it, as ``passages_of`` cuts it, each body read once (and only where
    a passage's text is a span of it). The caller reads ``spans`` and calls this in one read
    transaction (``transaction.savepoint``), so that no import lands between the spans and the
    bodies they are cut from."""
    by_node: dict[str, list[tuple[int, str | None, int, int]]] = {}
    for pid, node_id, own, begin, end in spans:
        by_node.setdefault(node_id, []).append((pid, own, begin, end))
    out: dict[int, tuple[str, str]] = {}
    # A window of nodes at a time: ``ctx embed``'s first run reads every passage of the graph.
    for chunk in chunks(sorted(by_node)):
        cut = [n for n in chunk if any(own is None for _, own, _, _ in by_node[n])]
        titles = dict(conn.execute(f"SELECT id, title FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk))
        bodies = dict(conn.execute(f"SELECT id, body FROM nodes WHERE id IN ({','.join('?' * len(cut))})", cut)) if cut else {}
        for node_id in chunk:
            if node_id not in titles:
                continue  # a passage whose node is gone: the view's join leaves it out
            title, body = titles[node_id], bodies.get(node_id) or ""
            for pid, own, begin, end in by_node[node_id]:
                out[pid] = (title, own if own is not None else body[begin:end].strip("\n"))
    return out


def sqlite_length(text: str) -> int:
    """SQLite's ``length()`` of a text: its characters before the first NUL, if any."""
    nul = text.find("\0")
    return len(text) if nul < 0 else nul


def _body(conn: sqlite3.Connection, node_id: str) -> str:
    """A node's body, for passages numbered from other than 0 (no graph ctx writes has them)."""
    row = conn.execute("SELECT body FROM nodes WHERE id = ?", (node_id,)).fetchone()
    return row[0] if row else ""


def _passages_holding_text(conn: sqlite3.Connection, ids: list[str], out: dict[str, list[StoredPassage]]) -> None:
    """``passages_of`` in a read-only graph from before migration 8, whose passages held their text."""
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for r in conn.execute(
            f"SELECT id, node_id, ord, heading, text, tokens, hash FROM passages"
            f" WHERE node_id IN ({','.join('?' * len(chunk))}) ORDER BY node_id, ord",
            chunk,
        ):
            heading = tuple(r[3].split(HEADING_SEP)) if r[3] else ()
            out.setdefault(r[1], []).append(StoredPassage(r[0], r[1], r[2], heading, r[4], r[5], r[6]))


def _texts_view(conn: sqlite3.Connection, known: dict[tuple[str, str], bool] | None = None) -> str:
    """Where passage texts are read: the view, or the passages themselves in a read-only graph
    from before migration 8 (they held their own text then)."""
    return "passage_texts" if schema_has(conn, "view", "passage_texts", known) else "passages"


# Column weights for BM25 (title, ancestors' titles, heading path, text): a word of the note's
# title or headings says more about what a passage is about than the same word in running text.
# In the exact index a title word counts most: a question names its subject, and the subject's
# own note has that name as its title.
STEMMED_WEIGHTS = (2.0, 1.0, 2.0, 1.0)
EXACT_WEIGHTS = (10.0, 5.0, 2.0, 1.0)


def has_passages(conn: sqlite3.Connection, *, visible_only: bool = False) -> bool:
    """Whether the graph holds a passage; with ``visible_only``, one of a node that is not private."""
    sql = "SELECT 1 FROM passages LIMIT 1"
    if visible_only:
        sql = "SELECT 1 FROM passages WHERE node_id NOT IN (SELECT id FROM nodes WHERE private = 1) LIMIT 1"
    try:
        return conn.execute(sql).fetchone() is not None
    except sqlite3.OperationalError:  # a read-only graph from before passages existed
        return False


def search(
    conn: sqlite3.Connection, terms: list[str], *, limit: int, include_private: bool, known: dict[tuple[str, str], bool] | None = None,
    visible: Container[str] | None = None,
) -> list[PassageHit]:
    """Passages matching ANY of ``terms`` (already free of function words), best first.

    The score adds each index's BM25 as a share of its best hit: stemming finds the other forms
    of a word, the exact index keeps a name from matching its look-alikes. ``known``: the
    reader's answers about the schema (``fts.schema_has``). ``visible``: every node the reader
    may see, where the caller holds them (``_owners``).
    """
    quoted = ['"' + t.replace('"', '""') + '"' for t in terms if t]
    if not quoted:
        return []
    query = " OR ".join(quoted)
    tables = (("passages_fts", STEMMED_WEIGHTS), ("passages_exact", EXACT_WEIGHTS))
    # Without private access, the public index alone (its statistics are the public notes');
    # with it, both, each scored by its own statistics. Each index ranks its matches alone
    # (``_best``); the nodes of the passages they keep are then read once for all of them.
    searched = {table: searched_indexes(conn, table, include_private, known) for table, _ in tables}
    # The phrases' counts in each stemmed index bound them in its exact twin (``fts.best_matches``),
    # ranked after it.
    counts: dict[str, dict[str, int]] = {}
    best: dict[str, list[tuple[int, float]] | None] = {}
    for table, weights in tables:
        for index in searched[table]:
            twin = _stemmed_twin(index)
            best[index] = _best(conn, index, weights, quoted, limit, include_private, known,
                                counts_at_most=counts.get(twin) if twin != index else None,
                                counted=counts.setdefault(index, {}))
    owners = _owners(conn, {pid for rows in best.values() if rows for pid, _ in rows}, visible)
    combined: dict[int, float] = {}
    node_of: dict[int, str] = {}
    for table, weights in tables:
        hits = sorted(
            (hit for index in searched[table]
             for hit in _owned(best[index], owners, include_private)
             or _joined(conn, index, weights, query, limit, include_private, best[index])),
            key=lambda hit: (-hit[2], hit[0]),
        )[:limit]
        if not hits:
            continue
        top = max(score for _, _, score in hits) or 1.0
        for pid, node_id, score in hits:
            combined[pid] = combined.get(pid, 0.0) + max(score, 0.0) / top
            node_of[pid] = node_id
    ranked = sorted(combined, key=lambda pid: (-combined[pid], pid))[:limit]
    return [PassageHit(pid, node_of[pid], combined[pid]) for pid in ranked]


def _bm25(
    conn: sqlite3.Connection, table: str, weights: tuple[float, ...], query: str, limit: int,
    include_private: bool, phrases: list[str] | None = None,
) -> list[tuple[int, str, float]]:
    """One index's hits for ``query`` (``phrases``: the phrases it joins by OR, if it does), as
    ``search`` takes them: ranked by the index alone where it can be, else by the joined query."""
    best = _best(conn, table, weights, phrases or [query], limit, include_private)
    owners = _owners(conn, {pid for pid, _ in best or ()})
    return _owned(best, owners, include_private) or _joined(conn, table, weights, query, limit, include_private, best)


def _stemmed_twin(index: str) -> str:
    """The stemmed index over the same rows as ``index`` (itself for a stemmed one): a row of the
    exact index matches a phrase only where its stemmed twin's row does."""
    return index.replace("passages_exact", "passages_fts", 1)


def _best(
    conn: sqlite3.Connection, table: str, weights: tuple[float, ...], phrases: list[str], limit: int,
    include_private: bool, known: dict[tuple[str, str], bool] | None = None, *,
    counts_at_most: dict[str, int] | None = None, counted: dict[str, int] | None = None,
) -> list[tuple[int, float]] | None:
    """The index's best ``limit`` (passage id, score) for ``phrases`` joined by OR, ranked by the
    index alone (its rowid is the passage id, the same tie-break): SQLite joins every match before
    it sorts, which cost as much as BM25 itself. None where the index holds rows the reader may
    not see (a graph from before the private indexes); [] for a term FTS5 refuses, or a graph from
    before passages (no match)."""
    if not rows_all_visible(conn, table, include_private, known):
        return None
    try:
        return best_matches(conn, table, ", ".join(str(w) for w in weights), phrases, limit, _passage_rows_at_most,
                            counts_at_most=counts_at_most, counted=counted)
    except sqlite3.OperationalError:
        return []


def _owners(
    conn: sqlite3.Connection, ids: set[int], visible: Container[str] | None = None,
) -> dict[int, tuple[str, int]] | None:
    """Passage id -> (node id, the node's privacy) for the passages among ``ids`` whose node
    exists; None where they cannot be read. The node's privacy from the walk's index, which holds
    it beside the id: the node's row would be read past its body (~1 ms more a question at 100k).

    ``visible``: every node the reader may see (a warm process's ``NodeDetails``, complete): the
    passages alone are read, and a passage whose node is not among them is left out, as the join
    leaves out a missing node and ``_owned`` a hidden one (the nodes' index was ~half of the
    ~1 ms this read cost a new 100k question)."""
    owner: dict[int, tuple[str, int]] = {}
    try:
        for chunk in chunks(sorted(ids)):
            marks = ",".join("?" * len(chunk))
            if visible is not None:
                for pid, node_id in conn.execute(f"SELECT id, node_id FROM passages WHERE id IN ({marks})", chunk):
                    if node_id in visible:
                        owner[pid] = (node_id, 0)
                continue
            try:
                rows = conn.execute(
                    "SELECT p.id, p.node_id, n.private FROM passages p JOIN nodes n INDEXED BY nodes_walked"
                    f" ON n.id = p.node_id WHERE p.id IN ({marks})", chunk,
                ).fetchall()
            except sqlite3.OperationalError:  # a graph from before that index (migration 7)
                rows = conn.execute(
                    f"SELECT p.id, p.node_id, n.private FROM passages p JOIN nodes n ON n.id = p.node_id"
                    f" WHERE p.id IN ({marks})", chunk,
                ).fetchall()
            owner.update((r[0], (r[1], r[2])) for r in rows)
    except sqlite3.OperationalError:
        return None
    return owner


def _owned(
    ranked: list[tuple[int, float]] | None, owners: dict[int, tuple[str, int]] | None, include_private: bool
) -> list[tuple[int, str, float]] | None:
    """``ranked`` with each passage's node; None where a passage has no node the reader may see
    (an index out of step with its table: the joined query leaves such rows out)."""
    if ranked is None or owners is None:
        return None
    out = []
    for pid, score in ranked:
        found = owners.get(pid)
        if found is None or (found[1] and not include_private):
            return None
        out.append((pid, found[0], float(score)))
    return out


def _joined(
    conn: sqlite3.Connection, table: str, weights: tuple[float, ...], query: str, limit: int,
    include_private: bool, ranked: list[tuple[int, float]] | None,
) -> list[tuple[int, str, float]]:
    """``query`` ranked over the index joined with the passages and nodes, where the index alone
    could not rank it (``_owned`` gave None); [] where the index found nothing or FTS5 refuses."""
    if ranked is not None and not ranked:
        return []
    columns = ", ".join(str(w) for w in weights)
    visible = "" if include_private else " AND n.private = 0"
    try:
        rows = conn.execute(
            f"SELECT p.id, p.node_id, -bm25({table}, {columns}) AS score"
            f" FROM {table} JOIN passages p ON p.id = {table}.rowid"
            " JOIN nodes n ON n.id = p.node_id"
            f" WHERE {table} MATCH ?{visible}"
            " ORDER BY score DESC, p.id LIMIT ?",
            (query, limit),
        ).fetchall()
    except sqlite3.OperationalError:
        return []  # a term FTS5 still refuses, or a graph from before passages: no match
    return [(r[0], r[1], float(r[2])) for r in rows]


def _passage_rows_at_most(conn: sqlite3.Connection) -> int:
    """At least as many rows as a passage index holds: its rowids are passage ids."""
    return int(conn.execute("SELECT MAX(id) FROM passages").fetchone()[0] or 0)
