"""A graph as one reader may see it: visibility is a property of the handle, not an argument.

Private nodes (``nodes.private``) are withheld from every output unless the user explicitly
includes them. Rather than a flag threaded through every function of every stage, the assembler
and the semantic layer read through a ``GraphView`` that knows whether private nodes may be seen:
each read that can meet a node filters it here, so no stage can forget to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ctx.store import reads
from ctx.store.edge_names import canonical_and_direction
from ctx.store.outline import Outline, outline_of

_CHUNK = 500


def conn_has(conn: sqlite3.Connection, sql: str) -> bool:
    return conn.execute(sql).fetchone() is not None


def chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


@dataclass
class GraphView:
    conn: sqlite3.Connection
    include_private: bool = False
    _has_private: bool | None = field(default=None, repr=False)

    def where_visible(self, alias: str = "") -> str:
        """SQL condition that hides private nodes (``alias`` is a table alias with its dot)."""
        return "1" if self.include_private else f"{alias}private = 0"

    def including_private(self) -> GraphView:
        """The same graph with nothing withheld: only for counting what was withheld, never shown."""
        return GraphView(self.conn, True)

    # -- visibility ------------------------------------------------------------------------------

    def has_private_nodes(self) -> bool:
        if self._has_private is None:
            self._has_private = (
                self.conn.execute("SELECT 1 FROM nodes WHERE private = 1 LIMIT 1").fetchone() is not None
            )
        return self._has_private

    def private_among(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are private nodes (whatever this view may show)."""
        out: set[str] = set()
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

    def find_mentions(self, text: str) -> list[str]:
        return reads.find_mentions(self.conn, text, include_private=self.include_private)

    def search(self, text: str, *, limit: int = 20, mode: str = "auto") -> list[reads.SearchHit]:
        return reads.search(self.conn, text, limit=limit, mode=mode, include_private=self.include_private)

    # -- walking ---------------------------------------------------------------------------------

    def edges_from(self, ids: list[str], column: str) -> list[tuple[str, str, str]]:
        """(src, dst, type) of resolved edges whose ``column`` (src or dst) is one of ``ids``.

        The node at the other end must exist and be visible: a private node is never reached, so
        nothing behind it leaks through the walk either.
        """
        other = "dst" if column == "src" else "src"
        visible = "" if self.include_private else " AND n.private = 0"
        rows: list[tuple[str, str, str]] = []
        for chunk in chunks(ids):
            marks = ",".join("?" * len(chunk))
            rows.extend(
                self.conn.execute(
                    f"SELECT e.src, e.dst, e.type FROM edges e JOIN nodes n ON n.id = e.{other}"
                    f" WHERE e.{column} IN ({marks}){visible}",
                    chunk,
                ).fetchall()
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

    # -- what was withheld -----------------------------------------------------------------------

    def may_match_private(self, text: str, *, vectors: bool, mentions: bool) -> bool:
        """False when no private node can be among what resolving ``text`` would give if private
        nodes were visible: not by id, not by name, not by a full-text word (any of them: every
        search mode matches a subset), not by vector (``vectors``: no private node has one), not
        as a named title (``mentions``). Cheap, indexed queries; exact, never a guess."""
        conn = self.conn
        text = text.strip()
        if not text:
            return False
        row = conn.execute("SELECT private FROM nodes WHERE id = ?", (text,)).fetchone()
        if row is not None and row[0]:
            return True
        everything = self.including_private()
        if self.private_among(everything.find_by_name(text)):
            return True
        if reads.count_private_matches(conn, text):
            return True
        if vectors and self._private_vectors():
            return True
        return mentions and bool(self.private_among(everything.find_mentions(text)))

    def _private_vectors(self) -> bool:
        try:
            return conn_has(self.conn, "SELECT 1 FROM embeddings e JOIN nodes n ON n.id = e.node_id WHERE n.private = 1 LIMIT 1")
        except sqlite3.OperationalError:  # a graph from before the embeddings table
            return False

    def private_neighbours(self, ids: Iterable[str]) -> set[str]:
        """Private nodes one edge away from any of ``ids`` (either direction)."""
        hidden: set[str] = set()
        for chunk in chunks(sorted(set(ids))):
            marks = ",".join("?" * len(chunk))
            for near, far in (("src", "dst"), ("dst", "src")):
                hidden.update(
                    r[0]
                    for r in self.conn.execute(
                        f"SELECT DISTINCT n.id FROM edges e JOIN nodes n ON n.id = e.{far}"
                        f" WHERE e.{near} IN ({marks}) AND n.private = 1",
                        chunk,
                    )
                )
        return hidden
