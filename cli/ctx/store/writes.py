"""The graph writes of an import: files, nodes, name keys, edges, tag nodes, link resolution.

The import engine (``ctx.importers.engine``) decides what changed and parses it; it then calls
these inside one ``transaction``, so an interrupted import leaves the previous graph intact. No
SQL that changes the graph lives outside ``ctx.store``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ctx.store.fts import deferred_while_empty, indexed_in_bulk, node_fill_statements
from ctx.store.records import EdgeRecord, NodeRecord, content_hash, tag_node_id
from ctx.store.types import FileState, Written

TokenCounter = Callable[[list[str]], list[int]]  # texts -> their token counts
KeyNormalizer = Callable[[str], str]  # how a format compares names (lowercase by default)

_CHUNK = 500


# ---------------------------------------------------------------------------------------------
# Sources and their files


def source_of(conn: sqlite3.Connection, root: Path) -> sqlite3.Row | None:
    """The registered source at ``root`` (id, format), if any."""
    return conn.execute("SELECT id, format FROM sources WHERE root = ?", (str(root),)).fetchone()


def ensure_source(conn: sqlite3.Connection, root: Path, fmt: str) -> int:
    """The source row for ``root``, made now if there is none (inside the import's transaction,
    so a failed or killed first import leaves no source behind)."""
    row = source_of(conn, root)
    if row is not None:
        return int(row["id"])
    cursor = conn.execute(
        "INSERT INTO sources (root, name, format) VALUES (?, ?, ?)",
        (str(root), root.stem if root.is_file() else root.name, fmt),
    )
    return int(cursor.lastrowid or 0)


def file_states(conn: sqlite3.Connection, source_id: int) -> dict[str, FileState]:
    """Each file of the source as last imported: path -> (mtime_ns, size, hash)."""
    # Plain tuples: a no-op re-import of 100k files spent half a second making sqlite3.Row objects.
    rows = conn.cursor()
    rows.row_factory = None
    rows.execute("SELECT path, mtime_ns, size, hash FROM files WHERE source_id = ?", (source_id,))
    return {path: (int(mtime_ns), int(size), str(digest)) for path, mtime_ns, size, digest in rows}


def file_states_of(conn: sqlite3.Connection, source_id: int, paths: list[str]) -> dict[str, FileState]:
    """The stored state of those of ``paths`` the source has (as ``file_states``)."""
    out: dict[str, FileState] = {}
    rows = conn.cursor()
    rows.row_factory = None
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        rows.execute(
            f"SELECT path, mtime_ns, size, hash FROM files WHERE source_id = ? AND path IN ({','.join('?' * len(chunk))})",
            (source_id, *chunk),
        )
        out.update((path, (int(mtime_ns), int(size), str(digest))) for path, mtime_ns, size, digest in rows)
    return out


def forget_files(conn: sqlite3.Connection, source_id: int, replaced: list[str], vanished: list[str]) -> None:
    """Drop the records of files about to be re-read (``replaced``) or gone (``vanished``)."""
    # A first import has nothing to delete; skipping 3 queries per file matters at 1,000s.
    if conn.execute("SELECT 1 FROM files WHERE source_id = ? LIMIT 1", (source_id,)).fetchone():
        # A re-import: from here on, what could move a link is noted for ``resolve_edges``,
        # unless it replaces half the source or more (one JSON graph file read again): noting
        # every row would then cost more than resolving every edge.
        gone = len(replaced) + len(vanished)
        from ctx.store import counts

        if gone and gone * 2 >= conn.execute("SELECT COUNT(*) FROM files WHERE source_id = ?", (source_id,)).fetchone()[0]:
            resolve_everything(conn)
            counts.track(conn, noting=False)
        else:
            track_moves(conn)
            counts.track(conn)  # and what could change a count, for ``counts.recount``
        for rel in replaced + vanished:
            _delete_file_records(conn, source_id, rel)
    for rel in vanished:
        conn.execute("DELETE FROM files WHERE source_id = ? AND path = ?", (source_id, rel))


def record_files(conn: sqlite3.Connection, source_id: int, files: list[tuple[str, int, int, str]]) -> None:
    """Remember (path, mtime_ns, size, hash) of each file read, so the next import can skip it."""
    conn.executemany(
        "INSERT OR REPLACE INTO files (source_id, path, mtime_ns, size, hash) VALUES (?, ?, ?, ?, ?)",
        [(source_id, *f) for f in files],
    )


def forget_derived(conn: sqlite3.Connection, source_id: int) -> None:
    """Drop the records derived from the whole source (file ''): they are recomputed each import."""
    _delete_file_records(conn, source_id, "")


def _delete_file_records(conn: sqlite3.Connection, source_id: int, rel: str) -> None:
    conn.execute(
        "DELETE FROM node_keys WHERE node_id IN (SELECT id FROM nodes WHERE source_id = ? AND file = ?)",
        (source_id, rel),
    )
    conn.execute("DELETE FROM nodes WHERE source_id = ? AND file = ?", (source_id, rel))
    conn.execute("DELETE FROM edges WHERE source_id = ? AND file = ?", (source_id, rel))


# Indexes that only readers (and the import's own later steps: privacy, passages) use. An import
# into an empty graph drops them, writes every row, and builds each once at the end, a sort instead
# of a B-tree update per row (10k notes: about a third of the time spent writing and resolving
# edges). Inside the import's transaction: a rollback restores them with everything else.
_BUILT_AFTER_FIRST_IMPORT = (
    "nodes_by_parent", "nodes_by_title", "nodes_by_recency", "nodes_walked",
    "node_keys_by_node", "edges_out", "edges_in", "edges_by_file",
)


def defer_indexes(conn: sqlite3.Connection) -> list[str]:
    """In an empty graph, inside a transaction, drop the indexes only readers need (and
    ``link_counts``' triggers) and return their definitions, for ``build_indexes`` once the rows
    are written; else drop nothing. The content counter's triggers are set aside apart
    (``set_content_counter_aside``)."""
    from ctx.store import link_counts

    if not conn.in_transaction or conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None:
        return []
    names = (*_BUILT_AFTER_FIRST_IMPORT, *link_counts.TRIGGERS)
    marks = ",".join("?" * len(names))
    found = conn.execute(
        f"SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND name IN ({marks})"
        " ORDER BY type, name",
        names,
    ).fetchall()
    for kind, name, _ in found:
        conn.execute(f'DROP {kind.upper()} "{name}"')
    return [sql for _, _, sql in found]


def set_content_counter_aside(conn: sqlite3.Connection) -> list[str]:
    """In an empty graph, inside a transaction, the content counter's row triggers (migration 16)
    are dropped: one bump for the whole transaction says as much to a warm reader as one per row
    (~240k rows at 10k notes, ~5% of the import's CPU). Returns their definitions, to be made
    again (``build_indexes``) once nothing in the transaction writes any more: the privacy flags
    and passages written after the readers' indexes are built also fired them, once per row."""
    if not conn.in_transaction or conn.execute("SELECT 1 FROM nodes LIMIT 1").fetchone() is not None:
        return []
    found = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_content' ESCAPE '\\' ORDER BY name"
    ).fetchall()
    for name, _ in found:
        conn.execute(f'DROP TRIGGER "{name}"')
    if found:
        conn.execute("UPDATE content_version SET n = n + 1")
    return [sql for _, sql in found]


def build_indexes(conn: sqlite3.Connection, definitions: list[str]) -> None:
    from ctx.store import link_counts

    for sql in definitions:
        conn.execute(sql)
    if any(sql.startswith("CREATE TRIGGER link_counts") for sql in definitions):
        link_counts.fill(conn)  # the links a first import wrote while its triggers were set aside


def mark_imported(conn: sqlite3.Connection, source_id: int, fmt: str) -> None:
    """The source was read in ``fmt`` just now; every cache keyed by the graph version is stale."""
    now = time.time()
    conn.execute(
        "UPDATE sources SET imported_at = ?, checked_at = ?, format = ? WHERE id = ?", (now, now, fmt, source_id)
    )
    bump_graph_version(conn)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_import', ?)", (str(now),))


# Page cache for an import's transaction. With SQLite's default (2 MB), every index entry an
# import writes at a random place (names, titles, link targets) re-read its page from the WAL: a
# million-node JSON graph made 158 million reads of 4 KB, and each node cost 4x what it cost at
# 10k. A fixed larger cache keeps the working set of the indexes in memory; it is an upper bound,
# whatever the graph's size, and the connection's own setting comes back after the import.
IMPORT_CACHE_KB = 256 * 1024
IMPORT_TEMP_CACHE_KB = 64 * 1024  # temporary tables and sorts (ctx.store.streamed)


@contextmanager
def import_cache(conn: sqlite3.Connection) -> Iterator[None]:
    before = [conn.execute(f"PRAGMA {schema}.cache_size").fetchone()[0] for schema in ("main", "temp")]
    conn.execute(f"PRAGMA main.cache_size = -{IMPORT_CACHE_KB}")
    conn.execute(f"PRAGMA temp.cache_size = -{IMPORT_TEMP_CACHE_KB}")
    try:
        yield
    finally:
        for schema, size in zip(("main", "temp"), before, strict=True):
            conn.execute(f"PRAGMA {schema}.cache_size = {int(size)}")


def bump_graph_version(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'graph_version'")


# ---------------------------------------------------------------------------------------------
# Nodes, keys and edges


def insert_records(
    conn: sqlite3.Connection,
    source_id: int,
    nodes: list[tuple[str, NodeRecord]],
    edges: list[tuple[str, EdgeRecord]],
    *,
    count: TokenCounter,
    normalize_key: KeyNormalizer,
) -> Written:
    """Write (file, record) pairs: nodes with their token counts and names, their edges and tags.

    Ids must be unique across the whole graph; a clash (the same id from another file or another
    source) is renamed and reported rather than silently overwriting the other node.
    """
    written = Written()
    if not nodes and not edges:
        return written
    renamed = written.renamed
    seen: set[str] = set()
    tried: dict[str, int] = {}
    taken = existing_ids(conn, [n.id for _, n in nodes])
    for rel, node in nodes:
        if node.id in seen or node.id in taken:
            new_id = _unique_id(conn, f"{node.id}~{rel or 'derived'}", seen, tried)
            written.warnings.append(f"{rel or 'derived'}: duplicate node id {node.id!r}; stored as {new_id!r}")
            renamed[node.id] = new_id
            node.id = new_id
        seen.add(node.id)

    # Rows are made and written a chunk of nodes at a time: a single file of a million nodes
    # would otherwise hold every body twice more (as text to count, as a row to insert).
    with _nodes_indexed_in_bulk(conn):
        for start in range(0, len(nodes), _ROWS_CHUNK):
            chunk = nodes[start : start + _ROWS_CHUNK]
            _insert_nodes(conn, source_id, chunk, renamed, count, normalize_key)
    for start in range(0, len(edges), _ROWS_CHUNK):
        _insert_edges(conn, source_id, edges[start : start + _ROWS_CHUNK], renamed)
    tag_edges = _tag_edges(nodes)
    for start in range(0, len(tag_edges), _ROWS_CHUNK):
        _insert_edges(conn, source_id, tag_edges[start : start + _ROWS_CHUNK], renamed)
    written.nodes = len(nodes)
    written.edges = len(edges) + len(tag_edges)
    return written


_ROWS_CHUNK = 5000


def _insert_nodes(
    conn: sqlite3.Connection,
    source_id: int,
    nodes: list[tuple[str, NodeRecord]],
    renamed: dict[str, str],
    count: TokenCounter,
    normalize_key: KeyNormalizer,
) -> None:
    token_counts = count([f"{n.title}\n{n.body}" for _, n in nodes])
    node_rows = []
    key_rows: list[tuple[int, str, str, str, int]] = []
    for (rel, node), tokens in zip(nodes, token_counts, strict=True):
        node_rows.append((
            node.id, node.title, node.body, node.type, _json(node.tags), _json(node.fields),
            _json(node.aliases), source_id, node.source_path, rel,
            renamed.get(node.parent_id, node.parent_id) if node.parent_id else None,
            node.position, node.created, node.updated, content_hash(node), tokens,
        ))
        keys = {(node.id, "id", 0)}
        if node.title_is_key:
            keys.add((normalize_key(node.title), "title", 10))
        keys.update((normalize_key(a), "alias", 20) for a in node.aliases)
        keys.update(node.keys)
        key_rows.extend((source_id, k, node.id, kind, prio) for k, kind, prio in keys if k)
    conn.executemany(
        "INSERT INTO nodes (id, title, body, type, tags, fields, aliases, source_id, source_path,"
        " file, parent_id, position, created, updated, content_hash, tokens)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        node_rows,
    )
    conn.executemany(
        "INSERT INTO node_keys (source_id, key, node_id, kind, priority) VALUES (?, ?, ?, ?, ?)", key_rows
    )


def _insert_edges(
    conn: sqlite3.Connection, source_id: int, edges: list[tuple[str, EdgeRecord]], renamed: dict[str, str]
) -> None:
    conn.executemany(
        "INSERT INTO edges (source_id, file, src, type, target, by_id, label, position)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                source_id, rel, renamed.get(e.src, e.src), e.type,
                renamed.get(e.target, e.target) if e.by_id else e.target,
                1 if e.by_id else 0, e.label, e.position,
            )
            for rel, e in edges
        ],
    )


# ``json.dumps(value, ensure_ascii=False)`` without a new encoder per call.
_STORED_JSON = json.JSONEncoder(ensure_ascii=False)


def _json(value: list[str] | dict[str, list[str]]) -> str:
    # Most outline blocks have no tags, fields or aliases; skipping json.dumps for those saves
    # about a tenth of a large import.
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return _STORED_JSON.encode(value)


def _nodes_indexed_in_bulk(conn: sqlite3.Connection) -> "AbstractContextManager[None]":
    """New nodes enter the full-text index with one statement, not a trigger per row
    (dwarves-brain: 0.175 s by trigger, 0.06 s in bulk)."""
    return indexed_in_bulk(
        conn, "nodes_ai", "nodes", "rowid", node_fill_statements(conn))


def nodes_indexed_at_end(conn: sqlite3.Connection) -> "AbstractContextManager[None]":
    """In an empty graph, the nodes written inside the block enter the full-text indexes in one
    statement per index at its end (``fts.deferred_while_empty``)."""
    return deferred_while_empty(conn, "nodes", ("nodes_ai", "nodes_ad", "nodes_au"), node_fill_statements(conn))


def _tag_edges(nodes: list[tuple[str, NodeRecord]]) -> list[tuple[str, EdgeRecord]]:
    """Every tag becomes an edge to a shared tag node, so notes that share a tag are two hops apart."""
    out = []
    for rel, node in nodes:
        for position, tag in enumerate(dict.fromkeys(node.tags)):
            if tag.strip().lstrip("#"):
                out.append((rel, EdgeRecord(node.id, "tag", tag_node_id(tag), by_id=True, position=position)))
    return out


def insert_tag_nodes(conn: sqlite3.Connection, source_id: int, count: TokenCounter) -> None:
    """Create the tag nodes this source's tags need and no node has yet (derived, file='')."""
    # A full sort (case-folded, then exact) so that when `#TODO` and `#todo` both occur, the
    # spelling that names the shared tag node is the same in every run, not set-order luck.
    tags = sorted(
        {
            r[0].strip().lstrip("#")
            for r in conn.execute(
                "SELECT DISTINCT j.value FROM nodes n, json_each(n.tags) j WHERE n.source_id = ?", (source_id,)
            )
            if isinstance(r[0], str) and r[0].strip().lstrip("#")
        },
        key=lambda tag: (tag.lower(), tag),
    )
    wanted: dict[str, str] = {}
    for tag in tags:
        wanted.setdefault(tag_node_id(tag), tag)
    existing = existing_ids(conn, list(wanted))
    new_nodes = [
        NodeRecord(id=node_id, title=f"#{tag}", type="tag") for node_id, tag in wanted.items() if node_id not in existing
    ]
    rows = list(zip(new_nodes, count([n.title for n in new_nodes]), strict=True))
    with _nodes_indexed_in_bulk(conn):
        conn.executemany(
            "INSERT INTO nodes (id, title, body, type, source_id, file, content_hash, tokens)"
            " VALUES (?, ?, '', 'tag', ?, '', ?, ?)",
            [(n.id, n.title, source_id, content_hash(n), t) for n, t in rows],
        )
    conn.executemany(
        "INSERT INTO node_keys (source_id, key, node_id, kind, priority) VALUES (?, ?, ?, ?, ?)",
        [(source_id, n.title.lower(), n.id, "title", 90) for n, _ in rows],
    )


def existing_ids(conn: sqlite3.Connection, ids: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE id IN ({marks})", chunk))
    return found


def _unique_id(conn: sqlite3.Connection, wanted: str, seen: set[str], tried: dict[str, int]) -> str:
    # ``tried`` remembers how far each name was counted: 10,000 blocks sharing one id would
    # otherwise count 1, 2, 3, ... again for each (quadratic).
    n = tried.get(wanted, 1)
    candidate = wanted if n == 1 else f"{wanted}~{n}"
    while candidate in seen or conn.execute("SELECT 1 FROM nodes WHERE id = ?", (candidate,)).fetchone():
        n += 1
        candidate = f"{wanted}~{n}"
    tried[wanted] = n
    return candidate


# Where an edge's target points now: by id, the node of that id; by name, the source's best key.
_RESOLVED = """CASE
            WHEN by_id = 1 THEN (SELECT n.id FROM nodes n WHERE n.id = edges.target)
            ELSE (
                SELECT k.node_id FROM node_keys k
                WHERE k.key = edges.target AND k.kind != 'id' AND k.source_id = edges.source_id
                ORDER BY k.priority, length(k.node_id), k.node_id LIMIT 1
            )
        END"""


def resolve_edges(conn: sqlite3.Connection, source_id: int, *, bulk: bool = False) -> None:
    """Point every edge of a source at the node its target names now, or at nothing.

    Names resolve within the source first; when two nodes share a name, the lower priority wins,
    then the shorter id (the note nearer the vault root, as Obsidian does), then the id itself.

    Only the edges whose target now points elsewhere are written: a re-import of one note left
    nearly every edge as it was, yet rewrote each row, its two indexes and its triggers (10k
    notes: 0.73 s of a 0.87 s re-import; 0.15 s when only changed rows are written). ``bulk``
    (a first import, its indexes and triggers set aside) writes every row without comparing:
    there nearly every edge changes, and looking twice cost more than writing. A re-import
    (``track_moves`` noted what it changed) looks only at the edges that could have moved.
    """
    marker = f"{_RESOLVE_ALL}{source_id}"
    if not bulk and _tracking(conn) and conn.execute("SELECT 1 FROM meta WHERE key = ?", (marker,)).fetchone() is None:
        try:
            _resolve_moved(conn, source_id)
        finally:
            forget_tracking(conn)
        return
    forget_tracking(conn)
    conn.execute("DELETE FROM meta WHERE key = ?", (marker,))
    changed = "" if bulk else f" AND dst IS NOT {_RESOLVED}"
    conn.execute(f"UPDATE edges SET dst = {_RESOLVED} WHERE source_id = ?{changed}", (source_id,))
    # Other sources may point at nodes this import removed (shared tag nodes, ids).
    conn.execute(
        "UPDATE edges SET dst = NULL WHERE dst IS NOT NULL AND source_id != ?"
        " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)",
        (source_id,),
    )


# What a re-import changes that can move a link, noted as it is written by temporary triggers
# (this connection's only, gone with the transaction if it rolls back): every name row and node
# id removed or added, and every edge added. Resolving all the edges of a source again cost 2.4 s
# of CPU at 100k notes (731k edges) for a one-note edit, though nearly none could move: an edge
# points where its target's names (or, by id, its target node) say, and those are what is noted.
_TRACKING = (
    "CREATE TEMP TABLE moved_keys (source_id INTEGER, key TEXT, kind TEXT, node_id TEXT, priority INTEGER, added INTEGER)",
    "CREATE TEMP TABLE moved_ids (id TEXT, added INTEGER)",
    "CREATE TEMP TABLE added_edges (id INTEGER)",
    "CREATE TEMP TRIGGER moved_keys_ai AFTER INSERT ON main.node_keys BEGIN"
    " INSERT INTO moved_keys VALUES (new.source_id, new.key, new.kind, new.node_id, new.priority, 1); END",
    "CREATE TEMP TRIGGER moved_keys_ad AFTER DELETE ON main.node_keys BEGIN"
    " INSERT INTO moved_keys VALUES (old.source_id, old.key, old.kind, old.node_id, old.priority, 0); END",
    "CREATE TEMP TRIGGER moved_keys_au AFTER UPDATE ON main.node_keys BEGIN"
    " INSERT INTO moved_keys VALUES (old.source_id, old.key, old.kind, old.node_id, old.priority, 0);"
    " INSERT INTO moved_keys VALUES (new.source_id, new.key, new.kind, new.node_id, new.priority, 1); END",
    "CREATE TEMP TRIGGER moved_nodes_ai AFTER INSERT ON main.nodes BEGIN INSERT INTO moved_ids VALUES (new.id, 1); END",
    "CREATE TEMP TRIGGER moved_nodes_ad AFTER DELETE ON main.nodes BEGIN INSERT INTO moved_ids VALUES (old.id, 0); END",
    "CREATE TEMP TRIGGER moved_nodes_au AFTER UPDATE OF id ON main.nodes BEGIN"
    " INSERT INTO moved_ids VALUES (old.id, 0); INSERT INTO moved_ids VALUES (new.id, 1); END",
    "CREATE TEMP TRIGGER added_edges_ai AFTER INSERT ON main.edges BEGIN INSERT INTO added_edges VALUES (new.id); END",
)
_TRACKED = (
    "moved_keys_ai", "moved_keys_ad", "moved_keys_au", "moved_nodes_ai", "moved_nodes_ad", "moved_nodes_au",
    "added_edges_ai",
)


# A source whose names changed outside its own imports (``remove_source`` handing tag nodes to
# it) has all its links resolved at its next import: meta key this + the source's id.
_RESOLVE_ALL = "resolve_all:"


def resolve_all_next(conn: sqlite3.Connection, removed: int) -> None:
    """Mark every source holding names moved from the ``removed`` source for a full resolve."""
    conn.execute(
        f"INSERT OR REPLACE INTO meta (key, value) SELECT DISTINCT '{_RESOLVE_ALL}' || source_id, '1'"
        " FROM node_keys WHERE source_id != ? AND node_id IN (SELECT id FROM nodes WHERE source_id != ?)"
        " AND node_id IN (SELECT id FROM nodes WHERE type = 'tag' AND file = '')",
        (removed, removed),
    )


def track_moves(conn: sqlite3.Connection) -> None:
    """Note, until the next ``resolve_edges``, what this transaction's writes change that can
    move a link (see ``_TRACKING``). Only inside a transaction; once is enough; never again once
    ``resolve_everything`` said so (what was written meanwhile is not noted)."""
    if conn.in_transaction and not _tracking(conn) and not _everything(conn):
        for statement in _TRACKING:
            conn.execute(statement)


def resolve_everything(conn: sqlite3.Connection) -> None:
    """Stop noting: the next ``resolve_edges`` in this transaction resolves every edge."""
    stop_tracking(conn)
    if conn.in_transaction:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS resolve_everything (unused INTEGER)")


def _everything(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'resolve_everything'"
    ).fetchone() is not None


def _tracking(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = 'moved_keys'").fetchone() is not None


def stop_tracking(conn: sqlite3.Connection) -> None:
    for trigger in _TRACKED:
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{trigger}")
    for table in ("moved_keys", "moved_ids", "added_edges", "moved_names", "moved_nodes", "moved_edges"):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")


def forget_tracking(conn: sqlite3.Connection) -> None:
    """After ``resolve_edges``: nothing noted, and the next transaction may note again."""
    stop_tracking(conn)
    conn.execute("DROP TABLE IF EXISTS temp.resolve_everything")


# The names whose rows changed: a name row (counted, as rows may repeat) that was there before
# and is not now, or the reverse. ``net`` is added minus removed; ``now`` the count in node_keys.
_MOVED_KEYS = """
    SELECT key FROM (
        SELECT m.key, m.net,
               (SELECT COUNT(*) FROM node_keys k WHERE k.key = m.key AND k.source_id IS m.source_id
                AND k.kind IS m.kind AND k.node_id IS m.node_id AND k.priority IS m.priority) AS now
        FROM (SELECT source_id, key, kind, node_id, priority, SUM(CASE WHEN added THEN 1 ELSE -1 END) AS net
              FROM temp.moved_keys GROUP BY source_id, key, kind, node_id, priority) m
    ) WHERE (now > 0) != (now - net > 0)
"""
# Node ids that exist now and did not before, or the reverse (ids are unique: a net change).
_MOVED_IDS = "SELECT id FROM temp.moved_ids GROUP BY id HAVING SUM(CASE WHEN added THEN 1 ELSE -1 END) != 0"


def _resolve_moved(conn: sqlite3.Connection, source_id: int) -> None:
    """``resolve_edges`` after a re-import: only the edges that may point elsewhere now.

    Every edge pointed where its target said after the last import (resolving is the last write
    to ``dst``). An edge's target can point elsewhere now only if it is new, if it pointed at
    nothing (a node or name may have come), or if the names or node it pointed by changed: by id,
    its node is gone; by name, a row of its name came or went, and so its node (which holds that
    name, now or before) is one of those rows' nodes. The same rows move as when every edge of
    the source is resolved again."""
    conn.execute(f"CREATE TEMP TABLE moved_names AS {_MOVED_KEYS}")
    conn.execute(f"CREATE TEMP TABLE moved_nodes AS {_MOVED_IDS}")
    conn.execute("CREATE TEMP TABLE moved_edges (id INTEGER PRIMARY KEY)")
    for candidates in (
        "SELECT id FROM temp.added_edges",
        "SELECT id FROM edges WHERE dst IS NULL",
        "SELECT e.id FROM temp.moved_nodes m JOIN edges e ON e.dst = m.id",
        "SELECT e.id FROM temp.moved_names m JOIN node_keys k ON k.key = m.key JOIN edges e ON e.dst = k.node_id",
        "SELECT e.id FROM temp.moved_names m JOIN temp.moved_keys k ON k.key = m.key JOIN edges e ON e.dst = k.node_id",
    ):
        conn.execute(f"INSERT OR IGNORE INTO temp.moved_edges {candidates}")
    conn.execute(
        f"UPDATE edges SET dst = {_RESOLVED} WHERE id IN (SELECT id FROM temp.moved_edges)"
        f" AND source_id = ? AND dst IS NOT {_RESOLVED}",
        (source_id,),
    )
    # Other sources may point at nodes this import removed (shared tag nodes, ids).
    conn.execute(
        "UPDATE edges SET dst = NULL WHERE dst IN (SELECT id FROM temp.moved_nodes) AND source_id != ?"
        " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)",
        (source_id,),
    )


# ---------------------------------------------------------------------------------------------
# What a format's ``finalize`` reads back: the source as imported so far in this transaction.


@dataclass(frozen=True)
class SourceView:
    """Reads of one source's current records, for records derived from the whole source."""

    conn: sqlite3.Connection
    source_id: int

    def file_nodes(self) -> list[tuple[str, list[str]]]:
        """(id, tags) of every node read from a file (not derived)."""
        return [
            (r[0], json.loads(r[1]))
            for r in self.conn.execute("SELECT id, tags FROM nodes WHERE source_id = ? AND file != ''", (self.source_id,))
        ]

    def keys(self, kinds: tuple[str, ...], *, node_types: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
        """(key, kind, node id) of the names of these kinds, best claim first (priority, then the
        shorter id, then the id); with ``node_types``, only file nodes of those types."""
        kind_marks = ",".join("?" * len(kinds))
        sql = (
            "SELECT k.key, k.kind, k.node_id FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            f" WHERE k.source_id = ? AND k.kind IN ({kind_marks})"
        )
        params: list[object] = [self.source_id, *kinds]
        if node_types:
            sql += f" AND n.file != '' AND n.type IN ({','.join('?' * len(node_types))})"
            params += node_types
        sql += " ORDER BY k.priority, length(k.node_id), k.node_id"
        return [(r[0], r[1], r[2]) for r in self.conn.execute(sql, params)]
