"""A big hub's best neighbours read newest first, not all of them (SQLite's ``best_neighbours``).

A hub's neighbours are ranked by ``boost(type) * (weight + share * recency(updated))``
(``GraphReader.best_neighbours``). Ranking a tag of 200,000 notes in SQL reads every one of them
(0.3-0.6 s CPU each at a million nodes). But within one edge class the weight is the same for
all, and recency only falls with age: the hub's best neighbours over its biggest class are among
the newest nodes of the graph. So the nodes are read newest first (``nodes_by_updated``), each
asked whether it links the hub (one index step), until the best ``limit`` found are sure to beat
anything older: what an older node can score is bounded by the largest boost and the class's
weight with the recency of the node about to be read. For a hub with d neighbours among N nodes
that reads about ``limit * N / d`` nodes; it is used only where that is less than d. The hub's
other classes (a few dozen links: its own outgoing links, say) are read whole.

How many fresh neighbours there are is counted without reading them: the biggest class's
distinct neighbours from its index (no node rows), less the private ones among them (the few
private nodes are each asked), less those the walk holds at least as cheaply (each held node is
asked). The answer is the one the SQL ranking gives, neighbour for neighbour and count for
count; where any of these steps would cost more than ranking in SQL (no dates in the graph, tag
boosts, many private nodes, a second big class), ``scan_best`` says so and the caller ranks in SQL.

Where the biggest class weighs the most (``_by_sets``: the built-in lenses weigh most classes the
same), the other classes need not be valued whole either: every class is read as ids alone, and
one newest-first scan over all of them ranks the hub, each node at the heaviest of its classes.
"""

from __future__ import annotations

from bisect import insort
import math
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctx.store import link_counts
from ctx.store.batches import chunks

from ctx.store.types import ScanTable

if TYPE_CHECKING:
    from ctx.store.protocols import NeighbourOrder
    from ctx.store.types import Neighbour, RankedNeighbour

# A class with fewer links than this is ranked in SQL (reading it whole is cheap).
SCAN_AT_LEAST = 2_000
# The hub's other classes are read whole, up to this many links between them.
OTHERS_AT_MOST = 20_000
# Private nodes asked one by one whether they are the hub's neighbours, at most.
PRIVATE_AT_MOST = 2_048
# Nodes read newest first before giving up (a hub whose neighbours are all old), as a share of
# the class's links: reading that many costs about what the SQL ranking would. A node read and
# asked costs less than a neighbour ranked in SQL (its row read, valued, grouped and sorted): with
# 2.5 the scan is used from about 7,300 links at 1M nodes (2,300 at 100k), where it measured 30-35
# against 40-52 ms (12-13 against 15-19 ms at 100k); at 1.0 it began at 11,500 (3,600).
SCAN_SHARE = 2.5
# A value computed twice the same way is the same double; the margin only guards the bound
# against a libm whose pow is not monotonic in the last bit.
_MARGIN = 1e-9
# Nodes read per step of the newest-first scan.
_PAGE = 256
_SECONDS_PER_DAY = 86400.0

Class = tuple[str, str]


def _ids(conn: sqlite3.Connection, source: str, column: str, params: Sequence[object]) -> list[str]:
    """``SELECT column source`` (a FROM and WHERE) as a list: the ids made into one JSON array in
    SQLite and parsed by ``json`` cost ~0.3 µs each, against ~0.7 as rows (a tuple made and taken
    apart per id). Where SQLite has no JSON functions, as rows."""
    try:
        found = conn.execute(f"SELECT json_group_array({column}) {source}", params).fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "no such function" not in str(exc):
            raise
        return [r[0] for r in _rows(conn, f"SELECT {column} {source}", params)]
    import json

    return json.loads(found)


def _rows(conn: sqlite3.Connection, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
    """``conn.execute`` giving plain tuples: a graph's connection makes a ``sqlite3.Row`` of every
    row, which costs more than the row itself where thousands of ids are read."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(sql, params)


def recency(updated: float | None, reference: float, half_life: float) -> float:
    """The recency term of ``GraphReader.best_neighbours``, as its SQL computes it."""
    if updated is None:
        return 0.0
    return math.pow(0.5, (max(0.0, reference - updated) / _SECONDS_PER_DAY) / half_life)


def recency_sql(alias: str) -> str:
    """``recency`` in SQL over ``alias``.updated (parameters: reference, half-life), the same double."""
    return f"COALESCE(pow(0.5, (max(0.0, ? - {alias}.updated) / 86400.0) / ?), 0.0)"


def boost_sql(conn: sqlite3.Connection, ranker: NeighbourOrder, alias: str) -> tuple[str, list[object]]:
    """``ranker.boost`` of the node ``alias`` in SQL, and its parameters. A type's boost alone is
    one of a few floats: SQL picks it without calling Python for every row. SQL's lower() folds
    ASCII only, so other types (and tag boosts) ask Python."""
    if not ranker.type_boosts and not ranker.tag_boosts:
        return "1.0", []
    conn.create_function("ctx_neighbour_boost", 2, ranker.boost, deterministic=True)
    boost = f"ctx_neighbour_boost({alias}.type, {alias}.tags)"
    if ranker.tag_boosts:
        return boost, []
    return (
        f"CASE WHEN {alias}.type GLOB '*[^ -~]*' THEN {boost} ELSE CASE lower({alias}.type)"
        + " WHEN ? THEN ?" * len(ranker.type_boosts) + " ELSE 1.0 END END",
        [x for item in sorted(ranker.type_boosts.items()) for x in item],
    )


def _ends(direction: str) -> tuple[str, str, str]:
    """(near column, far column, index whose leading column is the near one) of a class.

    Whether a node is the hub's neighbour is asked of the index led by the hub's end: the hub's
    links lie together there, so the lookups of one hub share their pages (the index led by the
    other end, which SQLite would pick as readily, has them spread over all of it: ~30% dearer
    a node read newest first, twice as dear a node looked up among the hub's links, at 1M nodes).
    Both are (src, type, dst) and (dst, type, src) from schema version 9 on; the scan runs only on
    graphs with ``nodes_by_recency`` (version 15)."""
    return ("src", "dst", "edges_out") if direction == "out" else ("dst", "src", "edges_in")


def scan_best(
    conn: sqlite3.Connection,
    node_id: str,
    base: float,
    weights: dict[Class, float],
    ranker: NeighbourOrder,
    limit: int,
    include_private: bool,
) -> tuple[int, list[Neighbour]] | None:
    """``best_neighbours`` by reading nodes newest first, or None where that would not pay."""
    if not _scannable(conn):
        return None  # a read-only graph from before nodes_by_recency
    try:
        if weights and limit > 0:
            links = {c: _links(conn, node_id, c) for c in sorted(weights)}
            big = max(sorted(links), key=lambda c: links[c])
            if weights[big] == max(weights.values()):
                return _by_sets(conn, node_id, base, weights, ranker, limit, include_private, links, big)
        plan = _plan(conn, node_id, weights, ranker, limit, include_private)
        if plan is None:
            return None
        big, links, hidden = plan
        return _Scan(conn, node_id, base, weights, ranker, limit, include_private, big, links, hidden).run()
    except sqlite3.OperationalError as exc:
        if "no such index" in str(exc):  # a read-only graph from before nodes_by_updated
            return None
        raise


def pays(
    conn: sqlite3.Connection,
    node_id: str,
    weights: dict[Class, float],
    ranker: NeighbourOrder,
    limit: int,
    include_private: bool,
) -> bool:
    """Whether ``scan_best`` would rank this hub (it may still give up on one whose neighbours
    turn out to be mostly old)."""
    return _plan(conn, node_id, weights, ranker, limit, include_private) is not None


def table(
    conn: sqlite3.Connection,
    node_id: str,
    weights: dict[Class, float],
    ranker: NeighbourOrder,
    limit: int,
    include_private: bool,
) -> ScanTable | None:
    """What of ``scan_best``'s work does not depend on the walk (``GraphReader.scan_table``): every
    visible neighbour of the small classes valued and ranked, the big class's size, its hidden
    neighbours and how many of the small classes' are its own too. None where the scan would not
    pay (the caller ranks in SQL)."""
    if not _scannable(conn):
        return None
    plan = _plan(conn, node_id, weights, ranker, limit, include_private)
    if plan is None:
        return None
    big, links, hidden = plan
    small = sorted(c for c in weights if c != big)
    ranked: list[tuple[float, str, RankedNeighbour]] = []
    in_big = 0
    if small:
        parts, params = _small_parts(node_id, small, weights)
        rows = conn.execute(
            f"SELECT m.id, n.type, n.tags, n.updated, n.title, m.w, {_member_probe(big, 'm')}"
            f" FROM (SELECT id, MAX(w) AS w FROM ({parts}) GROUP BY id) m"
            " JOIN nodes n INDEXED BY nodes_walked ON n.id = m.id"
            f"{'' if include_private else ' WHERE n.private = 0'}",
            [big[0], node_id, *params],  # the probe in the SELECT list comes first
        ).fetchall()
        reference, w_big = float(ranker.reference), weights[big]  # type: ignore[arg-type]
        for other, ntype, tags, updated, title, w, member in rows:
            if member:
                w, in_big = max(w, w_big), in_big + 1
            r = recency(updated, reference, ranker.half_life)
            value = ranker.boost(ntype, tags) * (w + ranker.recency_share * r)
            ranked.append((-value, other, (other, ntype, tags, updated, title, w)))
        ranked.sort()
    return ScanTable(big, links[big], frozenset(hidden), [row for _, _, row in ranked], in_big)


def newest(
    conn: sqlite3.Connection,
    node_id: str,
    cls: Class,
    count: int,
    after: tuple[float, str] | None,
    include_private: bool,
) -> list[Neighbour]:
    """``GraphReader.newest_neighbours``: nodes read newest first, each asked whether it is the
    node's neighbour by ``cls`` (one index step), until ``count`` are."""
    where, params = "", []
    if after is not None:
        where = " AND (n.updated < ? OR (n.updated = ? AND n.id > ?))"
        params = [after[0], after[0], after[1]]
    rows = conn.execute(
        "SELECT n.id, n.type, n.tags, n.updated, n.title FROM nodes n INDEXED BY nodes_by_recency"
        f" WHERE n.updated IS NOT NULL{where} AND n.id != ? AND {_member_probe(cls, 'n')}"
        f"{'' if include_private else ' AND n.private = 0'} ORDER BY n.updated DESC, n.id LIMIT ?",
        [*params, node_id, cls[0], node_id, count],
    ).fetchall()
    return [(nid, ntype, tags, updated, title) for nid, ntype, tags, updated, title in rows]


def _scannable(conn: sqlite3.Connection) -> bool:
    """Whether the graph has the index a newest-first scan reads (schema version 15 on)."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'nodes_by_recency'").fetchone() is not None


def _small_parts(node_id: str, small: list[Class], weights: dict[Class, float]) -> tuple[str, list[object]]:
    """SQL for the node's (other, w) pairs over the ``small`` classes, w the class's weight."""
    parts, params = [], []
    for etype, direction in small:
        near, far, _ = _ends(direction)
        parts.append(f"SELECT {far} AS id, ? AS w FROM edges WHERE {near} = ? AND type = ? AND {far} != ?")
        params += [weights[(etype, direction)], node_id, etype, node_id]
    return " UNION ALL ".join(parts), params


def _plan(
    conn: sqlite3.Connection,
    node_id: str,
    weights: dict[Class, float],
    ranker: NeighbourOrder,
    limit: int,
    include_private: bool,
) -> tuple[Class, dict[Class, int], set[str]] | None:
    """(the big class, each class's links, the big class's private neighbours), or None where the
    scan would not pay."""
    if ranker.reference is None or not ranker.recency_share or ranker.tag_boosts or not weights or limit <= 0:
        return None
    links = {c: _links(conn, node_id, c) for c in sorted(weights)}
    big = max(sorted(links), key=lambda c: links[c])
    others = sum(links.values()) - links[big]
    if links[big] < SCAN_AT_LEAST or others > min(OTHERS_AT_MOST, links[big] // 4):
        return None
    nodes = conn.execute("SELECT MAX(rowid) FROM nodes").fetchone()[0] or 0
    if limit * nodes / links[big] > links[big] * SCAN_SHARE / 2:
        return None  # the newest nodes would mostly not be its neighbours: reading all is cheaper
    hidden: set[str] = set()
    if not include_private:
        found = _private_in(conn, node_id, big)
        if found is None:
            return None
        hidden = found
    return big, links, hidden


def _links(conn: sqlite3.Connection, node_id: str, cls: Class) -> int:
    """Distinct other ends of the node's edges of one class (hidden ones included), from the index."""
    etype, direction = cls
    kept = link_counts.kept(conn, node_id, direction, etype)
    if kept is not None:
        return kept
    near, far, _ = _ends(direction)
    return int(
        conn.execute(
            f"SELECT COUNT(DISTINCT {far}) FROM edges WHERE {near} = ? AND type = ? AND {far} != ?",
            (node_id, etype, node_id),
        ).fetchone()[0]
    )


def _member_probe(cls: Class, alias: str) -> str:
    """SQL condition: the node ``alias``.id is the hub's (parameter 1, 2: type, hub) neighbour by ``cls``."""
    near, far, index = _ends(cls[1])
    return f"EXISTS (SELECT 1 FROM edges e INDEXED BY {index} WHERE e.{far} = {alias}.id AND e.type = ? AND e.{near} = ?)"


def _private_in(conn: sqlite3.Connection, node_id: str, cls: Class) -> set[str] | None:
    """The private nodes that are the hub's neighbours by ``cls``, or None when there are too many
    private nodes to ask each."""
    many = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM nodes WHERE private = 1 LIMIT ?)", (PRIVATE_AT_MOST + 1,)
    ).fetchone()[0]
    if many > PRIVATE_AT_MOST:
        return None
    rows = conn.execute(
        f"SELECT p.id FROM nodes p WHERE p.private = 1 AND p.id != ? AND {_member_probe(cls, 'p')}",
        (node_id, cls[0], node_id),
    ).fetchall()
    return {r[0] for r in rows}


class _Scan:
    """One hub's ranking: the small classes read whole, the big one newest first."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        node_id: str,
        base: float,
        weights: dict[Class, float],
        ranker: NeighbourOrder,
        limit: int,
        include_private: bool,
        big: Class,
        links: dict[Class, int],
        hidden: set[str],
    ) -> None:
        self.conn, self.node_id, self.base, self.weights = conn, node_id, base, weights
        self.ranker, self.limit, self.include_private = ranker, limit, include_private
        self.big, self.links, self.hidden = big, links, hidden
        self.reference = float(ranker.reference)  # type: ignore[arg-type]
        # The best ``limit`` so far, best first: (-value, id, row), so the last is the worst.
        self.best: list[tuple[float, str, Neighbour]] = []
        self.fresh = 0  # fresh visible neighbours counted so far (the small classes' and the scanned)
        self.small = sorted(c for c in weights if c != big)  # the hub's other classes
        self.taken: set[str] = set()  # the small classes' best (any of their others is worth less)
        self.top_boost = max([1.0, *ranker.type_boosts.values()])

    def run(self) -> tuple[int, list[Neighbour]] | None:
        in_big = self.small_classes()
        # The big class's visible neighbours not in a small class: counted, not read.
        big_only = self.links[self.big] - len(self.hidden) - in_big
        stale = self.held_in_big()
        total = self.fresh + big_only - stale
        if not self.scan_big():
            return None
        return total, [row for _, _, row in self.best]

    def value(self, weight: float, ntype: str, tags: str | None, updated: float | None) -> float:
        r = recency(updated, self.reference, self.ranker.half_life)
        return self.ranker.boost(ntype, tags) * (weight + self.ranker.recency_share * r)

    def is_fresh(self, held: float | None, weight: float) -> bool:
        return held is None or self.base + 1.0 / weight < held - 1e-12

    def offer(self, value: float, row: Neighbour) -> None:
        item = (-value, row[0], row)
        if len(self.best) < self.limit or item[:2] < self.best[-1][:2]:
            insort(self.best, item)
            del self.best[self.limit :]

    def small_classes(self) -> int:
        """Value and count the small classes' neighbours in SQL (with the big class's weight where
        one is its neighbour too), keeping only their best ``limit``; how many visible ones are
        also the big class's. One query: each neighbour with its heaviest small edge, the walk's
        cost and whether the big class has it, counted and cut to the best there. Only the best
        come to Python (a person hub's 10,000 small-class rows were each valued here)."""
        node_id = self.node_id
        if not self.small:
            return 0
        parts, params = _small_parts(node_id, self.small, self.weights)
        boost, boost_params = boost_sql(self.conn, self.ranker, "s")
        # One row: the counts, with the best ``limit`` fresh neighbours beside them (none: NULLs).
        # The CTEs are read more than once, so SQLite makes each once.
        sql = (
            f"WITH m AS (SELECT id, MAX(w) AS w FROM ({parts}) GROUP BY id),"
            f" v AS (SELECT m.id, n.type, n.tags, n.updated, n.title, r.cost,"
            f" CASE WHEN {_member_probe(self.big, 'm')} THEN max(m.w, ?) ELSE NULL END AS big_w, m.w"
            " FROM m JOIN nodes n INDEXED BY nodes_walked ON n.id = m.id LEFT JOIN temp.walk_reached r ON r.id = m.id"
            f"{'' if self.include_private else ' WHERE n.private = 0'}),"
            " f AS (SELECT id, type, tags, updated, title, COALESCE(big_w, w) AS w FROM v"
            " WHERE cost IS NULL OR ? + 1.0 / COALESCE(big_w, w) < cost - 1e-12)"
            " SELECT c.fresh, c.in_big, b.id, b.w, b.type, b.tags, b.updated, b.title"
            " FROM (SELECT (SELECT COUNT(*) FROM f) AS fresh, (SELECT COUNT(big_w) FROM v) AS in_big) c"
            f" LEFT JOIN (SELECT * FROM f s ORDER BY {boost} * (s.w + ? * {recency_sql('s')}) DESC, s.id LIMIT ?) b ON 1"
        )
        rows = self.conn.execute(
            sql,
            [
                *params, self.big[0], node_id, self.weights[self.big], self.base, *boost_params,
                self.ranker.recency_share, self.reference, self.ranker.half_life, self.limit,
            ],
        ).fetchall()
        self.fresh, visible_in_big = rows[0][0], rows[0][1]
        offered = [
            (-self.value(w, ntype, tags, updated), other, (other, ntype, tags, updated, title))
            for _, _, other, w, ntype, tags, updated, title in rows
            if other is not None
        ]
        offered.sort()
        self.best = offered
        self.taken = {item[1] for item in offered}
        return int(visible_in_big)

    def held_in_big(self) -> int:
        """The big class's visible neighbours, outside the small classes, that the walk holds at
        least as cheaply as a step from the hub: not fresh, so not counted."""
        w = self.weights[self.big]
        # Only a node held no dearer than a step from the hub can be stale (exactly so below).
        # The walk holds visible nodes only: one in a small class was counted there.
        outside = "".join(f" AND NOT {_member_probe(c, 'r')}" for c in self.small)
        rows = self.conn.execute(
            "SELECT r.id, r.cost FROM temp.walk_reached r"
            f" WHERE r.cost <= ? AND r.id != ? AND {_member_probe(self.big, 'r')}{outside}",
            (self.base + 1.0 / w + 1e-9, self.node_id, self.big[0], self.node_id,
             *(x for c in self.small for x in (c[0], self.node_id))),
        ).fetchall()
        return sum(1 for nid, cost in rows if nid not in self.hidden and not self.is_fresh(cost, w))

    def scan_big(self) -> bool:
        """Offer the big class's fresh visible neighbours newest first (one date's in id order,
        as they rank) until no later one can enter the best ``limit``; False when that would read
        more than ranking in SQL does (the caller ranks there)."""
        w = self.weights[self.big]
        cursor = self.conn.execute(
            f"SELECT n.id, n.updated, r.cost, {_member_probe(self.big, 'n')}"
            " FROM nodes n INDEXED BY nodes_by_recency LEFT JOIN temp.walk_reached r ON r.id = n.id"
            " WHERE n.updated IS NOT NULL ORDER BY n.updated DESC, n.id",
            (self.big[0], self.node_id),
        )
        budget = max(self.limit, int(SCAN_SHARE * self.links[self.big]))
        page = _PAGE // 4
        try:
            while budget > 0:
                rows = cursor.fetchmany(page)
                page = _PAGE
                if not rows:
                    # Every dated node read: the undated rest all score the same, at most this.
                    return len(self.best) == self.limit and self._beats(self._bound(None))
                budget -= len(rows)
                wanted: list[str] = []
                for nid, updated, cost, member in rows:
                    # A small class's neighbour was valued there at least as high (its heaviest
                    # edge); those that are not among its best can never enter.
                    if not member or nid == self.node_id or nid in self.taken or nid in self.hidden:
                        continue
                    if len(self.best) + len(wanted) >= self.limit:
                        self._offer_scanned(wanted, w)
                        wanted = []
                    if len(self.best) >= self.limit:
                        # Every later node is older, or of this date with a later id: worth at
                        # most ``bound``, and after this id among those worth exactly that.
                        bound = self._bound(updated)
                        worst, worst_id = -self.best[-1][0], self.best[-1][1]
                        if self._beats(bound) or (worst == bound and worst_id < nid):
                            return True
                    if self.is_fresh(cost, w):
                        wanted.append(nid)
                self._offer_scanned(wanted, w)
            return False
        finally:
            cursor.close()

    def scan_newest(
        self, cursor: sqlite3.Cursor, budget: int | None, weight_of: dict[str, float], held: dict[str, tuple[float, float]],
        fresh: int,
    ) -> bool:
        """``_by_sets``' scan: offer the hub's fresh visible neighbours from ``cursor`` (id, updated,
        whether the big class links it: nodes newest first, one date's in id order), each at the
        heaviest of its classes, until no later one can enter the best ``limit`` or all ``fresh``
        ones are offered. A neighbour is in ``weight_of`` (its weight there) or linked by the big
        class and not hidden (the big class's weight, the heaviest); ``held``: the walk's cost of
        those it may hold too cheaply to be fresh, with their weight. False when that would read
        more than ``budget`` nodes (the caller ranks in SQL); None: ``cursor`` holds only the
        hub's neighbours and SQLite keeps the budget (``_scan_filtered``)."""
        heaviest = self.weights[self.big]
        # A page of a filtered cursor is that many neighbours, however many nodes SQLite reads
        # for them: small pages, so it never reads far past where the best are sure.
        page = _PAGE // 4 if budget is not None else _FILTERED_PAGE
        while budget is None or budget > 0:
            rows = cursor.fetchmany(page)
            page = _PAGE if budget is not None else _FILTERED_PAGE
            if not rows:
                return len(self.best) == self.limit and self._beats(self._bound(None))
            if budget is not None:
                budget -= len(rows)
            wanted: dict[str, float] = {}
            for nid, updated, linked in rows:
                if linked and nid not in self.hidden:
                    w = heaviest
                else:
                    w = weight_of.get(nid, 0.0)
                    if not w:
                        continue
                if nid == self.node_id:
                    continue
                if len(self.best) + len(wanted) >= self.limit:
                    self._offer_weighed(wanted)
                    wanted = {}
                if len(self.best) >= self.limit:
                    bound = self._bound(updated)
                    worst, worst_id = -self.best[-1][0], self.best[-1][1]
                    if self._beats(bound) or (worst == bound and worst_id < nid):
                        return True
                was = held.get(nid)
                if was is None or self.is_fresh(was[0], w):
                    wanted[nid] = w
                    fresh -= 1
                    if not fresh:  # every fresh neighbour is among them
                        self._offer_weighed(wanted)
                        return True
            self._offer_weighed(wanted)
        return False

    def _offer_weighed(self, weight_of: dict[str, float]) -> None:
        for chunk in chunks(list(weight_of)):
            marks = ",".join("?" * len(chunk))
            for nid, ntype, tags, updated, title in _rows(
                self.conn,
                f"SELECT id, type, tags, updated, title FROM nodes WHERE id IN ({marks})", chunk
            ):
                self.offer(self.value(weight_of[nid], ntype, tags, updated), (nid, ntype, tags, updated, title))

    def _bound(self, updated: float | None) -> float:
        """The most a neighbour of the big class only, dated ``updated``, can be worth."""
        r = 0.0 if updated is None else recency(updated, self.reference, self.ranker.half_life)
        return self.top_boost * (self.weights[self.big] + self.ranker.recency_share * r)

    def _beats(self, bound: float) -> bool:
        """Whether the worst of the best ``limit`` scores above anything worth at most ``bound``."""
        return -self.best[-1][0] > bound + _MARGIN * max(1.0, abs(bound))

    def _offer_scanned(self, ids: list[str], w: float) -> None:
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            for nid, ntype, tags, updated, title in self.conn.execute(
                f"SELECT id, type, tags, updated, title FROM nodes WHERE id IN ({marks})", chunk
            ):
                self.offer(self.value(w, ntype, tags, updated), (nid, ntype, tags, updated, title))


# Where the hub's biggest class weighs the most (the built-in lenses weigh link, field, ref and
# support edges the same), its best neighbours over all its classes are the newest of those with
# the most weight, and one newest-first scan finds them, each node valued with the heaviest of
# its classes. The classes are read as sets of ids from their index (no node rows), and a node
# read newest first is asked of those sets -- or, where the biggest class is too big to read
# whole, of its index, each of the other classes' nodes being looked up once among its links
# (to count the neighbours both have). What each step costs, in microseconds of CPU a link or a
# node (1M nodes, a cold process), chooses between the two and the SQL ranking, which values
# every link (its node looked up, grouped and sorted).
COST_SQL = 7.0  # a link ranked in SQL
COST_ID = 0.3  # a link's other end read from the index into a set (``_ids``: 0.7 as rows)
COST_SEEK = 1.1  # one of the other classes' nodes looked up among the big class's links (its own index)
COST_ROW = 1.2  # a node read newest first and asked of the sets
COST_PROBE_ROW = 2.3  # a node read newest first and asked of the big class's index (the hub's end first)
COST_LIST = 0.55  # a link's other end put into the list SQLite asks (``_scan_filtered``)
COST_FILTERED_ROW = 0.4  # a node read newest first and asked of that list inside SQLite
# SQLite's virtual machine steps a node read newest first and asked of the sets takes (~9.5
# measured), and an id put into them: the filtered scan's budget is counted in steps.
_STEPS_PER_ROW = 10
_STEPS_PER_ID = 20
_STEPS_PER_TICK = 1000
_FILTERED_PAGE = 16


def _by_sets(
    conn: sqlite3.Connection,
    node_id: str,
    base: float,
    weights: dict[Class, float],
    ranker: NeighbourOrder,
    limit: int,
    include_private: bool,
    links: dict[Class, int],
    big: Class,
) -> tuple[int, list[Neighbour]] | None:
    """``best_neighbours`` for a hub whose biggest class weighs the most, or None where the SQL
    ranking costs less (or the scan meets too many old neighbours, or private nodes)."""
    if ranker.reference is None or not ranker.recency_share or ranker.tag_boosts:
        return None
    total_links = sum(links.values())
    if total_links < SCAN_AT_LEAST:
        return None
    heaviest = weights[big]
    nodes = conn.execute("SELECT MAX(rowid) FROM nodes").fetchone()[0] or 0
    # Nodes read newest first until the best are sure, about: those of the heaviest classes decide.
    rows = limit * nodes / sum(n for c, n in links.items() if weights[c] == heaviest)
    by_sets = COST_ID * total_links + COST_ROW * rows
    # The same scan with the sets asked inside SQLite: each id costs more (made into its list),
    # each node read less.
    cost_id = COST_ID + COST_LIST
    by_filter = cost_id * total_links + COST_FILTERED_ROW * rows
    filtered = by_filter < by_sets and _json_functions(conn)
    if filtered:
        by_sets = by_filter
    else:
        cost_id = COST_ID
    others = total_links - links[big]
    by_probe = (COST_ID + COST_SEEK) * others + COST_PROBE_ROW * rows
    by_sql = COST_SQL * total_links
    if min(by_sets, by_probe) >= by_sql:
        return None
    private: set[str] = set()
    if not include_private:
        many = conn.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM nodes WHERE private = 1 LIMIT ?)", (PRIVATE_AT_MOST + 1,)
        ).fetchone()[0]
        if many > PRIVATE_AT_MOST:
            return None
        if many:
            private = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 1")}
    probed = by_probe < by_sets
    # id -> the heaviest weight of the classes read that link it (the heavier read last).
    weight_of: dict[str, float] = {}
    for etype, direction in sorted((c for c in weights if not (probed and c == big)), key=lambda c: (weights[c], c)):
        near, far, _ = _ends(direction)
        weight_of.update(dict.fromkeys(
            _ids(conn, f"FROM edges WHERE {near} = ? AND type = ? AND {far} != ?", far, (node_id, etype, node_id)),
            weights[(etype, direction)],
        ))
    for p in private:
        weight_of.pop(p, None)
    # A node held dearer than a step over the lightest class from here is fresh by any class.
    held_at = base + 1.0 / min(weights.values()) + 1e-9
    scan = _Scan(conn, node_id, base, weights, ranker, limit, include_private, big, links, set())
    if probed:
        scan.hidden = (set() if include_private else _private_in(conn, node_id, big)) or set()
        in_big = _members_of(conn, node_id, big, sorted(weight_of))
        count = len(weight_of) + links[big] - len(scan.hidden) - len(in_big)
        held: dict[str, tuple[float, float]] = {}
        for nid, cost, linked in _rows(
            conn,
            f"SELECT r.id, r.cost, {_member_probe(big, 'r')} FROM temp.walk_reached r WHERE r.cost <= ? AND r.id != ?",
            (big[0], node_id, held_at, node_id),
        ):
            if linked and nid not in scan.hidden:
                held[nid] = (cost, heaviest)
            elif nid in weight_of:
                held[nid] = (cost, weight_of[nid])
        budget = max(limit, int((by_sql - (COST_ID + COST_SEEK) * others) / COST_PROBE_ROW))
        linked_sql, params = _member_probe(big, "n"), [big[0], node_id]
    else:
        count = len(weight_of)
        held = {
            nid: (cost, weight_of[nid])
            for nid, cost in _rows(
                conn,
                "SELECT r.id, r.cost FROM temp.walk_reached r WHERE r.cost <= ? AND r.id != ?", (held_at, node_id)
            )
            if nid in weight_of
        }
        budget = max(limit, int((by_sql - cost_id * total_links) / (COST_FILTERED_ROW if filtered else COST_ROW)))
        linked_sql, params = "0", []
    count -= sum(1 for cost, w in held.values() if not scan.is_fresh(cost, w))
    if count <= 0:
        return 0, []
    if not probed and filtered:
        return _scan_filtered(conn, scan, budget, weight_of, held, count)
    cursor = _rows(
        conn,
        f"SELECT n.id, n.updated, {linked_sql} FROM nodes n INDEXED BY nodes_by_recency"
        " WHERE n.updated IS NOT NULL ORDER BY n.updated DESC, n.id",
        params,
    )
    try:
        if not scan.scan_newest(cursor, budget, weight_of, held, count):
            return None
    finally:
        cursor.close()
    return count, [row for _, _, row in scan.best]


def _members_of(conn: sqlite3.Connection, node_id: str, cls: Class, ids: list[str]) -> set[str]:
    """Those of ``ids`` that are the node's neighbours by ``cls``: each looked up in the class's
    index, in id order (neighbouring index pages)."""
    near, far, index = _ends(cls[1])
    found: set[str] = set()
    for chunk in chunks(ids):
        found.update(
            r[0]
            for r in _rows(
                conn,
                f"SELECT {far} FROM edges INDEXED BY {index} WHERE {near} = ? AND type = ?"
                f" AND {far} IN ({','.join('?' * len(chunk))})",
                (node_id, cls[0], *chunk),
            )
        )
    return found


def _json_functions(conn: sqlite3.Connection) -> bool:
    """Whether this SQLite has its JSON functions (built in since 3.38; an option before)."""
    try:
        conn.execute("SELECT value FROM json_each('[]')").fetchall()
    except sqlite3.OperationalError:
        return False
    return True


def _scan_filtered(
    conn: sqlite3.Connection,
    scan: _Scan,
    budget: int,
    weight_of: dict[str, float],
    held: dict[str, tuple[float, float]],
    count: int,
) -> tuple[int, list[Neighbour]] | None:
    """``_by_sets``' newest-first scan with the sets asked inside SQLite: the hub's neighbours
    (``weight_of``, as one JSON array) are the list an ``IN`` looks each node up in, so only they
    come to Python (a node read and dropped there cost ~0.9 µs, ~0.35 here), still newest first
    from the index, one date's in id order. SQLite's progress handler keeps the budget: after
    about ``budget`` nodes read, the scan is interrupted and the caller ranks in SQL, as when
    the budget runs out in ``scan_newest``. The budget chooses only which way ranks, never the
    rows: both give SQL's answer."""
    import json

    steps = _STEPS_PER_ROW * budget + _STEPS_PER_ID * len(weight_of)
    ticks = 0

    def tick() -> bool:
        nonlocal ticks
        ticks += 1
        return ticks * _STEPS_PER_TICK > steps

    conn.set_progress_handler(tick, _STEPS_PER_TICK)
    try:
        cursor = _rows(
            conn,
            "SELECT n.id, n.updated, 0 FROM nodes n INDEXED BY nodes_by_recency"
            " WHERE n.updated IS NOT NULL AND n.id IN (SELECT value FROM json_each(?)) ORDER BY n.updated DESC, n.id",
            (json.dumps(list(weight_of)),),
        )
        try:
            # Every dated neighbour read (the cursor ends): the undated all score the same, at
            # most what ``scan_newest`` then checks.
            if not scan.scan_newest(cursor, None, weight_of, held, count):
                return None
        finally:
            cursor.close()
    except sqlite3.OperationalError as exc:
        if "interrupted" not in str(exc):
            raise
        return None  # the budget ran out
    finally:
        conn.set_progress_handler(None, 0)
    return count, [row for _, _, row in scan.best]
