"""An import session on PostgreSQL: the ``ImportSession`` protocol (ctx.store.protocols).

One session is one transaction, opened by ``PostgresStore.import_session`` after taking the
graph's write lock (an advisory lock: one writer at a time, whatever machine it runs on; readers
never wait). Rows go in by ``COPY`` into a temporary staging table and then into the graph with
their ``tsvector`` made in the same statement, so no row is written twice.

Ids the other engine gives by its own rules are given the same way here: a source's id and a
passage's id are the largest so far plus one (SQLite's INTEGER PRIMARY KEY), under the lock.
PostgreSQL text cannot hold NUL: a NUL in a title or body is stored as U+FFFD.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.store.postgres import tokens as fts_tokens
from ctx.store.records import content_hash, tag_node_id
from ctx.store.types import EdgeRecord, FileRecord, NodeRecord, Removed, Settled, Written

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from ctx.config import PrivacyConfig, PrivacyRules
    from ctx.store.protocols import KeyNormalizer, SourceRecords, StreamedWrites, TokenCounter

_ROWS_CHUNK = 5000
DANGLING_LISTED = 20
TRUE_VALUES = ("true", "yes", "1", "on")

_NODE_STAGE = (
    "CREATE TEMP TABLE IF NOT EXISTS ctx_stage_nodes (ord integer, id text, title text, body text, type text,"
    " tags text, fields text, aliases text, source_id integer, source_path text, file text, parent_id text,"
    " position bigint, created double precision, updated double precision, content_hash text, tokens integer,"
    " fts text, fts_tf text, fts_length integer) ON COMMIT DROP"
)
_NODE_COLUMNS = (
    "id, title, body, type, tags, fields, aliases, source_id, source_path, file, parent_id, position, created,"
    " updated, content_hash, tokens"
)


def _text(value: str | None) -> str | None:
    return value.replace("\x00", "\ufffd") if value and "\x00" in value else value


def _json(value: list[str] | dict[str, list[str]]) -> str:
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    return _text(json.dumps(value, ensure_ascii=False)) or ""


class PostgresSession:
    """The ordered writes of one import (or removal, or embedding) in one transaction."""

    def __init__(self, conn: "psycopg.Connection[Any]") -> None:
        self.conn = conn

    def _one(self, sql: str, params: Any = None) -> tuple[Any, ...] | None:
        return self.conn.execute(sql, params).fetchone()

    def _copy(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        with self.conn.cursor().copy(sql) as copy:
            for row in rows:
                copy.write_row(row)

    # -- sources and files ------------------------------------------------------------------------

    def ensure_source(self, root: Path, fmt: str) -> int:
        row = self._one("SELECT id FROM sources WHERE root = %s", (str(root),))
        if row is not None:
            return int(row[0])
        new = self._one(
            "INSERT INTO sources (id, root, name, format)"
            " SELECT COALESCE(MAX(id), 0) + 1, %s, %s, %s FROM sources RETURNING id",
            (str(root), root.stem if root.is_file() else root.name, fmt),
        )
        return int(new[0])  # type: ignore[index]

    def forget_files(self, source_id: int, replaced: list[str], vanished: list[str]) -> None:
        gone = replaced + vanished
        if gone and self._one("SELECT 1 FROM files WHERE source_id = %s LIMIT 1", (source_id,)):
            self._delete_file_records(source_id, gone)
        if vanished:
            self.conn.execute("DELETE FROM files WHERE source_id = %s AND path = ANY(%s)", (source_id, vanished))

    def _delete_file_records(self, source_id: int, files: list[str]) -> None:
        doomed = "SELECT id FROM nodes WHERE source_id = %s AND file = ANY(%s)"
        self.conn.execute(f"DELETE FROM node_keys WHERE node_id IN ({doomed})", (source_id, files))
        self.conn.execute(f"DELETE FROM passages WHERE node_id IN ({doomed})", (source_id, files))
        self.conn.execute("DELETE FROM nodes WHERE source_id = %s AND file = ANY(%s)", (source_id, files))
        self.conn.execute("DELETE FROM edges WHERE source_id = %s AND file = ANY(%s)", (source_id, files))

    def record_files(self, source_id: int, files: list[FileRecord]) -> None:
        if not files:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO files (source_id, path, mtime_ns, size, hash) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (source_id, path) DO UPDATE SET mtime_ns = excluded.mtime_ns, size = excluded.size,"
                " hash = excluded.hash",
                [(source_id, *f) for f in files],
            )

    def forget_derived(self, source_id: int) -> None:
        self._delete_file_records(source_id, [""])

    def defer_indexes(self) -> None:
        """Nothing: PostgreSQL's indexes take COPY's rows well enough, and dropping them would
        need the table's owner (a writer role may not be)."""

    def build_deferred_indexes(self) -> None:
        pass

    # -- records ---------------------------------------------------------------------------------

    def insert_records(
        self,
        source_id: int,
        nodes: list[tuple[str, NodeRecord]],
        edges: list[tuple[str, EdgeRecord]],
        *,
        count: TokenCounter,
        normalize_key: KeyNormalizer,
    ) -> Written:
        written = Written()
        if not nodes and not edges:
            return written
        renamed = written.renamed
        seen: set[str] = set()
        tried: dict[str, int] = {}
        taken = self._existing_ids([n.id for _, n in nodes])
        for rel, node in nodes:
            if node.id in seen or node.id in taken:
                new_id = self._unique_id(f"{node.id}~{rel or 'derived'}", seen, tried)
                written.warnings.append(f"{rel or 'derived'}: duplicate node id {node.id!r}; stored as {new_id!r}")
                renamed[node.id] = new_id
                node.id = new_id
            seen.add(node.id)
        for start in range(0, len(nodes), _ROWS_CHUNK):
            self._insert_nodes(source_id, nodes[start : start + _ROWS_CHUNK], renamed, count, normalize_key)
        self._insert_edges(source_id, edges, renamed)
        tag_edges = _tag_edges(nodes)
        self._insert_edges(source_id, tag_edges, renamed)
        written.nodes = len(nodes)
        written.edges = len(edges) + len(tag_edges)
        return written

    def _existing_ids(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        return {r[0] for r in self.conn.execute("SELECT id FROM nodes WHERE id = ANY(%s)", (ids,))}

    def _unique_id(self, wanted: str, seen: set[str], tried: dict[str, int]) -> str:
        n = tried.get(wanted, 1)
        candidate = wanted if n == 1 else f"{wanted}~{n}"
        while candidate in seen or self._one("SELECT 1 FROM nodes WHERE id = %s", (candidate,)):
            n += 1
            candidate = f"{wanted}~{n}"
        tried[wanted] = n
        return candidate

    def _insert_nodes(
        self,
        source_id: int,
        nodes: list[tuple[str, NodeRecord]],
        renamed: dict[str, str],
        count: TokenCounter,
        normalize_key: KeyNormalizer,
    ) -> None:
        token_counts = count([f"{n.title}\n{n.body}" for _, n in nodes])
        node_rows = []
        key_rows: list[tuple[int, str, str, str, int]] = []
        for ord_, ((rel, node), tokens) in enumerate(zip(nodes, token_counts, strict=True)):
            node_rows.append((
                ord_, _text(node.id), _text(node.title), _text(node.body), node.type, _json(node.tags),
                _json(node.fields), _json(node.aliases), source_id, _text(node.source_path), rel,
                renamed.get(node.parent_id, node.parent_id) if node.parent_id else None,
                node.position, node.created, node.updated, content_hash(node), tokens,
            ))
            keys = {(node.id, "id", 0)}
            if node.title_is_key:
                keys.add((normalize_key(node.title), "title", 10))
            keys.update((normalize_key(a), "alias", 20) for a in node.aliases)
            keys.update(node.keys)
            key_rows.extend((source_id, _text(k) or "", node.id, kind, prio) for k, kind, prio in keys if k)
        self._stage_nodes(node_rows)
        # Keys in a stable order (a set above): the rows are the same whatever Python's hashing.
        key_rows.sort(key=lambda r: (r[2], r[3], r[1], r[4]))
        self._copy("COPY node_keys (source_id, key, node_id, kind, priority) FROM STDIN", key_rows)

    def _stage_nodes(self, node_rows: list[tuple[Any, ...]]) -> None:
        self.conn.execute(_NODE_STAGE)
        self.conn.execute("TRUNCATE ctx_stage_nodes")
        # Each node's full-text index row, cut by FTS5's tokenizer (ctx.store.postgres.tokens):
        # title, aliases (their JSON text, as SQLite's index reads the column) and body.
        indexed = fts_tokens.index_rows(fts_tokens.NODES, [(r[2], r[7], r[3]) for r in node_rows])
        self._copy(
            f"COPY ctx_stage_nodes (ord, {_NODE_COLUMNS}, fts, fts_tf, fts_length) FROM STDIN",
            ((*row, x.vector, x.tf, x.length) for row, x in zip(node_rows, indexed, strict=True)),
        )
        self.conn.execute(
            f"INSERT INTO nodes ({_NODE_COLUMNS}, fts, fts_tf, fts_length)"
            f" SELECT {_NODE_COLUMNS}, fts::tsvector, fts_tf::jsonb, fts_length FROM ctx_stage_nodes ORDER BY ord"
        )

    def _insert_edges(self, source_id: int, edges: list[tuple[str, EdgeRecord]], renamed: dict[str, str]) -> None:
        if not edges:
            return
        self._copy(
            "COPY edges (source_id, file, src, type, target, by_id, label, position) FROM STDIN",
            (
                (
                    source_id, rel, renamed.get(e.src, e.src), e.type,
                    _text(renamed.get(e.target, e.target) if e.by_id else e.target),
                    1 if e.by_id else 0, _text(e.label), e.position,
                )
                for rel, e in edges
            ),
        )

    def streamed_file(self, source_id: int, rel: str, *, count: TokenCounter, normalize_key: KeyNormalizer) -> StreamedWrites:
        return PostgresStreamedFile(self, source_id, rel, count=count, normalize_key=normalize_key)

    def file_savepoint(self) -> AbstractContextManager[None]:
        return self._savepoint()

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        with self.conn.transaction():
            yield

    def source_records(self, source_id: int) -> SourceRecords:
        return PostgresSourceRecords(self.conn, source_id)

    def insert_tag_nodes(self, source_id: int, count: TokenCounter) -> None:
        rows = self.conn.execute(
            "SELECT DISTINCT v #>> '{}' FROM nodes n, json_array_elements(n.tags::json) AS e(v)"
            " WHERE n.source_id = %s AND json_typeof(v) = 'string'",
            (source_id,),
        ).fetchall()
        tags = sorted(
            {r[0].strip().lstrip("#") for r in rows if r[0] and r[0].strip().lstrip("#")},
            key=lambda tag: (tag.lower(), tag),
        )
        wanted: dict[str, str] = {}
        for tag in tags:
            wanted.setdefault(tag_node_id(tag), tag)
        existing = self._existing_ids(list(wanted))
        new_nodes = [
            NodeRecord(id=node_id, title=f"#{tag}", type="tag") for node_id, tag in wanted.items() if node_id not in existing
        ]
        if not new_nodes:
            return
        tokens = count([n.title for n in new_nodes])
        self._stage_nodes([
            (i, n.id, n.title, "", "tag", "[]", "{}", "[]", source_id, None, "", None, None, None, None,
             content_hash(n), t)
            for i, (n, t) in enumerate(zip(new_nodes, tokens, strict=True))
        ])
        self._copy(
            "COPY node_keys (source_id, key, node_id, kind, priority) FROM STDIN",
            [(source_id, n.title.lower(), n.id, "title", 90) for n in new_nodes],
        )

    def resolve_edges(self, source_id: int) -> None:
        self.conn.execute(
            "UPDATE edges SET dst = (SELECT n.id FROM nodes n WHERE n.id = edges.target)"
            " WHERE source_id = %s AND by_id = 1",
            (source_id,),
        )
        self.conn.execute(
            "UPDATE edges SET dst = (SELECT k.node_id FROM node_keys k"
            " WHERE k.key = edges.target AND k.kind <> 'id' AND k.source_id = edges.source_id"
            " ORDER BY k.priority, length(k.node_id), k.node_id LIMIT 1)"
            " WHERE source_id = %s AND by_id <> 1",
            (source_id,),
        )
        self.conn.execute(
            "UPDATE edges SET dst = NULL WHERE dst IS NOT NULL AND source_id <> %s"
            " AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)",
            (source_id,),
        )

    def refresh_private_flags(self, config: PrivacyConfig | PrivacyRules) -> int:
        from ctx.store.postgres.privacy import refresh_private_flags

        return refresh_private_flags(self.conn, config)

    def refresh_passages(self, progress: Callable[[int, int], None] | None = None) -> int:
        from ctx.store.postgres.passages import refresh

        return refresh(self.conn, progress)

    def mark_imported(self, source_id: int, fmt: str) -> None:
        now = time.time()
        self.conn.execute(
            "UPDATE sources SET imported_at = %s, checked_at = %s, format = %s WHERE id = %s", (now, now, fmt, source_id)
        )
        self.bump_graph_version()
        self.set_setting("last_import", str(now))
        # Every file's state in one digest that any role may read: row security hides a private
        # note's file record from a reader, whose freshness check would otherwise take that file
        # for a new one and call the source changed for ever (ctx.freshness.source_changed).
        from ctx.digest import FILES_DIGEST_KEY, file_states_digest

        states = self.conn.execute("SELECT path, mtime_ns, size FROM files WHERE source_id = %s", (source_id,))
        self.set_setting(f"{FILES_DIGEST_KEY}{source_id}",
                         file_states_digest((str(p), int(m), int(z)) for p, m, z in states))

    def bump_graph_version(self) -> None:
        self.conn.execute("UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'graph_version'")

    def recount(self) -> None:
        from ctx.store.postgres import counts, fulltext

        counts.recount(self.conn)
        fulltext.store_totals(self.conn)

    def remove_source(self, source_id: int, config: PrivacyConfig | PrivacyRules) -> Removed:
        conn = self.conn
        row = self._one("SELECT root FROM sources WHERE id = %s", (source_id,))
        if row is None:
            raise KeyError(source_id)
        heir = (
            "SELECT MIN(e.source_id) FROM edges e"
            " WHERE e.dst = nodes.id AND e.type = 'tag' AND e.source_id <> %(source)s"
        )
        kept = conn.execute(
            f"UPDATE nodes SET source_id = ({heir}) WHERE source_id = %(source)s AND type = 'tag'"
            f" AND file = '' AND ({heir}) IS NOT NULL",
            {"source": source_id},
        ).rowcount
        conn.execute(
            "UPDATE node_keys SET source_id = (SELECT n.source_id FROM nodes n WHERE n.id = node_keys.node_id)"
            " WHERE source_id = %s AND node_id IN (SELECT id FROM nodes WHERE source_id <> %s)",
            (source_id, source_id),
        )
        conn.execute("DELETE FROM node_keys WHERE node_id IN (SELECT id FROM nodes WHERE source_id = %s)", (source_id,))
        conn.execute("DELETE FROM node_keys WHERE source_id = %s", (source_id,))
        conn.execute("DELETE FROM passages WHERE node_id IN (SELECT id FROM nodes WHERE source_id = %s)", (source_id,))
        nodes = conn.execute("DELETE FROM nodes WHERE source_id = %s", (source_id,)).rowcount
        edges = conn.execute("DELETE FROM edges WHERE source_id = %s", (source_id,)).rowcount
        files = conn.execute("DELETE FROM files WHERE source_id = %s", (source_id,)).rowcount
        vectors = conn.execute(
            "DELETE FROM embeddings WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = embeddings.node_id)"
        ).rowcount
        conn.execute(
            "DELETE FROM passage_vectors WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.hash = passage_vectors.hash)"
        )
        conn.execute(
            "DELETE FROM paragraph_vectors v WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.hash = v.passage_hash)"
        )
        conn.execute(
            "UPDATE edges SET dst = NULL WHERE dst IS NOT NULL AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = edges.dst)"
        )
        conn.execute("DELETE FROM sources WHERE id = %s", (source_id,))
        from ctx.digest import FILES_DIGEST_KEY

        conn.execute("DELETE FROM meta WHERE key = %s", (f"{FILES_DIGEST_KEY}{source_id}",))
        self.bump_graph_version()
        self.refresh_private_flags(config)
        self.recount()
        return Removed(row[0], nodes, edges, files, vectors, kept)

    # -- settings and vectors --------------------------------------------------------------------

    def set_setting(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def set_active_model(self, model: str) -> None:
        self.set_setting("embedding_model", model)

    def write_vectors(self, model: str, rows: Iterable[tuple[str, str, np.ndarray]]) -> int:
        from ctx.store.postgres.vector_text import vector_text

        data = [(node_id, model, int(v.shape[0]), h, vector_text(v)) for node_id, h, v in rows]
        if not data:
            return 0
        # Replaced, not updated: seq grows, as SQLite's REPLACE makes it (caches key on it).
        self.conn.execute("DELETE FROM embeddings WHERE node_id = ANY(%s)", ([d[0] for d in data],))
        self._copy("COPY embeddings (node_id, model, dim, content_hash, vector) FROM STDIN", data)
        return len(data)

    # Paragraph vectors (migration 20), as SQLite's ``ctx.store.vectors`` writes them.

    def write_paragraph_vectors(self, model: str, rows: list[tuple[str, str, np.ndarray]]) -> None:
        from ctx.store.postgres.vector_text import vector_text

        if not rows:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO paragraph_vectors (model, passage_hash, hash, dim, vector) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (model, passage_hash, hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                [(model, ph, h, int(v.shape[0]), vector_text(v)) for ph, h, v in rows],
            )

    def prune_paragraph_vectors(self, model: str, stale: list[tuple[str, str]] | None = None) -> int:
        """Another model's, a passage's no longer there (edited or deleted), and ``stale``'s
        (passage hash, paragraph hash) pairs of ``model`` (their note is no longer a dated log);
        run after the copies, so that an edited passage's unchanged paragraphs took theirs over
        first."""
        dropped = int(self.conn.execute(
            "DELETE FROM paragraph_vectors v WHERE v.model <> %s"
            " OR NOT EXISTS (SELECT 1 FROM passages p WHERE p.hash = v.passage_hash)",
            (model,),
        ).rowcount)
        if stale:
            dropped += int(self.conn.execute(
                "DELETE FROM paragraph_vectors v USING unnest(%s::text[], %s::text[]) AS s(passage_hash, hash)"
                " WHERE v.model = %s AND v.passage_hash = s.passage_hash AND v.hash = s.hash",
                ([ph for ph, _ in stale], [h for _, h in stale], model),
            ).rowcount)
        return dropped

    def copy_paragraph_vectors(self, model: str, rows: list[tuple[str, str]]) -> int:
        """Each (passage hash, paragraph hash) gets the vector its paragraph text has under another
        passage, in one statement; a pair already stored is left as it is."""
        if not rows:
            return 0
        return int(self.conn.execute(
            "INSERT INTO paragraph_vectors (model, passage_hash, hash, dim, vector)"
            " SELECT DISTINCT ON (w.passage_hash, w.hash) v.model, w.passage_hash, v.hash, v.dim, v.vector"
            " FROM unnest(%s::text[], %s::text[]) AS w(passage_hash, hash)"
            " JOIN paragraph_vectors v ON v.model = %s AND v.hash = w.hash"
            " ORDER BY w.passage_hash, w.hash ON CONFLICT DO NOTHING",
            ([ph for ph, _ in rows], [h for _, h in rows], model),
        ).rowcount)

    def write_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        from ctx.store.postgres.vector_text import vector_text

        if not rows:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO passage_vectors (model, hash, dim, vector) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (model, hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                [(model, h, int(v.shape[0]), vector_text(v)) for h, v in rows],
            )

    def index_vectors(self, model: str) -> bool:
        from ctx.store.postgres import hnsw

        return hnsw.build(self.conn, model)

    def prune_orphan_vectors(self, model: str | None = None, also_keep: str | None = None) -> int:
        dropped = self.conn.execute(
            "DELETE FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id)"
        ).rowcount
        if model is not None:
            self.conn.execute(
                "DELETE FROM passage_vectors v WHERE v.model NOT IN (%s, %s)"
                " OR NOT EXISTS (SELECT 1 FROM passages p WHERE p.hash = v.hash)",
                (model, also_keep or model),
            )
        return dropped


def _tag_edges(nodes: list[tuple[str, NodeRecord]]) -> list[tuple[str, EdgeRecord]]:
    out = []
    for rel, node in nodes:
        for position, tag in enumerate(dict.fromkeys(node.tags)):
            if tag.strip().lstrip("#"):
                out.append((rel, EdgeRecord(node.id, "tag", tag_node_id(tag), by_id=True, position=position)))
    return out


class PostgresSourceRecords:
    def __init__(self, conn: "psycopg.Connection[Any]", source_id: int) -> None:
        self.conn, self.source_id = conn, source_id

    def file_nodes(self) -> list[tuple[str, list[str]]]:
        return [
            (r[0], json.loads(r[1]))
            for r in self.conn.execute(
                "SELECT id, tags FROM nodes WHERE source_id = %s AND file <> '' ORDER BY seq", (self.source_id,)
            )
        ]

    def keys(self, kinds: tuple[str, ...], *, node_types: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
        sql = (
            "SELECT k.key, k.kind, k.node_id FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            " WHERE k.source_id = %s AND k.kind = ANY(%s)"
        )
        params: list[Any] = [self.source_id, list(kinds)]
        if node_types:
            sql += " AND n.file <> '' AND n.type = ANY(%s)"
            params.append(list(node_types))
        sql += " ORDER BY k.priority, length(k.node_id), k.node_id"
        return [(r[0], r[1], r[2]) for r in self.conn.execute(sql, params)]


class PostgresStreamedFile:
    """One file's records written a batch at a time; edges held in a temporary table until
    ``settle`` (the SQLite engine's ``ctx.store.streamed``, in PostgreSQL's words)."""

    def __init__(
        self, session: PostgresSession, source_id: int, rel: str, *, count: TokenCounter, normalize_key: KeyNormalizer
    ) -> None:
        self.session, self.conn = session, session.conn
        self.source_id, self.rel = source_id, rel
        self.count, self.normalize_key = count, normalize_key
        self.renames = 0
        self.conn.execute("DROP TABLE IF EXISTS ctx_streamed_edges")
        self.conn.execute("DROP TABLE IF EXISTS ctx_streamed_renames")
        self.conn.execute(
            "CREATE TEMP TABLE ctx_streamed_edges (seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, src text,"
            " type text, target text, by_id integer, label text, position bigint) ON COMMIT DROP"
        )
        self.conn.execute("CREATE TEMP TABLE ctx_streamed_renames (old text PRIMARY KEY, new text) ON COMMIT DROP")

    def known_ids(self, ids: Iterable[str]) -> set[str]:
        wanted = list(ids)
        if not wanted:
            return set()
        found = {
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM nodes WHERE id = ANY(%s) AND source_id = %s AND file = %s",
                (wanted, self.source_id, self.rel),
            )
        }
        if self.renames:
            found.update(r[0] for r in self.conn.execute("SELECT old FROM ctx_streamed_renames WHERE old = ANY(%s)", (wanted,)))
        return found

    def add(self, nodes: list[NodeRecord], edges: list[EdgeRecord]) -> Written:
        written = self.session.insert_records(
            self.source_id, [(self.rel, n) for n in nodes], [], count=self.count, normalize_key=self.normalize_key
        )
        if written.renamed:
            with self.conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO ctx_streamed_renames (old, new) VALUES (%s, %s)"
                    " ON CONFLICT (old) DO UPDATE SET new = excluded.new",
                    list(written.renamed.items()),
                )
            self.renames += len(written.renamed)
        self.session._copy(
            "COPY ctx_streamed_edges (src, type, target, by_id, label, position) FROM STDIN",
            [(e.src, e.type, _text(e.target), 1 if e.by_id else 0, _text(e.label), e.position) for e in edges],
        )
        return written

    def settle(self) -> Settled:
        conn, out = self.conn, Settled()
        conn.execute(
            "DELETE FROM ctx_streamed_edges s WHERE seq NOT IN"
            " (SELECT MIN(seq) FROM ctx_streamed_edges GROUP BY src, type, target)"
        )
        held = int(conn.execute("SELECT count(*) FROM ctx_streamed_edges").fetchone()[0])  # type: ignore[index]
        mine = "EXISTS (SELECT 1 FROM nodes n WHERE n.id = COALESCE(rs.new, s.src) AND n.source_id = %s AND n.file = %s)"
        out.edges = conn.execute(
            "INSERT INTO edges (source_id, file, src, type, target, by_id, label, position)"
            " SELECT %s, %s, COALESCE(rs.new, s.src), s.type,"
            " CASE WHEN s.by_id = 1 THEN COALESCE(rt.new, s.target) ELSE s.target END, s.by_id, s.label, s.position"
            " FROM ctx_streamed_edges s"
            " LEFT JOIN ctx_streamed_renames rs ON rs.old = s.src"
            " LEFT JOIN ctx_streamed_renames rt ON rt.old = s.target AND s.by_id = 1"
            f" WHERE {mine} ORDER BY s.seq",
            (self.source_id, self.rel, self.source_id, self.rel),
        ).rowcount
        out.dangling_total = held - out.edges
        if out.dangling_total:
            out.dangling = [
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT s.type, s.src FROM ctx_streamed_edges s LEFT JOIN ctx_streamed_renames rs ON rs.old = s.src"
                    f" WHERE NOT {mine} ORDER BY s.seq LIMIT %s",
                    (self.source_id, self.rel, DANGLING_LISTED),
                )
            ]
        if self.renames:
            conn.execute(
                "UPDATE nodes SET parent_id = r.new FROM ctx_streamed_renames r"
                " WHERE nodes.source_id = %s AND nodes.file = %s AND nodes.parent_id = r.old",
                (self.source_id, self.rel),
            )
        conn.execute("DROP TABLE ctx_streamed_edges")
        conn.execute("DROP TABLE ctx_streamed_renames")
        return out
