"""Read-side queries over the graph: nodes, names, edges, full-text search and statistics."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from typing import Any

from ctx.edges import walked_name
from ctx.store.batches import chunks
from ctx.store.types import MAX_QUERY_TERMS, EdgeView, Node, SearchHit



def node_from_row(row: sqlite3.Row) -> Node:
    return Node(
        id=row["id"],
        title=row["title"],
        body=row["body"],
        type=row["type"],
        tags=json.loads(row["tags"]),
        fields=json.loads(row["fields"]),
        aliases=json.loads(row["aliases"]),
        source_id=row["source_id"],
        source_path=row["source_path"],
        parent_id=row["parent_id"],
        position=row["position"],
        created=row["created"],
        updated=row["updated"],
        content_hash=row["content_hash"],
        tokens=row["tokens"],
    )


NODE_COLUMNS = (
    "id, title, body, type, tags, fields, aliases, source_id, source_path, parent_id, position,"
    " created, updated, content_hash, tokens"
)


def _visible(include_private: bool, alias: str = "") -> str:
    """SQL condition that hides private nodes unless the caller explicitly includes them."""
    return "1" if include_private else f"{alias}private = 0"


def get_node(conn: sqlite3.Connection, node_id: str, *, include_private: bool = False) -> Node | None:
    row = conn.execute(
        f"SELECT {NODE_COLUMNS} FROM nodes WHERE id = ? AND {_visible(include_private)}", (node_id,)
    ).fetchone()
    return node_from_row(row) if row else None


def is_private(conn: sqlite3.Connection, node_id: str) -> bool:
    row = conn.execute("SELECT private FROM nodes WHERE id = ?", (node_id,)).fetchone()
    return bool(row and row[0])


def get_nodes(
    conn: sqlite3.Connection, ids: list[str], *, include_private: bool = False
) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT {NODE_COLUMNS} FROM nodes WHERE id IN ({marks}) AND {_visible(include_private)}",
            chunk,
        ):
            out[row["id"]] = node_from_row(row)
    return out


def find_by_name(
    conn: sqlite3.Connection, text: str, *, include_private: bool = False
) -> list[str]:
    """Node ids whose exact title or alias is ``text`` (case-insensitive), best match first."""
    key = text.strip().lower()
    if not key:
        return []
    rows = conn.execute(
        "SELECT k.node_id, MIN(k.priority) AS p FROM node_keys k JOIN nodes n ON n.id = k.node_id"
        f" WHERE k.key = ? AND k.kind != 'id' AND {_visible(include_private, 'n.')}"
        " GROUP BY k.node_id ORDER BY p, length(k.node_id), k.node_id",
        (key,),
    ).fetchall()
    if rows:
        return [r[0] for r in rows]
    rows = conn.execute(
        f"SELECT id FROM nodes WHERE title = ? COLLATE NOCASE AND {_visible(include_private)}"
        " ORDER BY length(id), id",
        (text.strip(),),
    ).fetchall()
    return [r[0] for r in rows]


# What a topic that is a file path may end with; without one of these, a path needs a '/'.
_NOTE_SUFFIXES = (".md", ".markdown", ".json", ".jsonl", ".csv", ".txt", ".org")


def find_by_path(conn: sqlite3.Connection, text: str, *, include_private: bool = False) -> list[str]:
    """The node a file path names: the one top-level node of that file, the path written relative
    to its source's root (with or without ``.md``) or as a path on disk inside a source's root.
    What tab completion gives (``Plugins/Canvas.md``) is a topic like the note's title. A file
    that holds several top-level nodes (an outline export's pages) names none of them."""
    path = text.strip().replace("\\", "/")
    if not path or ("/" not in path and not path.lower().endswith(_NOTE_SUFFIXES)) or "\n" in path:
        return []
    while path.startswith("./"):
        path = path[2:]
    wanted: list[tuple[int | None, str]] = [(None, path)]
    if not path.lower().endswith(_NOTE_SUFFIXES):
        wanted += [(None, path + ".md"), (None, path + ".markdown")]
    sources = conn.execute("SELECT id, root FROM sources ORDER BY id").fetchall()
    wanted += _on_disk(text.strip(), sources)
    for source_id, relpath in wanted:
        ids: list[str] = []
        for sid, _ in sources:
            if source_id is not None and sid != source_id:
                continue
            ids += [
                r[0] for r in conn.execute(
                    "SELECT n.id FROM nodes n LEFT JOIN nodes p ON p.id = n.parent_id"
                    " WHERE n.source_id = ? AND n.file = ? AND (p.id IS NULL OR p.file != n.file)"
                    f" AND {_visible(include_private, 'n.')} ORDER BY n.id LIMIT 2",
                    (sid, relpath),
                )
            ]
        if ids:
            return ids if len(ids) == 1 else []
    stem, dot, suffix = path.rpartition(".")
    if dot and f".{suffix.lower()}" in (".md", ".markdown") and stem:
        # A note's id is its path without .md, written in any case: the importers' path keys.
        return find_by_name(conn, stem, include_private=include_private)
    return []


def _on_disk(text: str, sources: list[sqlite3.Row]) -> list[tuple[int | None, str]]:
    """(source id, path relative to its root) for a topic that is a file on disk in a source."""
    import os
    from pathlib import Path

    out: list[tuple[int | None, str]] = []
    try:
        candidate = Path(text).expanduser()
        found = [p for p in (candidate, Path(text + ".md")) if p.is_file()]
    except (OSError, ValueError):
        return out
    for path in found:
        resolved = path.resolve()
        for sid, root in sources:
            root_path = Path(root)
            if resolved == root_path:
                out.append((sid, resolved.name))
            elif resolved.is_relative_to(root_path):
                out.append((sid, resolved.relative_to(root_path).as_posix().replace(os.sep, "/")))
    return out


# Longest name looked for inside a topic, in words: titles are short, and every extra length
# costs one more indexed lookup per start word.
MENTION_MAX_WORDS = 8
# Names are looked for among a topic's first this many words (each word costs up to
# MENTION_MAX_WORDS lookups): a pasted page must not cost thousands of queries.
MENTION_MAX_TEXT_WORDS = 200
_MENTION_WORD = re.compile(r"\w+(?:['’.-]\w+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s\Z")


def name_keys_of(
    conn: sqlite3.Connection, ids: list[str], *, include_private: bool = False
) -> list[tuple[str, str]]:
    """(title or alias key, node title) of the given nodes, by their primary key: a few index
    steps, where comparing a topic with every title reads them all."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return [
        (r[0], r[1])
        for r in conn.execute(
            "SELECT k.key, n.title FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            f" WHERE k.node_id IN ({marks}) AND k.kind IN ('title', 'alias') AND {_visible(include_private, 'n.')}"
            " ORDER BY k.key, n.title",
            ids,
        )
    ]


def find_mentions(
    conn: sqlite3.Connection, text: str, *, include_private: bool = False
) -> list[str]:
    """Node ids whose title or alias occurs verbatim (word-bounded, case-insensitive) in ``text``.

    A title's trailing disambiguator counts as optional: "Hello Love (song)" is named by "hello
    love". A name made only of function words ("The", "Who") names nothing, and a one-word name
    counts only where the text writes it as a name — capitalised and not opening a sentence, or
    with a digit ("how does it work" does not name a note called "Work"; "ask Maya" names "Maya").
    Longest names first (a longer name is more specific), then by position in the text, then by id.
    """
    seen: dict[str, tuple[int, int]] = {}
    for name, rank in mention_phrases(text).items():
        # No DISTINCT (a node named twice is counted once below): with it, SQLite read every
        # name key in node order instead of looking this one up (29 ms a phrase at 100k nodes,
        # against 0.06 ms).
        rows = conn.execute(
            "SELECT k.node_id FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            " WHERE k.kind IN ('title', 'alias') AND (k.key = ? OR (k.key >= ? AND k.key < ?))"
            f" AND {_visible(include_private, 'n.')}",
            (name, name + " (", name + " )"),
        ).fetchall()
        for (node_id,) in rows:
            if node_id not in seen or rank < seen[node_id]:
                seen[node_id] = rank
    return sorted(seen, key=lambda node_id: (seen[node_id], node_id))


def mention_phrases(text: str) -> dict[str, tuple[int, int]]:
    """The phrases of ``text`` that may be names, each with its best occurrence's rank
    (longer first, then earlier): what every engine looks up for ``find_mentions``."""
    from ctx.stopwords import STOPWORDS

    lowered = text.lower()
    words = list(itertools.islice(_MENTION_WORD.finditer(lowered), MENTION_MAX_TEXT_WORDS))
    ranks: dict[str, tuple[int, int]] = {}
    for i, first in enumerate(words):
        for j in range(i, min(len(words), i + MENTION_MAX_WORDS)):
            if all(w.group() in STOPWORDS for w in words[i : j + 1]):
                continue
            if i == j and not _written_as_name(text, first.start(), first.end()):
                continue
            phrase = lowered[first.start() : words[j].end()]
            # "Hello Love's performer" names "Hello Love": a possessive is not part of the name.
            for name in dict.fromkeys((phrase, _POSSESSIVE.sub("", phrase))):
                if len(name) < 3:
                    continue
                rank = (-(j - i + 1), first.start())
                if name not in ranks or rank < ranks[name]:
                    ranks[name] = rank
    return ranks


def _written_as_name(text: str, start: int, end: int) -> bool:
    word = text[start:end]
    if any(ch.isdigit() for ch in word):
        return True
    if not word[:1].isupper():
        return False
    # The first word of a sentence is capitalised whatever it is.
    before = text[:start].rstrip()
    return bool(before) and before[-1] not in ".!?:\n\"'“(["


def resolve_one(
    conn: sqlite3.Connection, id_or_title: str, *, include_private: bool = False
) -> str | None:
    """An exact node id, else the best exact title/alias match, else the note a file path names."""
    if conn.execute(
        f"SELECT 1 FROM nodes WHERE id = ? AND {_visible(include_private)}", (id_or_title,)
    ).fetchone():
        return id_or_title
    names = find_by_name(conn, id_or_title, include_private=include_private)
    names = names or find_by_path(conn, id_or_title, include_private=include_private)
    return names[0] if names else None


_WORD = re.compile(r"[\w][\w'’.-]*\*?", re.UNICODE)


def fts_query(text: str, mode: str = "and") -> str:
    """Turn anything a user types into a safe FTS5 query.

    Every word becomes a quoted phrase (so ``AND``, ``-``, ``(``, ``"`` and ``:`` lose their
    query-syntax meaning); a trailing ``*`` stays a prefix search. Words join with AND or OR.
    """
    joiner = " AND " if mode == "and" else " OR "
    return joiner.join(fts_phrases(text))


def fts_phrases(text: str) -> list[str]:
    """``fts_query``'s phrases, in order."""
    terms: dict[str, None] = {}
    for match in _WORD.finditer(text):
        raw = match.group()
        prefix = raw.endswith("*")
        word = raw.rstrip("*").strip(".'’-")
        if not word:
            continue
        quoted = '"' + word.replace('"', '""') + '"'
        terms.setdefault(quoted + ("*" if prefix else ""), None)
        if len(terms) >= MAX_QUERY_TERMS:
            break  # a pasted page is a query of its first words, not a minute of BM25
    return list(terms)


def search(
    conn: sqlite3.Connection,
    text: str,
    *,
    limit: int = 20,
    mode: str = "auto",
    include_private: bool = False,
    snippets: bool = True,
    known: dict[tuple[str, str], bool] | None = None,
) -> list[SearchHit]:
    """BM25 full-text search. ``auto`` tries all words first, then any word.

    Without access to private nodes only the public index is searched, so its statistics (and so
    every score) are those of the graph without its private notes. With access, each index's hits
    come with that index's scores, merged by score. ``snippets=False`` leaves every hit's snippet
    empty: a ranking that needs only ids and scores then costs a fraction (see ``_ranked``).
    ``known``: the reader's answers about the schema (``fts.schema_has``).
    """
    from ctx.store.fts import searched_indexes

    modes = ["and", "or"] if mode == "auto" else [mode]
    indexes = searched_indexes(conn, "nodes_fts", include_private, known)
    for m in modes:
        query = fts_query(text, m)
        if not query:
            return []
        rows: list[tuple[str, str, str, str | None, float, str]] = []
        for index in indexes:
            try:
                phrases = fts_phrases(text) if m == "or" else None
                found = _ranked(conn, index, query, limit, include_private, phrases, snippets=snippets, known=known)
                rows += found if found is not None else _with_snippets(conn, index, query, limit, include_private)
            except sqlite3.OperationalError:
                pass  # e.g. a term FTS5 still refuses; treat as no match rather than fail
        if rows:
            rows.sort(key=lambda r: (-r[4], r[0]))
            return [SearchHit(r[0], r[1], r[2], r[3], float(r[4]), r[5]) for r in rows[:limit]]
    return []


def _with_snippets(
    conn: sqlite3.Connection, index: str, query: str, limit: int, include_private: bool
) -> list[tuple[str, str, str, str | None, float, str]]:
    return [
        (r[0], r[1], r[2], r[3], r[4], r[5])
        for r in conn.execute(
            f"""
            SELECT n.id, n.title, n.type, n.source_path,
                   -bm25({index}, 10.0, 5.0, 1.0) AS score,
                   snippet({index}, 2, '[', ']', '…', 12) AS snip
            FROM {index} JOIN nodes n ON n.rowid = {index}.rowid
            WHERE {index} MATCH ? AND {_visible(include_private, "n.")}
            ORDER BY score DESC, n.id
            LIMIT ?
            """,
            (query, limit),
        )
    ]


# Rows read past ``limit`` to see where the hits tied with the last one end (ties are common:
# notes of the same length that match a word once score the same).
_TIED_MARGIN = 64


def _ranked(
    conn: sqlite3.Connection, index: str, query: str, limit: int, include_private: bool,
    phrases: list[str] | None = None, *, snippets: bool = False, known: dict[tuple[str, str], bool] | None = None,
) -> list[tuple[str, str, str, str | None, float, str]] | None:
    """``_with_snippets``'s rows (their snippets empty unless ``snippets``), or None where this
    way cannot give them.

    SQLite computes every column of every match before it sorts, so the snippet and the join
    with the nodes cost more than BM25 itself (a common word at 100k notes: ~35 ms against ~8;
    at 1M nodes `ctx search` of a common word took ~1.2 s). Here the index alone ranks its
    matches (ties by rowid), and only the best are joined: all rows tied with the ``limit``-th
    are kept, so the ties are then broken by node id, as there. The snippets, where asked, are
    made for the ``limit`` rows kept alone: a snippet depends only on the query and its row.
    """
    from ctx.store.fts import best_matches, rows_all_visible

    if not rows_all_visible(conn, index, include_private, known):
        return None
    fetch = limit + _TIED_MARGIN
    while True:
        if phrases is not None:  # ``query`` is these joined by OR: ranked without every match scored
            ranked = best_matches(conn, index, "10.0, 5.0, 1.0", phrases, fetch, _node_rows_at_most)
        else:
            ranked = conn.execute(
                f"SELECT rowid, -bm25({index}, 10.0, 5.0, 1.0) AS score FROM {index}"
                f" WHERE {index} MATCH ? ORDER BY score DESC, rowid LIMIT ?",
                (query, fetch),
            ).fetchall()
        if len(ranked) <= limit:
            break
        last = ranked[limit - 1][1]
        kept = [r for r in ranked if r[1] >= last]
        if len(kept) < len(ranked) or len(ranked) < fetch:
            ranked = kept
            break
        fetch *= 8  # the tie may go on past what was read
    nodes: dict[int, tuple[str, str, str, str | None, int]] = {}
    for chunk in chunks([r[0] for r in ranked]):
        for r in conn.execute(
            f"SELECT rowid, id, title, type, source_path, private FROM nodes"
            f" WHERE rowid IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            nodes[r[0]] = (r[1], r[2], r[3], r[4], r[5])
    best: list[tuple[str, str, str, str | None, float, int]] = []
    for rowid, score in ranked:
        node = nodes.get(rowid)
        if node is None or (node[4] and not include_private):
            return None  # an index out of step with its table: the joined query skips such rows
        best.append((node[0], node[1], node[2], node[3], score, rowid))
    best.sort(key=lambda r: (-r[4], r[0]))
    best = best[:limit]
    shown: dict[int, str] = {}
    if snippets and best:
        for chunk in chunks([r[5] for r in best]):
            shown.update(conn.execute(
                f"SELECT rowid, snippet({index}, 2, '[', ']', '…', 12) FROM {index}"
                f" WHERE {index} MATCH ? AND rowid IN ({','.join('?' * len(chunk))})",
                (query, *chunk),
            ).fetchall())
        if len(shown) < len(best):
            return None  # a row the index no longer matches: out of step, as above
    return [(r[0], r[1], r[2], r[3], r[4], shown.get(r[5], "")) for r in best]


def _node_rows_at_most(conn: sqlite3.Connection) -> int:
    """At least as many rows as a node index holds: its rowids are the nodes'."""
    return int(conn.execute("SELECT MAX(rowid) FROM nodes").fetchone()[0] or 0)


def edges_of(
    conn: sqlite3.Connection, node_id: str, *, include_private: bool = False
) -> list[EdgeView]:
    """The node's edges both ways; edges to private nodes are left out unless included.

    A link the node's own text makes by name (``[[Acquisition]]``) to a private node reads as a link
    to a missing note, as it would if the private note did not exist: leaving it out would tell a
    reader without access that the name belongs to a private note. An edge by id (a block's child,
    a tag) goes with the private node, as the node itself would.
    """
    out: list[EdgeView] = []
    for r in conn.execute(
        "SELECT e.type, e.dst, e.target, e.by_id, e.label, n.title, n.private FROM edges e"
        " LEFT JOIN nodes n ON n.id = e.dst WHERE e.src = ? ORDER BY e.type, e.position, e.id",
        (node_id,),
    ):
        if r["private"] and not include_private:
            if not r["by_id"] and r["target"]:
                out.append(EdgeView(r["type"], "out", None, None, r["target"], r["label"]))
            continue
        out.append(EdgeView(r["type"], "out", r["dst"], r["title"], r["target"], r["label"]))
    for r in conn.execute(
        "SELECT e.type, e.src, e.label, n.title FROM edges e JOIN nodes n ON n.id = e.src"
        f" WHERE e.dst = ? AND {_visible(include_private, 'n.')} ORDER BY e.type, e.src, e.id",
        (node_id,),
    ):
        out.append(EdgeView(walked_name(r["type"], "in"), "in", r["src"], r["title"], None, r["label"]))
    return out


def count_matches(
    conn: sqlite3.Connection, text: str, *, at_most: int, include_private: bool = False, known: dict[tuple[str, str], bool] | None = None,
) -> int:
    """How many nodes a search for any word of ``text`` finds, counting no further than ``at_most``
    (a common word costs ``at_most`` rows, not one per note). ``known``: as in ``search``."""
    from ctx.store.fts import rows_all_visible, searched_indexes

    query = fts_query(text, "or")
    if not query:
        return 0
    found = 0
    for index in searched_indexes(conn, "nodes_fts", include_private, known):
        # A graph from before the split keeps private rows in the one index: left out here
        # through the small private index, not by reading every match's row. A split graph's
        # public index holds none: the list of private rows, made for each count, cost ~40 us of
        # its ~90 (a new 100k question counts ~19 names; docs/scale.md, ask17).
        hidden = "" if rows_all_visible(conn, index, include_private, known) else (
            " AND rowid NOT IN (SELECT rowid FROM nodes WHERE private = 1)"
        )
        try:
            found += int(
                conn.execute(
                    f"SELECT COUNT(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ?{hidden} LIMIT ?)",
                    (query, at_most - found),
                ).fetchone()[0]
            )
        except sqlite3.OperationalError:
            pass
        if found >= at_most:
            break
    return found


def node_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0])


def is_empty(conn: sqlite3.Connection) -> bool:
    """Whether nothing was ever imported (no node at all, private or not)."""
    return conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is None


def stats(conn: sqlite3.Connection, *, include_private: bool = False) -> dict[str, Any]:
    """Counts for ``ctx stats``. Types and edge types are named only as far as visible nodes carry
    them: a type or a field name (``field:<name>`` edges) that only private nodes have is itself
    private; those nodes and edges are counted in the totals and in ``private_*`` alone."""
    from ctx.store import counts

    nodes_total = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    by_type, edges = counts.by_type(conn, include_private=include_private)
    edges_total = conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
    unresolved = conn.execute("SELECT COUNT(*) FROM edges WHERE dst IS NULL").fetchone()[0]
    private = counts.private_nodes(conn)
    sources = [
        {
            "id": r["id"],
            "root": r["root"],
            "name": r["name"],
            "format": r["format"],
            "imported_at": r["imported_at"],
            "files": r["files"],
            "nodes": r["nodes"],
        }
        for r in conn.execute(
            "SELECT s.id, s.root, s.name, s.format, s.imported_at,"
            " (SELECT COUNT(*) FROM files f WHERE f.source_id = s.id) AS files,"
            " (SELECT COUNT(*) FROM nodes n WHERE n.source_id = s.id) AS nodes"
            " FROM sources s ORDER BY s.id"
        )
    ]
    meta = {r[0]: r[1] for r in conn.execute("SELECT key, value FROM meta")}
    last = meta.get("last_import")
    return {
        "nodes": nodes_total,
        "nodes_by_type": by_type,
        "edges": edges,
        "edges_total": edges_total,
        "private_edges": edges_total - sum(edges.values()),
        "unresolved_links": unresolved,
        "private_nodes": private,
        "sources": sources,
        "graph_version": int(meta.get("graph_version", 0)),
        "last_import": float(last) if last else None,
    }


def block_texts(conn: sqlite3.Connection, ids: list[str], *, include_private: bool = False) -> dict[str, tuple[str, str]]:
    """{id as asked: (body, page title)} for the visible nodes ``ids`` name, exactly or in lower
    case; the page is the topmost ancestor by ``parent_id`` (at most 32 up), else the node itself."""
    asked: dict[str, str] = {}
    for uid in ids:
        asked.setdefault(uid, uid)
        asked.setdefault(uid.lower(), uid)
    out: dict[str, tuple[str, str]] = {}
    names = list(asked)
    for start in range(0, len(names), 400):
        chunk = names[start : start + 400]
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            "WITH RECURSIVE up(start, id, parent, title, depth) AS ("
            f" SELECT n.id, n.id, n.parent_id, n.title, 0 FROM nodes n WHERE n.id IN ({marks}) AND {_visible(include_private, 'n.')}"
            " UNION ALL SELECT up.start, p.id, p.parent_id, p.title, up.depth + 1 FROM up JOIN nodes p ON p.id = up.parent"
            " WHERE up.depth < 32)"
            " SELECT up.start, n.body, up.title FROM up JOIN nodes n ON n.id = up.start"
            " WHERE up.parent IS NULL OR up.depth = 32 OR NOT EXISTS (SELECT 1 FROM nodes p WHERE p.id = up.parent)",
            chunk,
        ).fetchall()
        for node_id, body, page in rows:
            key = asked[node_id]
            if key not in out or node_id == key:
                out[key] = (body or "", page or "")
    return out

