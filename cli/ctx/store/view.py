"""A graph as one reader may see it: the SQLite engine's ``GraphReader`` (``ctx.store.protocols``).

Visibility is a property of the handle, not an argument.

Private nodes (``nodes.private``) are withheld from every output unless the user explicitly
includes them. Rather than a flag threaded through every function of every stage, the assembler
and the semantic layer read through a ``GraphView`` that knows whether private nodes may be seen:
each read that can meet a node filters it here, so no stage can forget to.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Container, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.store import hub_scan, reads
from ctx.store.batches import CHUNK, chunks
from ctx.edges import canonical_and_direction
from ctx.store.outline import outline_of
from ctx.store.transaction import savepoint
from ctx.store.types import (
    Crumb,
    EdgeView,
    EmbeddingStatus,
    FileState,
    Neighbour,
    Node,
    RankedNeighbour,
    ScanTable,
    NodeFacts,
    NodeText,
    Outline,
    PassageHit,
    SearchHit,
    Source,
    StoredPassage,
)

if TYPE_CHECKING:
    from ctx.store.protocols import NeighbourOrder
    import numpy as np

    from ctx.config import PrivacyConfig, PrivacyRules

def conn_has(conn: sqlite3.Connection, sql: str) -> bool:
    return conn.execute(sql).fetchone() is not None


class ConnectionMarks:
    """One connection, by identity (a warm cache holding this can never mistake another
    connection for it), and how many rows it changed that no build reads back as graph content:
    the walk's temporary table, the query-vector cache, settings (``GraphView.warm_state``).

    ``family``: None, or a value shared by connections that one process keeps open on one graph
    file, all dropped together when the file is replaced (the MCP server's pool): a connection
    that changed no row itself then keys what a warm process keeps like the others of its family
    (``GraphView.warm_state``), so that a call on any of them finds what calls on the others kept."""

    __slots__ = ("quiet", "family", "calls", "state", "__weakref__")

    def __init__(self) -> None:
        self.quiet = 0
        self.family: Hashable | None = None
        # Within ``GraphView.one_state``: how deep, and the state read first with the connection's
        # change counts it was read at (total, quiet).
        self.calls = 0
        self.state: tuple[int, int, tuple[Hashable, tuple[str, int], int, int]] | None = None


@dataclass
class GraphView:
    conn: sqlite3.Connection
    include_private: bool = False
    _has_private: bool | None = field(default=None, repr=False)
    # The connection's identity and its quiet rows, shared by all the views of one store.
    marks: ConnectionMarks = field(default_factory=lambda: ConnectionMarks(), repr=False)
    # What this reader learned of the schema (``fts.schema_has``: which private indexes and text
    # views exist). A view serves one build, like ``_has_private``: each search and count of a
    # build asked again otherwise.
    _schema: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)

    def where_visible(self, alias: str = "") -> str:
        """SQL condition that hides private nodes (``alias`` is a table alias with its dot)."""
        return "1" if self.include_private else f"{alias}private = 0"

    # -- visibility ------------------------------------------------------------------------------

    def has_private_nodes(self) -> bool:
        if self._has_private is None:
            self._has_private = (
                self.conn.execute("SELECT 1 FROM nodes WHERE private = 1 LIMIT 1").fetchone() is not None
            )
        return self._has_private

    def hidden_total(self) -> int:
        """How many nodes this view hides: a nearest-neighbour search over every vector fetches
        this many more, so that after leaving hidden ones out it has as many visible hits as the
        graph without them would give (a pool short by the private nodes near the query would say
        where private notes lie)."""
        if self.include_private or not self.has_private_nodes():
            return 0
        return int(self.conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0])

    def hidden_passages_total(self) -> int:
        """How many passages belong to nodes this view hides (see ``hidden_total``)."""
        if self.include_private or not self.has_private_nodes():
            return 0
        return int(
            self.conn.execute(
                "SELECT COUNT(*) FROM passages p WHERE p.node_id IN (SELECT id FROM nodes WHERE private = 1)"
            ).fetchone()[0]
        )

    def private_among(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are private nodes (whatever this view may show)."""
        out: set[str] = set()
        # Most graphs hold no private node: one step of the private index says so (~10 µs),
        # where each id's own step costs ~1-2 µs (a walk's ~500-2,000 reached nodes). Asked
        # each time, never kept: an import may mark a node private under a long-lived view.
        if self.conn.execute("SELECT 1 FROM nodes WHERE private = 1 LIMIT 1").fetchone() is None:
            return out
        for chunk in chunks(sorted(set(ids))):
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0] for r in self.conn.execute(f"SELECT id FROM nodes WHERE private = 1 AND id IN ({marks})", chunk)
            )
        return out

    def hidden_among(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` this view may not show."""
        return set() if self.include_private else self.private_among(ids)

    def visible_ids(self, ids: list[str]) -> set[str]:
        """The ids that exist and may be shown."""
        out: set[str] = set()
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0] for r in self.conn.execute(
                    f"SELECT id FROM nodes WHERE id IN ({marks}) AND {self.where_visible()}", chunk
                )
            )
        return out

    # -- finding nodes ---------------------------------------------------------------------------

    def node_exists(self, node_id: str) -> bool:
        return self.conn.execute(
            f"SELECT 1 FROM nodes WHERE id = ? AND {self.where_visible()}", (node_id,)
        ).fetchone() is not None

    def find_by_name(self, text: str) -> list[str]:
        return reads.find_by_name(self.conn, text, include_private=self.include_private)

    def find_by_path(self, text: str) -> list[str]:
        return reads.find_by_path(self.conn, text, include_private=self.include_private)

    def name_keys_of(self, ids: list[str]) -> list[tuple[str, str]]:
        return reads.name_keys_of(self.conn, ids, include_private=self.include_private)

    def find_mentions(self, text: str) -> list[str]:
        return reads.find_mentions(self.conn, text, include_private=self.include_private)

    def search(self, text: str, *, limit: int = 20, mode: str = "auto", snippets: bool = True) -> list[SearchHit]:
        return reads.search(
            self.conn, text, limit=limit, mode=mode, include_private=self.include_private, snippets=snippets,
            known=self._schema,
        )

    def notes_matching(self, word: str, *, at_most: int) -> int:
        """How many visible nodes full-text search finds ``word`` in, counted up to ``at_most``."""
        return reads.count_matches(
            self.conn, word, at_most=at_most, include_private=self.include_private, known=self._schema
        )

    # -- walking ---------------------------------------------------------------------------------

    def walk_edges(
        self, ids: list[str], column: str
    ) -> list[tuple[str, str, str, str, str | None, float | None, str]]:
        """(src, dst, type) of resolved edges whose ``column`` (src or dst) is one of ``ids``, with
        the type, tags, updated time and title of the node at the other end (what bounds its score,
        read in the same pass).

        The node at the other end must exist and be visible: a private node is never reached, so
        nothing behind it leaks through the walk either.
        """
        other = "dst" if column == "src" else "src"
        visible = "" if self.include_private else " AND n.private = 0"
        rows: list[tuple[str, str, str, str, str | None, float | None, str]] = []
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(
                self.conn.execute(
                    f"SELECT e.src, e.dst, e.type, n.type, n.tags, n.updated, n.title"
                    f" FROM edges e JOIN nodes n ON n.id = e.{other}"
                    f" WHERE e.{column} IN ({marks}){visible}",
                    chunk,
                ).fetchall()
            )
        return rows

    def edge_ends(self, ids: list[str], column: str) -> list[tuple[str, str, str]]:
        """(src, dst, type) of resolved edges whose ``column`` is one of ``ids``: ``walk_edges``
        without the join with ``nodes`` (an index-only read: ~1 against ~7 us a row at 100k nodes);
        the other end may be hidden."""
        other = "dst" if column == "src" else "src"
        rows: list[tuple[str, str, str]] = []
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(
                self._tuples(f"SELECT src, dst, type FROM edges WHERE {column} IN ({marks}) AND {other} IS NOT NULL", chunk)
            )
        return rows

    def edge_lists(self, node_id: str, column: str) -> list[tuple[str, list[str]]]:
        """``GraphReader.edge_lists``: each type's other ends made into one JSON array in SQLite
        (the index's order: it is led by ``column``, then type, then the other end) and parsed by
        ``json``, ~0.13 us a link against ~0.5 as ``edge_ends``' rows at 100k nodes (a tuple made
        and taken apart per link). Where SQLite has no JSON functions, from those rows."""
        other = "dst" if column == "src" else "src"
        try:
            rows = self._tuples(
                f"SELECT type, json_group_array({other}) FROM edges WHERE {column} = ? AND {other} IS NOT NULL"
                f" AND {other} != ? GROUP BY type ORDER BY type",
                (node_id, node_id),
            )
        except sqlite3.OperationalError as exc:
            if "no such function" not in str(exc):
                raise
            far = 1 if column == "src" else 0
            grouped: dict[str, list[str]] = {}
            for row in sorted(self.edge_ends([node_id], column), key=lambda r: (r[2], r[far])):
                if row[far] != node_id:
                    grouped.setdefault(row[2], []).append(row[far])
            return sorted(grouped.items())
        return [(etype, json.loads(others)) for etype, others in rows]

    def _tuples(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """``conn.execute(...).fetchall()`` as plain tuples: the connection makes a ``sqlite3.Row``
        of every row, which costs more than the row where a warm process reads thousands."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params).fetchall()

    def walk_details(self, ids: list[str] | None = None) -> list[tuple[str, str, str | None, float | None, str]]:
        """(id, type, tags, updated, title) of the visible nodes among ``ids`` (all when None)."""
        visible = "" if self.include_private else "private = 0"
        if ids is None:
            return self._tuples("SELECT id, type, tags, updated, title FROM nodes" + (f" WHERE {visible}" if visible else ""))
        rows: list[tuple[str, str, str | None, float | None, str]] = []
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(
                self._tuples(
                    f"SELECT id, type, tags, updated, title FROM nodes WHERE id IN ({marks})"
                    + (f" AND {visible}" if visible else ""),
                    chunk,
                )
            )
        return rows

    def degrees(self, ids: list[str], column: str, at_most: int | None = None) -> dict[str, int]:
        """How many edges each of ``ids`` has on ``column`` (src: outgoing, dst: incoming), hidden
        or unresolved ends included: an index-only count, to tell a hub from an ordinary node
        (each counted only up to ``at_most``, when given)."""
        out: dict[str, int] = {}
        if at_most is not None:
            rows = self.conn.execute(
                f"SELECT j.value, (SELECT COUNT(*) FROM (SELECT 1 FROM edges WHERE {column} = j.value LIMIT ?))"
                " FROM json_each(?) j",
                (at_most, json.dumps(sorted(set(ids)))),
            )
            return {node_id: n for node_id, n in rows if n}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            out.update(
                self.conn.execute(
                    f"SELECT {column}, COUNT(*) FROM edges WHERE {column} IN ({marks}) GROUP BY {column}", chunk
                ).fetchall()
            )
        return out

    def edge_classes(self, node_id: str) -> list[tuple[str, str]]:
        """The (type, direction) pairs of the node's edges: out as stored, in walked backwards."""
        return [(t, "out") for t in self._edge_types(node_id, "src")] + [
            (t, "in") for t in self._edge_types(node_id, "dst")
        ]

    def _edge_types(self, node_id: str, column: str) -> list[str]:
        """The distinct types of the node's edges on ``column``, sorted: one index step per type
        (DISTINCT would read every one of a 40,000-note tag's index entries)."""
        types: list[str] = []
        while True:
            after = "type > ?" if types else "type >= ?"  # every text is >= '' (an empty type too)
            row = self.conn.execute(
                f"SELECT type FROM edges WHERE {column} = ? AND {after} ORDER BY type LIMIT 1",
                (node_id, types[-1] if types else ""),
            ).fetchone()
            if row is None:
                return types
            types.append(row[0])

    def _around(self, node_id: str, classes: Iterable[tuple[str, str]]) -> tuple[str, list[object]]:
        """SQL for the node's edges of ``classes`` as (other, type, dir) rows, and its parameters."""
        parts: list[str] = []
        params: list[object] = []
        for direction, near, far in (("out", "src", "dst"), ("in", "dst", "src")):
            types = sorted({t for t, d in classes if d == direction})
            if types:
                marks = ",".join("?" * len(types))
                parts.append(
                    f"SELECT {far} AS other, type, '{direction}' AS dir FROM edges"
                    f" WHERE {near} = ? AND type IN ({marks}) AND {far} != ?"
                )
                params += [node_id, *types, node_id]
        return " UNION ALL ".join(parts) or "SELECT NULL AS other, NULL AS type, NULL AS dir WHERE 0", params

    def remember_reached(self, costs: Iterable[tuple[str, float]], *, reset: bool = False) -> None:
        """Keep the walk's reached nodes with their costs in a temporary table (on this connection
        only, never in the graph file): a hub's query leaves out the neighbours already held."""
        with self._quietly():
            if reset:
                self.conn.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS walk_reached (id TEXT PRIMARY KEY, cost REAL NOT NULL)"
                )
                self.conn.execute("DELETE FROM temp.walk_reached")
            # One transaction for the rows, not one per row (the connection is in autocommit mode).
            with savepoint(self.conn, "walk_reached"):
                self.conn.executemany("INSERT OR REPLACE INTO temp.walk_reached (id, cost) VALUES (?, ?)", costs)

    @contextmanager
    def _quietly(self) -> Iterator[None]:
        before = self.conn.total_changes
        try:
            yield
        finally:
            self.marks.quiet += self.conn.total_changes - before

    def warm_state(self) -> tuple[Hashable, tuple[str, int], int, int] | None:
        """Changes whenever anything a build reads may have changed: any connection wrote a row a
        build reads (``db.content_state``; another process's manifests and cached query vectors do
        not count), an import (``graph_version``), or this connection changed rows other than its
        quiet ones (vectors written by ``ctx embed`` on the same handle, say). Index steps only;
        keys what a warm process keeps between builds (``ctx.assemble.warm``)."""
        marks = self.marks
        if marks.calls and marks.state is not None:
            total, quiet, kept = marks.state
            if total == self.conn.total_changes and quiet == marks.quiet:
                return kept
        from ctx.store.db import content_state

        content = content_state(self.conn)
        own = self.conn.total_changes - self.marks.quiet
        # Connections of one family that wrote nothing themselves see one state per value of the
        # content counter (every committed write of what builds read moves it, whichever
        # connection made it): what one of them kept holds for the others. A connection that
        # wrote (committed or not) keys by its own identity, as does one on a graph whose counter
        # is ``PRAGMA data_version``, a number each connection counts for itself.
        family = self.marks.family
        who: Hashable = family if family is not None and own == 0 and content[0] == "content" else self.marks
        state = (who, content, self.graph_version(), own)
        if marks.calls:
            marks.state = (self.conn.total_changes, marks.quiet, state)
        return state

    @contextmanager
    def one_state(self) -> Iterator[None]:
        """Within: ``warm_state`` is read from the graph once (a build asks ~25 times, ~30 µs
        each) and again only after this connection changed a row. Another connection's write
        meanwhile is not seen until the scope ends: what is kept under the state read first can
        never be found again (the content counter and graph version only grow), so nothing read
        after such a write is mistaken for the new state's. Wrap one call, after its sync."""
        marks = self.marks
        marks.calls += 1
        try:
            yield
        finally:
            marks.calls -= 1
            if not marks.calls:
                marks.state = None

    def best_neighbours(
        self,
        node_id: str,
        base: float,
        weights: dict[tuple[str, str], float],
        ranker: NeighbourOrder,
        limit: int,
    ) -> tuple[int, list[tuple[str, str, str | None, float | None, str]]]:
        """A hub's fresh visible neighbours over the edges ``weights`` names ((type, direction) ->
        rule weight): how many there are, and the best ``limit`` by ``ranker``'s pre-score of the
        heaviest edge to each, as (id, type, tags, updated, title). Fresh: not reached yet
        (``remember_reached``), or reached at more than ``base`` plus the cheapest step to it.
        The pre-score is computed in SQL, so a hub of 10,000s of links costs one sorted scan
        rather than a Python loop over every edge; a big hub's best are read newest first
        instead (``hub_scan``), where that pays."""
        scanned = hub_scan.scan_best(self.conn, node_id, base, weights, ranker, limit, self.include_private)
        if scanned is not None:
            return scanned
        fresh, params = self._prescored(node_id, weights, ranker)
        # The fresh neighbours are grouped once (SQLite keeps a CTE read twice) and counted from
        # there: a window COUNT(*) OVER () would sort them all instead of keeping only the best.
        sql = (
            f"WITH fresh AS ({fresh} LEFT JOIN temp.walk_reached r ON r.id = e.other"
            f"{'' if self.include_private else ' WHERE n.private = 0'}"
            f" GROUP BY e.other HAVING r.cost IS NULL OR ? + 1.0 / MAX(e.weight) < r.cost - 1e-12)"
            f" SELECT other, type, tags, updated, title, (SELECT COUNT(*) FROM fresh)"
            f" FROM fresh ORDER BY value DESC, other LIMIT ?"
        )
        rows = self.conn.execute(sql, [*params, base, limit]).fetchall()
        total = rows[0][5] if rows else 0
        return total, [r[:5] for r in rows]

    def ranks_best_alone(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> bool:
        return hub_scan.pays(self.conn, node_id, weights, ranker, limit, self.include_private)

    def scan_table(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> ScanTable | None:
        return hub_scan.table(self.conn, node_id, weights, ranker, limit, self.include_private)

    def newest_neighbours(
        self, node_id: str, cls: tuple[str, str], count: int, after: tuple[float, str] | None = None
    ) -> list[Neighbour]:
        return hub_scan.newest(self.conn, node_id, cls, count, after, self.include_private)

    def ranked_neighbours(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder
    ) -> list[RankedNeighbour]:
        prescored, params = self._prescored(node_id, weights, ranker)
        sql = (
            f"SELECT other, type, tags, updated, title, heaviest FROM ({prescored}"
            f"{'' if self.include_private else ' WHERE n.private = 0'}"
            " GROUP BY e.other) ORDER BY value DESC, other"
        )
        return self.conn.execute(sql, params).fetchall()

    def _prescored(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder
    ) -> tuple[str, list[object]]:
        """The start of a query over the node's visible neighbours by ``weights``' edges, grouped by
        the caller: (other, type, tags, updated, title, value, heaviest weight), ``e`` and ``n``
        open for a join and a WHERE."""
        around, params = self._around(node_id, weights)
        cases = " ".join("WHEN e.type = ? AND e.dir = ? THEN ?" for _ in weights)
        case_params: list[object] = [x for (t, d), w in weights.items() for x in (t, d, w)]
        if ranker.reference is not None and ranker.recency_share:
            recency = hub_scan.recency_sql("n")
            recency_params: list[object] = [ranker.reference, ranker.half_life]
        else:
            recency, recency_params = "0.0", []
        boost, boost_params = hub_scan.boost_sql(self.conn, ranker, "n")
        sql = (
            f"SELECT e.other, n.type, n.tags, n.updated, n.title,"
            f" MAX({boost} * (e.weight + ? * {recency})) AS value, MAX(e.weight) AS heaviest"
            f" FROM (SELECT other, CASE {cases} END AS weight FROM ({around}) e) e"
            f" JOIN nodes n ON n.id = e.other"
        )
        return sql, [*boost_params, ranker.recency_share, *recency_params, *case_params, *params]

    def edges_around(
        self, node_id: str, classes: Iterable[tuple[str, str]], others: list[str], degree: int = 0
    ) -> list[tuple[str, str, str]]:
        """(other, type, direction) of the node's edges of ``classes`` to any of ``others``.

        For a node with more edges (``degree``) than there are ``others``, each of the others is
        looked up from its own end (its index), instead of scanning every edge of the node (once
        per chunk of others)."""
        wanted = set(classes)
        rows: list[tuple[str, str, str]] = []
        for direction, near, far, far_index in (("out", "src", "dst", "edges_in"), ("in", "dst", "src", "edges_out")):
            types = sorted({t for t, d in wanted if d == direction})
            if not types:
                continue
            type_marks = ",".join("?" * len(types))
            hint = f" INDEXED BY {far_index}" if len(others) < degree or len(others) > CHUNK else ""
            for chunk in chunks(others):
                marks = ",".join("?" * len(chunk))
                rows.extend(
                    (other, etype, direction)
                    for other, etype in self.conn.execute(
                        f"SELECT {far}, type FROM edges{hint} WHERE {far} IN ({marks}) AND type IN ({type_marks})"
                        f" AND {near} = ? AND {far} != ?",
                        [*chunk, *types, node_id, node_id],
                    )
                )
        return rows

    def neighbour_ids(self, ids: list[str], names: tuple[str, ...]) -> dict[str, dict[str, list[str]]]:
        """id -> {edge name -> sorted visible neighbour ids}, for every edge name in ``names``."""
        out: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        visible = "" if self.include_private else " AND n.private = 0"
        for name in names:
            canonical, direction = canonical_and_direction(name)
            near, far = ("dst", "src") if direction == "in" else ("src", "dst")
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                rows = self.conn.execute(
                    f"SELECT e.{near}, e.{far} FROM edges e JOIN nodes n ON n.id = e.{far}"
                    f" WHERE e.type = ? AND e.{near} IN ({marks}){visible}",
                    [canonical, *chunk],
                )
                for here, there in rows:
                    out[here].setdefault(name, []).append(there)
        for per_node in out.values():
            for name in per_node:
                per_node[name] = sorted(set(per_node[name]))
        return out

    def recent_nodes(self, reference: float | None, hours: float, limit: int) -> list[str]:
        """Ids of at most ``limit`` nodes updated within ``hours`` before ``reference``, newest first."""
        if reference is None or limit <= 0:
            return []
        visible = "" if self.include_private else " AND private = 0"
        rows = self.conn.execute(
            f"SELECT id FROM nodes WHERE updated >= ? AND type != 'tag'{visible} ORDER BY updated DESC, id LIMIT ?",
            (reference - hours * 3600.0, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def siblings_in_order(self, node_id: str) -> tuple[str | None, list[str]]:
        """The node's parent and its visible children in order, ``node_id`` among them.

        ``parent_id`` first; else the ``child`` edge pointing at it, which is all Notion sub-pages and
        Logseq namespace children have (their parent is known only once the whole source is read)."""
        hidden = "" if self.include_private else " AND (n.id = ? OR n.private = 0)"
        conn = self.conn
        row = conn.execute("SELECT parent_id FROM nodes WHERE id = ?", (node_id,)).fetchone()
        if row is not None and row[0] is not None:
            order = conn.execute(
                f"SELECT n.id FROM nodes n WHERE n.parent_id = ?{hidden} ORDER BY n.position IS NULL, n.position, n.id",
                (row[0], node_id) if hidden else (row[0],),
            ).fetchall()
            return row[0], [r[0] for r in order]
        edge = conn.execute(
            "SELECT src FROM edges WHERE dst = ? AND type = 'child' ORDER BY src LIMIT 1", (node_id,)
        ).fetchone()
        if edge is None:
            return None, []
        order = conn.execute(
            f"SELECT n.id FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = ? AND e.type = 'child'{hidden}"
            " ORDER BY e.position IS NULL, e.position, n.position IS NULL, n.position, n.id",
            (edge[0], node_id) if hidden else (edge[0],),
        ).fetchall()
        return edge[0], list(dict.fromkeys(r[0] for r in order))

    def outline(self, page_id: str, max_nodes: int) -> Outline:
        """The page's blocks in reading order, without hidden blocks or anything beneath them
        (a private block's children are its content)."""
        found = outline_of(self.conn, page_id, max_nodes)
        if self.include_private or not self.has_private_nodes():
            return found
        hidden = self.private_among(e.id for e in found.entries)
        if not hidden:
            return found
        kept = []
        skip_below: int | None = None
        for entry in found.entries:
            if skip_below is not None and entry.depth > skip_below:
                continue
            skip_below = None
            if entry.id in hidden:
                skip_below = entry.depth
                continue
            kept.append(entry)
        return Outline(kept, found.truncated)

    # -- nodes -----------------------------------------------------------------------------------

    def node(self, node_id: str) -> Node | None:
        return reads.get_node(self.conn, node_id, include_private=self.include_private)

    def resolve_one(self, id_or_title: str) -> str | None:
        return reads.resolve_one(self.conn, id_or_title, include_private=self.include_private)

    def node_facts(self, ids: list[str], *, with_fields: bool) -> list[NodeFacts]:
        out: list[NodeFacts] = []
        append = out.append
        # ``NodeFacts(...)`` with these fields, made without its frozen ``__init__`` (one
        # ``object.__setattr__`` per field): the same attributes in the same order, ~1.1 against
        # ~2.3 us a node (a new 100k question's build reads ~250).
        new, set_dict = object.__new__, object.__setattr__
        for chunk in chunks(sorted(ids)):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                "SELECT id, title, type, tags, fields, source_path, parent_id, position, created, updated, tokens"
                f" FROM nodes WHERE id IN ({marks})",
                chunk,
            ):
                facts = new(NodeFacts)
                set_dict(facts, "__dict__", {
                    "id": row[0],
                    "title": row[1],
                    "type": row[2],
                    # Most nodes have no fields and many no tags: their empty JSON costs a
                    # parse each (~1 µs) for what a literal gives.
                    "tags": json.loads(row[3]) if row[3] and row[3] != "[]" else [],
                    "fields": (json.loads(row[4]) if row[4] and row[4] != "{}" else {}) if with_fields else {},
                    "source_path": row[5],
                    "parent_id": row[6],
                    "position": row[7],
                    "created": row[8],
                    "updated": row[9],
                    "tokens": int(row[10] or 0),
                })
                append(facts)
        out.sort(key=lambda facts: facts.id)
        return out

    def bodies(self, ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in chunks(sorted(ids)):
            marks = ",".join("?" * len(chunk))
            for node_id, body in self.conn.execute(f"SELECT id, body FROM nodes WHERE id IN ({marks})", chunk):
                out[node_id] = body or ""
        return out

    def newest_update(self) -> float | None:
        # Among the nodes this reader may see: a private note's date would otherwise move every
        # score (and be printed). Walks the updated index from its end.
        visible = "" if self.include_private else " AND private = 0"
        row = self.conn.execute(
            f"SELECT updated FROM nodes WHERE updated IS NOT NULL{visible} ORDER BY updated DESC LIMIT 1"
        ).fetchone()
        return float(row[0]) if row and row[0] is not None else None

    def node_count(self) -> int:
        return reads.node_count(self.conn)

    def is_empty(self) -> bool:
        return reads.is_empty(self.conn)

    def node_texts(self, ids: list[str], chunk: int = 256) -> Iterator[list[NodeText]]:
        from ctx.store import vectors

        return vectors.iter_node_texts(self.conn, ids, chunk)

    def name_keys_near(self, key: str, *, cutoff: float, max_keys: int) -> dict[str, str]:
        # The multiset count of shared characters is difflib's quick_ratio numerator, taken in SQL
        # so that only keys that can pass reach Python.
        counts: dict[str, int] = {}
        for ch in key:
            counts[ch] = counts.get(ch, 0) + 1
        shared = " + ".join("min(?, length(k.key) - length(replace(k.key, ?, '')))" for _ in counts)
        shared_params = [x for ch, n in counts.items() for x in (n, ch)]
        rows = self.conn.execute(
            "SELECT k.key, MIN(n.title) FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            f" WHERE k.kind IN ('title', 'alias') AND length(k.key) BETWEEN ? AND ?"
            f" AND {shared} >= ? * (? + length(k.key)) - 1e-9 AND {self.where_visible('n.')}"
            " GROUP BY k.key ORDER BY k.key LIMIT ?",
            (max(1, len(key) - 3), len(key) + 3, *shared_params, cutoff / 2, len(key), max_keys),
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    # -- edges -----------------------------------------------------------------------------------

    def edges_among(self, ids: list[str], edge_type: str) -> dict[str, list[str]]:
        members = set(ids)
        out: dict[str, list[str]] = {}
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            for src, dst in self.conn.execute(
                f"SELECT src, dst FROM edges WHERE type = ? AND src IN ({marks}) AND dst IS NOT NULL",
                [edge_type, *chunk],
            ):
                if dst in members:
                    out.setdefault(src, []).append(dst)
        for targets in out.values():
            targets.sort()
        return out

    def edges_of(self, node_id: str) -> list[EdgeView]:
        return reads.edges_of(self.conn, node_id, include_private=self.include_private)

    # -- outlines --------------------------------------------------------------------------------

    def breadcrumb(self, node_id: str) -> list[Crumb]:
        from ctx.store.outline import breadcrumb

        return breadcrumb(self.conn, node_id)

    def with_outline_link(self, ids: list[str], formats: tuple[str, ...], end: str) -> set[str]:
        # Same file, and a tracked one: derived nodes (a namespace page Logseq never wrote) have
        # file ''. Only sources imported in one of ``formats``.
        names = ",".join("'" + f.replace("'", "''") + "'" for f in formats) or "''"
        if self.conn.execute(f"SELECT 1 FROM sources WHERE format IN ({names}) LIMIT 1").fetchone() is None:
            # No source in those formats (a graph of JSON or markdown alone): no row can join,
            # and the query would still look up both nodes of every child edge of ``ids`` to find
            # that out (~0.6 ms of a new question's two calls at 100k nodes).
            return set()
        same_file = (
            "p.file != '' AND p.file = n.file AND p.source_id = n.source_id"
            f" AND p.source_id IN (SELECT id FROM sources WHERE format IN ({names}))"
        )
        out: set[str] = set()
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            out.update(
                r[0]
                for r in self.conn.execute(
                    # CROSS JOIN keeps the edges outermost: asked of a few hundred ids, SQLite
                    # otherwise started from every node of the outliner's source and looked up
                    # each one's edges among the ids (507 ms for 500 ids of logseq-docs' 6,709
                    # nodes against 1.3 ms from the edges' index; the same rows either way).
                    f"SELECT DISTINCT e.{end} FROM edges e CROSS JOIN nodes p ON p.id = e.src"
                    f" CROSS JOIN nodes n ON n.id = e.dst"
                    f" WHERE e.type = 'child' AND e.{end} IN ({marks}) AND {same_file}",
                    chunk,
                )
            )
        return out

    # -- passages --------------------------------------------------------------------------------

    def has_passages(self) -> bool:
        """Whether this view sees a passage. Hidden ones do not count: a graph whose only
        passages are private must resolve a topic as a graph without passages does, or the
        answer (vectors instead of "no node matches") would tell that private text exists."""
        from ctx.store import passage_reads as passages

        hidden = not self.include_private and self.has_private_nodes()
        return passages.has_passages(self.conn, visible_only=hidden)

    def passages_of(self, node_ids: Iterable[str]) -> dict[str, list[StoredPassage]]:
        from ctx.store import passage_reads as passages

        return passages.passages_of(self.conn, node_ids, self._schema)

    def passage_terms_known(self, terms: list[str]) -> list[str]:
        # Only the indexes this reader may search: a word only private notes hold is unknown to a
        # reader without access, as if they did not exist.
        from ctx.store.fts import searched_indexes

        indexes = searched_indexes(self.conn, "passages_fts", self.include_private, self._schema)
        found = []
        for term in terms:
            phrase = '"' + term.replace('"', '""') + '"'
            for index in indexes:
                try:
                    hit = self.conn.execute(f"SELECT 1 FROM {index} WHERE {index} MATCH ? LIMIT 1", (phrase,)).fetchone()
                except sqlite3.OperationalError:
                    hit = None
                if hit:
                    found.append(term)
                    break
        return found

    def block_texts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        from ctx.store.reads import block_texts

        return block_texts(self.conn, ids, include_private=self.include_private)

    def search_passages(
        self, terms: list[str], *, limit: int, visible: Container[str] | None = None
    ) -> list[PassageHit]:
        from ctx.store import passage_reads as passages

        return passages.search(
            self.conn, terms, limit=limit, include_private=self.include_private, known=self._schema, visible=visible
        )

    def passages_stale(self) -> bool:
        from ctx.store import passage_reads as passages

        return passages.stale(self.conn)

    # -- vectors ---------------------------------------------------------------------------------

    def active_model(self) -> str | None:
        # Not through ctx.store.vectors: that loads numpy, which a graph without vectors never needs.
        return self.setting("embedding_model")

    def embedding_status(self, model: str | None = None) -> EmbeddingStatus:
        from ctx.store import vectors

        return vectors.status(self.conn, model)

    def embedding_coverage(self) -> dict[str, Any]:
        # Of the nodes this reader may see.
        model = self.active_model()
        nodes = self.node_count()
        if not self.include_private:  # the private ones through their small index, not a scan
            nodes -= self.conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0]
        # From the vectors' side: a graph without vectors costs nothing to check (a node has at
        # most one vector; vectors of deleted nodes wait for `ctx embed` and count for nothing).
        # CROSS JOIN keeps the vectors the outer loop: with ``n.private = 0`` to filter, SQLite
        # chose to scan every node and probe for its vector, 0.8 s of `ctx stats` at 1M nodes
        # without a single vector.
        fresh, stale = self.conn.execute(
            "SELECT COALESCE(SUM(e.model = :m AND e.content_hash = n.content_hash), 0),"
            " COALESCE(SUM(NOT (e.model = :m AND e.content_hash = n.content_hash)), 0)"
            " FROM embeddings e CROSS JOIN nodes n ON n.id = e.node_id"
            + ("" if self.include_private else " WHERE n.private = 0"),
            {"m": model or ""},
        ).fetchone()
        return {"model": model, "nodes": nodes, "fresh": fresh, "stale": stale, "missing": nodes - fresh - stale}

    def nodes_without_static_vectors(self, model: str) -> int:
        return int(self.conn.execute(
            "SELECT COUNT(DISTINCT p.node_id) FROM passages p"
            + ("" if self.include_private else " JOIN nodes n ON n.id = p.node_id AND n.private = 0")
            + " WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = ? AND v.hash = p.hash)",
            (model,),
        ).fetchone()[0])

    def _has_embeddings(self) -> bool:
        try:
            return conn_has(self.conn, "SELECT 1 FROM embeddings LIMIT 1")
        except sqlite3.OperationalError:  # a graph from before the embeddings table existed
            return False

    def has_vectors(self) -> bool:
        # Node vectors, or (``ctx embed``'s first stage) passages' static ones.
        return self.active_model() is not None and (
            self._has_embeddings() or bool(self.setting("embedding_first_stage"))
        )

    def model_dim(self, model: str) -> int:
        from ctx.store import vectors

        return vectors.model_dim(self.conn, model)

    def node_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        from ctx.store import vectors

        return vectors.vectors_for(self.conn, model, ids)

    def unvectored_nodes(self, model: str, ids: Iterable[str]) -> set[str]:
        from ctx.store import vectors

        return vectors.unembedded_nodes(self.conn, model, ids)

    def unvectored_passages(self, model: str, passage_ids: Iterable[int]) -> set[int]:
        from ctx.store import vectors

        return vectors.unembedded_passages(self.conn, model, passage_ids)

    def vector_matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        from ctx.store.vector_cache import fresh_vector_matrix

        return fresh_vector_matrix(self.conn, model)

    def node_vector_search(self, model: str) -> None:
        return None  # exact: the matrix (vector_matrix)

    def passage_vector_matrix(self, model: str) -> tuple[list[int], list[str], np.ndarray]:
        from ctx.store import vectors

        return vectors.kept_passage_vectors(self.conn, model)

    def candidate_passages(
        self, model: str, passage_ids: list[int]
    ) -> list[tuple[int, str, str, str, np.ndarray | None]]:
        from ctx.store import vectors

        return vectors.candidate_passages(self.conn, model, passage_ids)

    def remember_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> bool:
        from ctx.store import vectors

        return vectors.remember_passage_vectors(self.conn, model, rows)

    def nodes_with_passages(self, at_least: int) -> list[str]:
        from ctx.store import vectors

        return vectors.nodes_with_passages(self.conn, at_least)

    def paragraph_vector_keys(self, model: str) -> set[tuple[str, str]]:
        from ctx.store import vectors

        return vectors.paragraph_vector_keys(self.conn, model)

    def paragraph_vector_hashes(self, model: str) -> set[str]:
        from ctx.store import vectors

        return vectors.paragraph_vector_hashes(self.conn, model)

    def paragraph_vector_count(self, model: str | None) -> int:
        from ctx.store import vectors

        return vectors.paragraph_vector_count(self.conn, model, include_private=self.include_private)

    def paragraph_vector_owners(self, model: str) -> set[tuple[str, str, str]]:
        from ctx.store import vectors

        return vectors.paragraph_vector_owners(self.conn, model)

    def paragraph_vectors(self, model: str) -> tuple[list[int], list[str], list[str], np.ndarray]:
        from ctx.store import vectors

        return vectors.all_paragraph_vectors(self.conn, model)

    def pending_node_ids(self, model: str) -> list[str]:
        from ctx.store import vectors

        return vectors.pending_node_ids(self.conn, model)

    def pending_passages(self, model: str) -> list[tuple[str, str]]:
        from ctx.store import vectors

        return vectors.pending_passages(self.conn, model)

    def query_vector(self, model: str, text: str) -> np.ndarray | None:
        from ctx.store import vectors

        return vectors.cached_query_vector(self.conn, model, text)

    def remember_query_vector(self, model: str, text: str, vector: np.ndarray) -> None:
        from ctx.store import vectors

        with self._quietly():
            vectors.cache_query_vector(self.conn, model, text, vector)

    # -- the graph as a whole --------------------------------------------------------------------

    def graph_version(self) -> int:
        from ctx.store.db import graph_version

        return graph_version(self.conn)

    def last_sync(self) -> float | None:
        try:
            row = self.conn.execute("SELECT MAX(COALESCE(checked_at, imported_at)) FROM sources").fetchone()
        except sqlite3.OperationalError:  # a graph from before sources were registered
            return None
        return float(row[0]) if row and row[0] is not None else None

    def remember_setting(self, key: str, value: str) -> None:
        from ctx.store.db import set_meta_nowait

        with self._quietly():
            set_meta_nowait(self.conn, key, value)

    def remember_context(
        self, context_id: str, key: str, graph_version: int, manifest: str, *, keep: int, keep_total: int,
    ) -> bool:
        from ctx.store import contexts

        # Quiet, as a remembered setting: a manifest changes nothing a build reads from the graph
        # (a warm process's kept pools stay good).
        with self._quietly():
            return contexts.record(
                self.conn, context_id, key, self.include_private, graph_version, manifest, keep=keep,
                keep_total=keep_total,
            )

    def recorded_context(self, context_id: str | None, key: str) -> tuple[str, str] | None:
        from ctx.store import contexts

        return contexts.recorded(self.conn, context_id, key, self.include_private)

    def setting(self, key: str) -> str | None:
        from ctx.store.db import get_meta

        return get_meta(self.conn, key)

    def file_path(self) -> Path | None:
        for _, schema, file in self.conn.execute("PRAGMA database_list"):
            if schema == "main":
                return Path(file) if file else None  # "": an in-memory graph
        return None

    def stats(self) -> dict[str, Any]:
        return reads.stats(self.conn, include_private=self.include_private)

    def sources(self, *, counted: bool = False) -> list[Source]:
        from ctx.store.sources import list_sources

        return list_sources(self.conn, counted=counted)

    def source_at(self, root: Path) -> tuple[int, str] | None:
        from ctx.store.writes import source_of

        row = source_of(self.conn, root)
        return None if row is None else (int(row["id"]), str(row["format"]))

    def file_states(self, source_id: int) -> dict[str, FileState]:
        from ctx.store.writes import file_states

        return file_states(self.conn, source_id)

    def file_states_of(self, source_id: int, paths: list[str]) -> dict[str, FileState]:
        from ctx.store.writes import file_states_of

        return file_states_of(self.conn, source_id, paths)

    def privacy_changed(self, config: PrivacyConfig | PrivacyRules) -> bool:
        from ctx.store.privacy import privacy_config_changed

        return privacy_config_changed(self.conn, config)
