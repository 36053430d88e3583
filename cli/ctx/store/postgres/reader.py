"""Every read of a team graph on PostgreSQL: the ``GraphReader`` protocol (ctx.store.protocols).

The same ids, values and orders as the SQLite engine (``ctx.store.view.GraphView``) for the same
imported sources; only full-text ranking is PostgreSQL's own (``fulltext``). Visibility is the
reader's property, as on SQLite; on top of it, row-level security decides what the connected
role may read at all: a role not granted private notes gets no private row whatever the reader
asks, so ``private_among`` and the withheld counts see only what the role may see.

Nothing here writes to the graph or makes a temporary table, so a reader works on a read-only
role and on a hot-standby replica; the walk's reached nodes are kept in Python and sent with the
one query that needs them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Container, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ctx.edges import canonical_and_direction, walked_name
from ctx.store.postgres import fulltext
from ctx.store.postgres.vector_text import _vector, vector_text
from ctx.store.types import (
    Crumb,
    EdgeView,
    EmbeddingStatus,
    FileState,
    Neighbour,
    RankedNeighbour,
    ScanTable,
    Node,
    NodeFacts,
    NodeText,
    Outline,
    OutlineEntry,
    PassageHit,
    SearchHit,
    Source,
    StoredPassage,
    WalkEdge,
    EdgeEnds,
    WalkDetail,
)

if TYPE_CHECKING:
    import psycopg

    from ctx.config import PrivacyConfig, PrivacyRules
    from ctx.store.protocols import NeighbourOrder

BREADCRUMB_MAX_DEPTH = 32
HEADING_SEP = " > "

NODE_COLUMNS = (
    "id, title, body, type, tags, fields, aliases, source_id, source_path, parent_id, position,"
    " created, updated, content_hash, tokens"
)


def _node(row: tuple[Any, ...]) -> Node:
    return Node(
        id=row[0], title=row[1], body=row[2], type=row[3], tags=json.loads(row[4]), fields=json.loads(row[5]),
        aliases=json.loads(row[6]), source_id=row[7], source_path=row[8], parent_id=row[9], position=row[10],
        created=row[11], updated=row[12], content_hash=row[13], tokens=row[14],
    )


# (connection, model, visibility) -> (state, ids, matrix) of the last vector_matrix read.
_MATRICES: dict[tuple[int, str, bool], tuple[Any, list[str], np.ndarray]] = {}
# The same for passage vectors: (state, passage ids, node ids, matrix).
_PASSAGE_MATRICES: dict[tuple[int, str, bool], tuple[Any, list[int], list[str], np.ndarray]] = {}
# And for paragraph vectors: (state, passage ids, node ids, paragraph hashes, matrix).
_PARAGRAPH_MATRICES: dict[tuple[int, str, bool], tuple[Any, list[int], list[str], list[str], np.ndarray]] = {}



def outline_link_sql(end: str) -> str:
    """The query of ``with_outline_link``: the ``end`` (src or dst) of child edges among the ids
    (%s 1) whose two nodes share a tracked file of a source in the formats (%s 2).

    Each node is looked up by its id in a LATERAL subquery that OFFSET 0 keeps apart from the
    join. Joined plainly, the planner matched the parent through ``nodes_by_file`` (same source
    and file, estimated one row) and then filtered every node of that file by id: for 500 ids of
    logseq-docs 40-80 ms a call where the id lookups take ~8 ms, with the same rows."""
    column = "src" if end == "src" else "dst"
    return (
        f"SELECT DISTINCT e.{column} FROM edges e"
        " CROSS JOIN LATERAL (SELECT file, source_id FROM nodes WHERE id = e.src OFFSET 0) p"
        " CROSS JOIN LATERAL (SELECT file, source_id FROM nodes WHERE id = e.dst OFFSET 0) n"
        f" WHERE e.type = 'child' AND e.{column} = ANY(%s) AND p.file <> '' AND p.file = n.file"
        " AND p.source_id = n.source_id AND p.source_id IN (SELECT id FROM sources WHERE format = ANY(%s))"
    )

class PostgresReader:
    """A graph as one reader may see it, on a PostgreSQL connection (autocommit)."""

    def __init__(self, conn: "psycopg.Connection[Any]", include_private: bool = False) -> None:
        self.conn = conn
        self.include_private = include_private
        self._has_private: bool | None = None
        self._reached: dict[str, float] = {}

    def _rows(self, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Any = None) -> tuple[Any, ...] | None:
        return self.conn.execute(sql, params).fetchone()

    def _hide(self, alias: str = "") -> str:
        return "" if self.include_private else f" AND NOT {alias}private"

    def has_private_nodes(self) -> bool:
        if self._has_private is None:
            self._has_private = self._one("SELECT EXISTS (SELECT 1 FROM nodes WHERE private)")[0]  # type: ignore[index]
        return bool(self._has_private)

    def hidden_total(self) -> int:
        if self.include_private or not self.has_private_nodes():
            return 0
        return int(self._one("SELECT count(*) FROM nodes WHERE private")[0])  # type: ignore[index]

    def hidden_passages_total(self) -> int:
        if self.include_private or not self.has_private_nodes():
            return 0
        row = self._one("SELECT count(*) FROM passages p WHERE p.node_id IN (SELECT id FROM nodes WHERE private)")
        return int(row[0]) if row else 0

    def private_among(self, ids: Iterable[str]) -> set[str]:
        wanted = sorted(set(ids))
        if not wanted:
            return set()
        return {r[0] for r in self._rows("SELECT id FROM nodes WHERE private AND id = ANY(%s)", (wanted,))}

    def hidden_among(self, ids: Iterable[str]) -> set[str]:
        return set() if self.include_private else self.private_among(ids)

    def visible_ids(self, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        return {r[0] for r in self._rows(f"SELECT id FROM nodes WHERE id = ANY(%s){self._hide()}", (list(ids),))}

    def node_exists(self, node_id: str) -> bool:
        return self._one(f"SELECT 1 FROM nodes WHERE id = %s{self._hide()}", (node_id,)) is not None

    def node(self, node_id: str) -> Node | None:
        row = self._one(f"SELECT {NODE_COLUMNS} FROM nodes WHERE id = %s{self._hide()}", (node_id,))
        return _node(row) if row else None

    def resolve_one(self, id_or_title: str) -> str | None:
        if self.node_exists(id_or_title):
            return id_or_title
        names = self.find_by_name(id_or_title)
        return names[0] if names else None

    def node_facts(self, ids: list[str], *, with_fields: bool) -> list[NodeFacts]:
        if not ids:
            return []
        rows = self._rows(
            "SELECT id, title, type, tags, fields, source_path, parent_id, position, created, updated, tokens"
            " FROM nodes WHERE id = ANY(%s) ORDER BY id",
            (list(ids),),
        )
        return [
            NodeFacts(
                id=r[0], title=r[1], type=r[2], tags=json.loads(r[3]) if r[3] else [],
                fields=(json.loads(r[4]) if r[4] else {}) if with_fields else {},
                source_path=r[5], parent_id=r[6], position=r[7], created=r[8], updated=r[9], tokens=int(r[10] or 0),
            )
            for r in rows
        ]

    def bodies(self, ids: list[str]) -> dict[str, str]:
        if not ids:
            return {}
        return {r[0]: r[1] or "" for r in self._rows("SELECT id, body FROM nodes WHERE id = ANY(%s)", (list(ids),))}

    def newest_update(self) -> float | None:
        # Among the nodes this reader may see, as on SQLite: a private note's date would move
        # every score (and be printed).
        row = self._one(f"SELECT MAX(updated) FROM nodes WHERE true{self._hide()}")
        return float(row[0]) if row and row[0] is not None else None

    def node_count(self) -> int:
        return int(self._one("SELECT count(*) FROM nodes")[0])  # type: ignore[index]

    def is_empty(self) -> bool:
        return self._one("SELECT 1 FROM nodes LIMIT 1") is None

    def node_texts(self, ids: list[str], chunk: int = 256) -> Iterator[list[NodeText]]:
        for start in range(0, len(ids), chunk):
            part = ids[start : start + chunk]
            found = {
                r[0]: (r[0], r[1], r[2], r[3])
                for r in self._rows("SELECT id, title, body, content_hash FROM nodes WHERE id = ANY(%s)", (part,))
            }
            yield [found[i] for i in part if i in found]

    # -- names and full text ---------------------------------------------------------------------

    def find_by_name(self, text: str) -> list[str]:
        key = text.strip().lower()
        if not key:
            return []
        rows = self._rows(
            "SELECT k.node_id, MIN(k.priority) AS p FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            f" WHERE k.key = %s AND k.kind <> 'id'{self._hide('n.')}"
            " GROUP BY k.node_id ORDER BY p, length(k.node_id), k.node_id",
            (key,),
        )
        if rows:
            return [r[0] for r in rows]
        rows = self._rows(
            f"SELECT id FROM nodes WHERE ctx_ascii_lower(title) = ctx_ascii_lower(%s){self._hide()}"
            " ORDER BY length(id), id",
            (text.strip(),),
        )
        return [r[0] for r in rows]

    def find_by_path(self, text: str) -> list[str]:
        from ctx.store.reads import _NOTE_SUFFIXES, _on_disk

        path = text.strip().replace("\\", "/")
        if not path or ("/" not in path and not path.lower().endswith(_NOTE_SUFFIXES)) or "\n" in path:
            return []
        while path.startswith("./"):
            path = path[2:]
        wanted: list[tuple[int | None, str]] = [(None, path)]
        if not path.lower().endswith(_NOTE_SUFFIXES):
            wanted += [(None, path + ".md"), (None, path + ".markdown")]
        sources = self._rows("SELECT id, root FROM sources ORDER BY id")
        wanted += _on_disk(text.strip(), sources)  # type: ignore[arg-type]
        for source_id, relpath in wanted:
            ids: list[str] = []
            for sid, _ in sources:
                if source_id is not None and sid != source_id:
                    continue
                ids += [
                    r[0] for r in self._rows(
                        "SELECT n.id FROM nodes n LEFT JOIN nodes p ON p.id = n.parent_id"
                        " WHERE n.source_id = %s AND n.file = %s AND (p.id IS NULL OR p.file <> n.file)"
                        f"{self._hide('n.')} ORDER BY n.id LIMIT 2",
                        (sid, relpath),
                    )
                ]
            if ids:
                return ids if len(ids) == 1 else []
        stem, dot, suffix = path.rpartition(".")
        if dot and f".{suffix.lower()}" in (".md", ".markdown") and stem:
            return self.find_by_name(stem)
        return []

    def name_keys_of(self, ids: list[str]) -> list[tuple[str, str]]:
        if not ids:
            return []
        return [
            (r[0], r[1])
            for r in self._rows(
                "SELECT k.key, n.title FROM node_keys k JOIN nodes n ON n.id = k.node_id"
                f" WHERE k.node_id = ANY(%s) AND k.kind IN ('title', 'alias'){self._hide('n.')} ORDER BY k.key, n.title",
                (list(ids),),
            )
        ]

    def find_mentions(self, text: str) -> list[str]:
        from ctx.store.postgres.mentions import mentioned

        return mentioned(text, self._named_by)

    def _named_by(self, names: list[str]) -> dict[str, list[str]]:
        """name -> ids of visible nodes with a title/alias key equal to it or starting with
        ``name + " ("``, for every name at once (one round trip, not one per phrase)."""
        if not names:
            return {}
        rows = self._rows(
            "SELECT q.name, k.node_id FROM unnest(%s::text[]) AS q(name)"
            " JOIN node_keys k ON k.kind IN ('title', 'alias')"
            "  AND (k.key = q.name OR (k.key >= (q.name || ' (') COLLATE \"C\" AND k.key < (q.name || ' )') COLLATE \"C\"))"
            f" JOIN nodes n ON n.id = k.node_id{' WHERE NOT n.private' if not self.include_private else ''}",
            (names,),
        )
        out: dict[str, list[str]] = {}
        for name, node_id in rows:
            out.setdefault(name, []).append(node_id)
        return out

    def search(self, text: str, *, limit: int = 20, mode: str = "auto", snippets: bool = True) -> list[SearchHit]:
        return fulltext.search_nodes(self, text, limit=limit, mode=mode, snippets=snippets)

    def notes_matching(self, word: str, *, at_most: int) -> int:
        return fulltext.count_nodes(self, word, at_most=at_most)

    def name_keys_near(self, key: str, *, cutoff: float, max_keys: int) -> dict[str, str]:
        counts: dict[str, int] = {}
        for ch in key:
            counts[ch] = counts.get(ch, 0) + 1
        shared = " + ".join("least(%s, length(k.key) - length(replace(k.key, %s, '')))" for _ in counts) or "0"
        shared_params = [x for ch, n in counts.items() for x in (n, ch)]
        rows = self._rows(
            "SELECT k.key, MIN(n.title) FROM node_keys k JOIN nodes n ON n.id = k.node_id"
            " WHERE k.kind IN ('title', 'alias') AND length(k.key) BETWEEN %s AND %s"
            f" AND ({shared}) >= %s * (%s + length(k.key)) - 1e-9{self._hide('n.')}"
            " GROUP BY k.key ORDER BY k.key LIMIT %s",
            (max(1, len(key) - 3), len(key) + 3, *shared_params, cutoff / 2, len(key), max_keys),
        )
        return {r[0]: r[1] for r in rows}

    # -- edges and the walk ----------------------------------------------------------------------

    def walk_edges(self, ids: list[str], column: str) -> list[WalkEdge]:
        if not ids:
            return []
        near, other = ("src", "dst") if column == "src" else ("dst", "src")
        rows = self._rows(
            "SELECT e.src, e.dst, e.type, n.type, n.tags, n.updated, n.title"
            f" FROM edges e JOIN nodes n ON n.id = e.{other} WHERE e.{near} = ANY(%s){self._hide('n.')}",
            (list(ids),),
        )
        return [tuple(r) for r in rows]

    def edge_ends(self, ids: list[str], column: str) -> list[EdgeEnds]:
        if not ids:
            return []
        near, other = ("src", "dst") if column == "src" else ("dst", "src")
        rows = self._rows(
            f"SELECT src, dst, type FROM edges WHERE {near} = ANY(%s) AND {other} IS NOT NULL", (list(ids),)
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def edge_lists(self, node_id: str, column: str) -> list[tuple[str, list[str]]]:
        near, other = ("src", "dst") if column == "src" else ("dst", "src")
        rows = self._rows(
            f"SELECT type, array_agg({other} ORDER BY {other} COLLATE \"C\") FROM edges WHERE {near} = %s"
            f" AND {other} IS NOT NULL AND {other} != %s GROUP BY type ORDER BY type COLLATE \"C\"",
            (node_id, node_id),
        )
        return [(r[0], list(r[1])) for r in rows]

    def walk_details(self, ids: list[str] | None = None) -> list[WalkDetail]:
        if ids is None:
            where, params = ("" if self.include_private else " WHERE NOT private"), None
        else:
            where, params = " WHERE id = ANY(%s)" + self._hide(), (list(ids),)
        rows = self._rows("SELECT id, type, tags, updated, title FROM nodes" + where, params)
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def degrees(self, ids: list[str], column: str, at_most: int | None = None) -> dict[str, int]:
        near = "src" if column == "src" else "dst"
        if not ids:
            return {}
        if at_most is not None:
            rows = self._rows(
                f"SELECT i, (SELECT count(*) FROM (SELECT 1 FROM edges WHERE {near} = i LIMIT %s) x)"
                " FROM unnest(%s::text[]) AS i",
                (at_most, sorted(set(ids))),
            )
            return {r[0]: int(r[1]) for r in rows if r[1]}
        rows = self._rows(f"SELECT {near}, count(*) FROM edges WHERE {near} = ANY(%s) GROUP BY {near}", (list(ids),))
        return {r[0]: int(r[1]) for r in rows}

    def edge_classes(self, node_id: str) -> list[tuple[str, str]]:
        out = [(r[0], "out") for r in self._rows("SELECT DISTINCT type FROM edges WHERE src = %s ORDER BY type", (node_id,))]
        out += [(r[0], "in") for r in self._rows("SELECT DISTINCT type FROM edges WHERE dst = %s ORDER BY type", (node_id,))]
        return out

    def remember_reached(self, costs: Iterable[tuple[str, float]], *, reset: bool = False) -> None:
        if reset:
            self._reached = {}
        self._reached.update(costs)

    def best_neighbours(
        self, node_id: str, base: float, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> tuple[int, list[Neighbour]]:
        reached = self._reached
        fresh: list[Neighbour] = [
            row[:5] for row in self.ranked_neighbours(node_id, weights, ranker)
            if (cost := reached.get(row[0])) is None or base + 1.0 / row[5] < cost - 1e-12
        ]
        return len(fresh), fresh[:limit]

    def ranks_best_alone(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> bool:
        return False  # best_neighbours ranks the whole list here

    def scan_table(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> ScanTable | None:
        return None  # ranks_best_alone is False here: a warm process keeps the whole list

    def newest_neighbours(
        self, node_id: str, cls: tuple[str, str], count: int, after: tuple[float, str] | None = None
    ) -> list[Neighbour]:
        etype, direction = cls
        near, far = ("src", "dst") if direction == "out" else ("dst", "src")
        where: tuple[object, ...] = ()
        later = ""
        if after is not None:
            later = " AND (n.updated < %s OR (n.updated = %s AND n.id > %s))"
            where = (after[0], after[0], after[1])
        rows = self._rows(
            "SELECT n.id, n.type, n.tags, n.updated, n.title FROM nodes n"
            f" WHERE n.updated IS NOT NULL{later} AND n.id <> %s"
            f" AND EXISTS (SELECT 1 FROM edges e WHERE e.{far} = n.id AND e.type = %s AND e.{near} = %s)"
            f"{self._hide('n.')} ORDER BY n.updated DESC, n.id LIMIT %s",
            (*where, node_id, etype, node_id, count),
        )
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def ranked_neighbours(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder
    ) -> list[RankedNeighbour]:
        out_types = sorted({t for t, d in weights if d == "out"})
        in_types = sorted({t for t, d in weights if d == "in"})
        keys = sorted(weights)
        rows = self._rows(
            "SELECT e.other, n.type, n.tags, n.updated, n.title, MAX(w.weight) FROM ("
            " SELECT dst AS other, type, 'out' AS dir FROM edges WHERE src = %s AND type = ANY(%s) AND dst <> %s"
            " UNION ALL"
            " SELECT src, type, 'in' FROM edges WHERE dst = %s AND type = ANY(%s) AND src <> %s) e"
            " JOIN unnest(%s::text[], %s::text[], %s::float8[]) AS w(type, dir, weight)"
            "  ON w.type = e.type AND w.dir = e.dir"
            f" JOIN nodes n ON n.id = e.other{' WHERE NOT n.private' if not self.include_private else ''}"
            " GROUP BY e.other, n.type, n.tags, n.updated, n.title",
            (
                node_id, out_types, node_id, node_id, in_types, node_id,
                [t for t, _ in keys], [d for _, d in keys], [weights[k] for k in keys],
            ),
        )
        recency_on = ranker.reference is not None and bool(ranker.recency_share)
        ranked: list[tuple[float, str, RankedNeighbour]] = []
        for other, ntype, tags, updated, title, weight in rows:
            recency = 0.0
            if recency_on and updated is not None:
                assert ranker.reference is not None
                recency = 0.5 ** ((max(0.0, ranker.reference - updated) / 86400.0) / ranker.half_life)
            boost = ranker.boost(ntype, tags) if (ranker.type_boosts or ranker.tag_boosts) else 1.0
            value = boost * (weight + ranker.recency_share * recency)
            ranked.append((value, other, (other, ntype, tags, updated, title, weight)))
        ranked.sort(key=lambda item: (-item[0], item[1]))
        return [item[2] for item in ranked]

    def edges_around(
        self, node_id: str, classes: Iterable[tuple[str, str]], others: list[str], degree: int = 0
    ) -> list[tuple[str, str, str]]:
        wanted = set(classes)
        rows: list[tuple[str, str, str]] = []
        for direction, near, far in (("out", "src", "dst"), ("in", "dst", "src")):
            types = sorted({t for t, d in wanted if d == direction})
            if not types or not others:
                continue
            rows.extend(
                (other, etype, direction)
                for other, etype in self._rows(
                    f"SELECT {far}, type FROM edges WHERE {far} = ANY(%s) AND type = ANY(%s)"
                    f" AND {near} = %s AND {far} <> %s",
                    (list(others), types, node_id, node_id),
                )
            )
        return rows

    def neighbour_ids(self, ids: list[str], names: tuple[str, ...]) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {i: {} for i in ids}
        if not ids:
            return out
        for name in names:
            canonical, direction = canonical_and_direction(name)
            near, far = ("dst", "src") if direction == "in" else ("src", "dst")
            for here, there in self._rows(
                f"SELECT e.{near}, e.{far} FROM edges e JOIN nodes n ON n.id = e.{far}"
                f" WHERE e.type = %s AND e.{near} = ANY(%s){self._hide('n.')}",
                (canonical, list(ids)),
            ):
                out[here].setdefault(name, []).append(there)
        for per_node in out.values():
            for name in per_node:
                per_node[name] = sorted(set(per_node[name]))
        return out

    def edges_among(self, ids: list[str], edge_type: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if not ids:
            return out
        for src, dst in self._rows(
            "SELECT src, dst FROM edges WHERE type = %s AND src = ANY(%s) AND dst = ANY(%s)",
            (edge_type, list(ids), list(ids)),
        ):
            out.setdefault(src, []).append(dst)
        for targets in out.values():
            targets.sort()
        return out

    def edges_of(self, node_id: str) -> list[EdgeView]:
        out: list[EdgeView] = []
        for etype, dst, target, by_id, label, title, private in self._rows(
            "SELECT e.type, e.dst, e.target, e.by_id, e.label, n.title, n.private FROM edges e"
            " LEFT JOIN nodes n ON n.id = e.dst WHERE e.src = %s ORDER BY e.type, e.position NULLS FIRST, e.id",
            (node_id,),
        ):
            if private and not self.include_private:
                # A link by name to a private note reads as a link to a missing note (as on
                # SQLite); an edge by id goes with the private node. (A role without access to
                # private rows does not get the edge at all: row security hides it.)
                if not by_id and target:
                    out.append(EdgeView(etype, "out", None, None, target, label))
                continue
            out.append(EdgeView(etype, "out", dst, title, target, label))
        for etype, src, label, title in self._rows(
            "SELECT e.type, e.src, e.label, n.title FROM edges e JOIN nodes n ON n.id = e.src"
            f" WHERE e.dst = %s{self._hide('n.')} ORDER BY e.type, e.src, e.id",
            (node_id,),
        ):
            out.append(EdgeView(walked_name(etype, "in"), "in", src, title, None, label))
        return out

    def recent_nodes(self, reference: float | None, hours: float, limit: int) -> list[str]:
        if reference is None or limit <= 0:
            return []
        rows = self._rows(
            f"SELECT id FROM nodes WHERE updated >= %s AND type <> 'tag'{self._hide()}"
            " ORDER BY updated DESC, id LIMIT %s",
            (reference - hours * 3600.0, limit),
        )
        return [r[0] for r in rows]

    def siblings_in_order(self, node_id: str) -> tuple[str | None, list[str]]:
        hidden = "" if self.include_private else " AND (n.id = %s OR NOT n.private)"
        row = self._one("SELECT parent_id FROM nodes WHERE id = %s", (node_id,))
        if row is not None and row[0] is not None:
            order = self._rows(
                f"SELECT n.id FROM nodes n WHERE n.parent_id = %s{hidden} ORDER BY n.position NULLS LAST, n.id",
                (row[0], node_id) if hidden else (row[0],),
            )
            return row[0], [r[0] for r in order]
        edge = self._one("SELECT src FROM edges WHERE dst = %s AND type = 'child' ORDER BY src LIMIT 1", (node_id,))
        if edge is None:
            return None, []
        order = self._rows(
            f"SELECT n.id FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = %s AND e.type = 'child'{hidden}"
            " ORDER BY e.position NULLS LAST, n.position NULLS LAST, n.id",
            (edge[0], node_id) if hidden else (edge[0],),
        )
        return edge[0], list(dict.fromkeys(r[0] for r in order))

    # -- outlines --------------------------------------------------------------------------------

    def _children(self, node_id: str) -> list[tuple[Any, ...]]:
        return self._rows(
            "SELECT n.id, n.title, n.body, n.type FROM edges e JOIN nodes n ON n.id = e.dst"
            " WHERE e.src = %s AND e.type = 'child' ORDER BY e.position NULLS LAST, n.position NULLS LAST, n.id",
            (node_id,),
        )

    def outline(self, page_id: str, max_nodes: int) -> Outline:
        found = self._outline(page_id, max_nodes)
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

    def _outline(self, page_id: str, max_nodes: int) -> Outline:
        entries: list[OutlineEntry] = []
        seen = {page_id}
        stack: list[tuple[list[tuple[Any, ...]], int]] = [(list(reversed(self._children(page_id))), 1)]
        while stack:
            pending, depth = stack[-1]
            if not pending:
                stack.pop()
                continue
            row = pending.pop()
            if row[0] in seen:
                continue
            if len(entries) >= max_nodes:
                return Outline(entries, truncated=True)
            seen.add(row[0])
            entries.append(OutlineEntry(row[0], row[1], row[2], row[3], depth))
            children = self._children(row[0])
            if children:
                stack.append((list(reversed(children)), depth + 1))
        return Outline(entries, truncated=False)

    def breadcrumb(self, node_id: str) -> list[Crumb]:
        crumbs: list[Crumb] = []
        seen = {node_id}
        current = node_id
        for _ in range(BREADCRUMB_MAX_DEPTH):
            row = self._one(
                "SELECT n.id, n.title, n.type FROM edges e JOIN nodes n ON n.id = e.src"
                " WHERE e.dst = %s AND e.type = 'child' ORDER BY n.file = '', length(n.id), n.id LIMIT 1",
                (current,),
            )
            if row is None or row[0] in seen:
                break
            seen.add(row[0])
            crumbs.append(Crumb(row[0], row[1], row[2]))
            current = row[0]
        crumbs.reverse()
        return crumbs

    def with_outline_link(self, ids: list[str], formats: tuple[str, ...], end: str) -> set[str]:
        if not ids or not formats:
            return set()
        rows = self._rows(outline_link_sql(end), (list(ids), list(formats)))
        return {r[0] for r in rows}

    # -- passages --------------------------------------------------------------------------------

    def has_passages(self) -> bool:
        # Hidden passages do not count (see the SQLite view's has_passages).
        if self.include_private or not self.has_private_nodes():
            return self._one("SELECT 1 FROM passages LIMIT 1") is not None
        return self._one("SELECT 1 FROM passages WHERE node_id NOT IN (SELECT id FROM nodes WHERE private) LIMIT 1") is not None

    def passages_of(self, node_ids: Iterable[str]) -> dict[str, list[StoredPassage]]:
        """Every passage of the given nodes, in order; each text is the span ``passage_texts``
        defines (``own_text``, else the body's characters ``start`` to ``end`` with newlines
        trimmed), cut here from the body sent once per node, with its first passage.

        Through the view, each passage row detoasted (decompressed) the whole body again and
        ``substr`` walked it to the span: four single-file journals of 150-225 KB, 1,120
        passages, took ~1.3 s a read where the rows and the bodies once take ~6 ms. The same
        join the view makes, as the same role: row security hides the same passages and bodies."""
        ids = list(dict.fromkeys(node_ids))
        out: dict[str, list[StoredPassage]] = {}
        if not ids:
            return out
        body = ""
        # A CASE that yields NULL never detoasts the body: only a node's first row carries it.
        for pid, node_id, ord_, heading, own, begin, end, tokens, digest, first_body in self._rows(
            'SELECT p.id, p.node_id, p.ord, p.heading, p.own_text, p.start, p."end", p.tokens, p.hash,'
            " CASE WHEN p.ord = min(p.ord) OVER (PARTITION BY p.node_id) THEN n.body END"
            " FROM passages p JOIN nodes n ON n.id = p.node_id"
            " WHERE p.node_id = ANY(%s) ORDER BY p.node_id, p.ord",
            (ids,),
        ):
            if first_body is not None:
                body = first_body
            text = own if own is not None else body[begin:end].strip("\n")
            parts = tuple(heading.split(HEADING_SEP)) if heading else ()
            out.setdefault(node_id, []).append(StoredPassage(pid, node_id, ord_, parts, text, tokens, digest))
        return out

    def passage_terms_known(self, terms: list[str]) -> list[str]:
        return fulltext.known_terms(self, terms)

    def block_texts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """{id as asked: (body, page title)} for the visible nodes ``ids`` name, exactly or in
        lower case; the page is the topmost ancestor by ``parent_id`` (at most 32 up)."""
        asked: dict[str, str] = {}
        for uid in ids:
            asked.setdefault(uid, uid)
            asked.setdefault(uid.lower(), uid)
        out: dict[str, tuple[str, str]] = {}
        if not asked:
            return out
        rows = self._rows(
            "WITH RECURSIVE up(start, id, parent, title, depth) AS ("
            f" SELECT n.id, n.id, n.parent_id, n.title, 0 FROM nodes n WHERE n.id = ANY(%s){self._hide('n.')}"
            " UNION ALL SELECT up.start, p.id, p.parent_id, p.title, up.depth + 1 FROM up JOIN nodes p ON p.id = up.parent"
            " WHERE up.depth < 32)"
            " SELECT up.start, n.body, up.title FROM up JOIN nodes n ON n.id = up.start"
            " WHERE up.parent IS NULL OR up.depth = 32 OR NOT EXISTS (SELECT 1 FROM nodes p WHERE p.id = up.parent)"
            " ORDER BY up.start",
            (list(asked),),
        )
        for node_id, body, page in rows:
            key = asked[node_id]
            if key not in out or node_id == key:
                out[key] = (body or "", page or "")
        return out

    def search_passages(
        self, terms: list[str], *, limit: int, visible: Container[str] | None = None
    ) -> list[PassageHit]:
        return fulltext.search_passages(self, terms, limit=limit)  # its ranking joins the nodes already

    def passages_stale(self) -> bool:
        from ctx.passages import SPLITTER_VERSION

        version = self.setting("splitter_version")
        if version is None or int(version) != SPLITTER_VERSION:
            return self._one("SELECT 1 FROM nodes LIMIT 1") is not None
        return self._one("SELECT 1 FROM nodes WHERE split = 0 LIMIT 1") is not None

    # -- vectors ---------------------------------------------------------------------------------

    def active_model(self) -> str | None:
        return self.setting("embedding_model")

    def embedding_status(self, model: str | None = None) -> EmbeddingStatus:
        model = model or self.active_model()
        nodes = self.node_count()
        if model is None:
            return EmbeddingStatus(None, nodes, 0)
        row = self._one(
            "SELECT count(*) FROM embeddings e JOIN nodes n ON n.id = e.node_id AND n.content_hash = e.content_hash"
            " WHERE e.model = %s",
            (model,),
        )
        return EmbeddingStatus(model, nodes, int(row[0]) if row else 0)

    def embedding_coverage(self) -> dict[str, Any]:
        # Of the nodes this reader may see, as on SQLite: row security hides a private node from a
        # role that may not read it, but the graph's owner reads every row, so without
        # --include-private its stats must leave the private ones out themselves.
        model = self.active_model()
        nodes = self.node_count()
        if not self.include_private:
            nodes -= int(self._one("SELECT count(*) FROM nodes WHERE private")[0])  # type: ignore[index]
        row = self._one(
            "SELECT count(*) FILTER (WHERE e.model = %s AND e.content_hash = n.content_hash),"
            " count(*) FILTER (WHERE NOT (e.model = %s AND e.content_hash = n.content_hash))"
            " FROM embeddings e JOIN nodes n ON n.id = e.node_id"
            + ("" if self.include_private else " WHERE NOT n.private"),
            (model or "", model or ""),
        )
        fresh, stale = (int(row[0]), int(row[1])) if row else (0, 0)
        return {"model": model, "nodes": nodes, "fresh": fresh, "stale": stale, "missing": nodes - fresh - stale}

    def nodes_without_static_vectors(self, model: str) -> int:
        # The owner reads private rows too: without --include-private they are left out here.
        row = self._one(
            "SELECT count(DISTINCT p.node_id) FROM passages p"
            + ("" if self.include_private else " JOIN nodes n ON n.id = p.node_id AND NOT n.private")
            + " WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = %s AND v.hash = p.hash)",
            (model,),
        )
        return int(row[0]) if row else 0

    def has_embeddings(self) -> bool:
        return self._one("SELECT 1 FROM embeddings LIMIT 1") is not None

    def has_vectors(self) -> bool:
        # Node vectors, or (``ctx embed``'s first stage) passages' static ones.
        return self.active_model() is not None and (
            self.has_embeddings() or bool(self.setting("embedding_first_stage"))
        )

    def model_dim(self, model: str) -> int:
        row = self._one("SELECT dim FROM embeddings WHERE model = %s LIMIT 1", (model,))
        return int(row[0]) if row else 0

    def node_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        return {
            r[0]: _vector(r[1])
            for r in self._rows(
                "SELECT e.node_id, e.vector FROM embeddings e JOIN nodes n"
                " ON n.id = e.node_id AND n.content_hash = e.content_hash WHERE e.model = %s AND e.node_id = ANY(%s)",
                (model, list(ids)),
            )
        }

    def unvectored_nodes(self, model: str, ids: Iterable[str]) -> set[str]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return set()
        have = {
            r[0] for r in self._rows(
                "SELECT e.node_id FROM embeddings e JOIN nodes n ON n.id = e.node_id AND n.content_hash = e.content_hash"
                " WHERE e.model = %s AND e.node_id = ANY(%s)",
                (model, wanted),
            )
        }
        return set(wanted) - have

    def unvectored_passages(self, model: str, passage_ids: Iterable[int]) -> set[int]:
        wanted = list(dict.fromkeys(passage_ids))
        if not wanted:
            return set()
        return {
            r[0] for r in self._rows(
                "SELECT p.id FROM passages p WHERE p.id = ANY(%s) AND NOT EXISTS"
                " (SELECT 1 FROM passage_vectors v WHERE v.model = %s AND v.hash = p.hash)",
                (wanted, model),
            )
        }

    def vector_matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        """Every fresh vector of ``model``, kept between calls on this connection while the
        graph's version and the model's vectors (count, newest seq) are unchanged: a warm MCP
        server reads the matrix once, not once per build."""
        state = self._one(
            "SELECT (SELECT value FROM meta WHERE key = 'graph_version'), count(*), COALESCE(MAX(seq), 0)"
            " FROM embeddings WHERE model = %s",
            (model,),
        )
        key = (id(self.conn), model, self.include_private)
        cached = _MATRICES.get(key)
        if cached is not None and cached[0] == state:
            return cached[1], cached[2]
        ids, matrix = self._vector_matrix(model)
        _MATRICES[key] = (state, ids, matrix)
        return ids, matrix

    def _vector_matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        rows = self._rows(
            "SELECT e.node_id, e.vector FROM embeddings e JOIN nodes n"
            " ON n.id = e.node_id AND n.content_hash = e.content_hash WHERE e.model = %s ORDER BY e.node_id",
            (model,),
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], np.vstack([_vector(r[1]) for r in rows])

    def node_vector_search(self, model: str) -> Any:
        from ctx.store.postgres import hnsw

        return hnsw.search_for(self.conn, model)

    def passage_vector_matrix(self, model: str) -> tuple[list[int], list[str], np.ndarray]:
        """Kept between calls on this connection while the graph's version (passages change only
        with an import) and the model's passage vectors (their count and hashes: embedding adds,
        an import's prune removes) are unchanged: re-reading every passage vector cost a warm build on the
        dwarves vault ~1 s."""
        state = self._one(
            "SELECT current_database(), current_schema(), (SELECT value FROM meta WHERE key = 'graph_version'),"
            " count(*), COALESCE(sum(hashtext(hash)), 0) FROM passage_vectors WHERE model = %s",
            (model,),
        )
        key = (id(self.conn), model, self.include_private)
        cached = _PASSAGE_MATRICES.get(key)
        if cached is not None and cached[0] == state:
            return cached[1], cached[2], cached[3]
        found = self._passage_vector_matrix(model)
        _PASSAGE_MATRICES[key] = (state, *found)
        return found

    def _passage_vector_matrix(self, model: str) -> tuple[list[int], list[str], np.ndarray]:
        rows = self._rows(
            "SELECT p.id, p.node_id, v.vector FROM passages p"
            " JOIN passage_vectors v ON v.model = %s AND v.hash = p.hash ORDER BY p.id",
            (model,),
        )
        if not rows:
            return [], [], np.zeros((0, 0), dtype=np.float32)
        return [r[0] for r in rows], [r[1] for r in rows], np.vstack([_vector(r[2]) for r in rows])

    def pending_node_ids(self, model: str) -> list[str]:
        rows = self._rows(
            "SELECT n.id FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id"
            " WHERE e.node_id IS NULL OR e.model <> %s OR e.content_hash <> n.content_hash ORDER BY n.seq",
            (model,),
        )
        return [r[0] for r in rows]

    def pending_passages(self, model: str) -> list[tuple[str, str]]:
        """As SQLite's: each distinct text without a vector of ``model``, shortest first (then by
        hash), read from its passage of least id; cut from each body sent once (``_spans``)."""
        from ctx.store.passage_reads import embed_text

        first: dict[str, tuple[int, str, str]] = {}
        for pid, _, digest, title, context, heading, text, _ in self._spans(
            "WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = %s AND v.hash = p.hash)", (model,),
        ):
            if digest not in first or pid < first[digest][0]:
                first[digest] = (pid, embed_text(title, context, heading, text), text)
        order = sorted(first, key=lambda digest: (len(first[digest][2]), digest))
        return [(digest, first[digest][1]) for digest in order]

    def candidate_passages(
        self, model: str, passage_ids: list[int]
    ) -> list[tuple[int, str, str, str, np.ndarray | None]]:
        from ctx.store.passage_reads import embed_text

        if not passage_ids:
            return []
        rows = self._spans("WHERE p.id = ANY(%s)", (list(passage_ids),), model)
        return sorted(
            ((pid, node_id, digest, embed_text(title, context, heading, text), None if vector is None else _vector(vector))
             for pid, node_id, digest, title, context, heading, text, vector in rows),
            key=lambda row: row[0],
        )

    def _spans(
        self, where: str, params: tuple[Any, ...], vectors_of: str | None = None,
    ) -> list[tuple[int, str, str, str, str, str, str, Any]]:
        """(id, node id, hash, the node's title, context, heading, text, vector of ``vectors_of``
        or None) of the passages ``where`` keeps: what ``passage_texts`` gives them, the text cut
        from the body sent once per node, with its first row only (as ``passages_of``). Through
        the view each row detoasted its whole body again and ``substr`` walked it to the span.
        The same join the view makes, as the same role: row security hides the same rows."""
        vector = ", v.vector" if vectors_of else ", NULL"
        joined = " LEFT JOIN passage_vectors v ON v.model = %s AND v.hash = p.hash" if vectors_of else ""
        out = []
        at, body = None, ""
        # A CASE that yields NULL never detoasts the body: only a node's first row carries it.
        for pid, node_id, digest, title, context, heading, own, begin, end, found, first_body in self._rows(
            'SELECT p.id, p.node_id, p.hash, n.title, p.context, p.heading, p.own_text, p.start, p."end"'
            f"{vector}, CASE WHEN p.ord = min(p.ord) OVER (PARTITION BY p.node_id) THEN n.body END"
            f" FROM passages p JOIN nodes n ON n.id = p.node_id{joined} {where} ORDER BY p.node_id, p.ord",
            ((vectors_of,) if vectors_of else ()) + params,
        ):
            if node_id != at:
                at, body = node_id, first_body or ""
            text = own if own is not None else body[begin:end].strip("\n")
            out.append((pid, node_id, digest, title, context, heading, text, found))
        return out

    # -- paragraph vectors (migration 20): a dated log's paragraphs, each its own vector ----------
    # As SQLite's (``ctx.store.vectors``): keyed by the passage's text hash and the paragraph's,
    # read joined on the passages the graph has now, so an edited passage's old ones are never
    # read. Row security hides a private log's rows from a role that may not read it.

    def nodes_with_passages(self, at_least: int) -> list[str]:
        return [r[0] for r in self._rows(
            "SELECT node_id FROM passages GROUP BY node_id HAVING count(*) >= %s ORDER BY node_id", (at_least,))]

    def paragraph_vector_keys(self, model: str) -> set[tuple[str, str]]:
        return {(r[0], r[1]) for r in self._rows(
            "SELECT passage_hash, hash FROM paragraph_vectors WHERE model = %s", (model,))}

    def paragraph_vector_hashes(self, model: str) -> set[str]:
        return {r[0] for r in self._rows("SELECT DISTINCT hash FROM paragraph_vectors WHERE model = %s", (model,))}

    def paragraph_vector_count(self, model: str | None) -> int:
        """Of the notes this reader may see: a private log's paragraph count is its shape (row
        security hides it from a role without access; a writer's reader hides it here)."""
        if model is None:
            return 0
        visible = "" if self.include_private else " AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = p.node_id AND NOT n.private)"
        row = self._one(
            "SELECT count(*) FROM paragraph_vectors v WHERE v.model = %s"
            " AND EXISTS (SELECT 1 FROM passages p WHERE p.hash = v.passage_hash" + visible + ")",
            (model,),
        )
        return int(row[0]) if row else 0

    def paragraph_vector_owners(self, model: str) -> set[tuple[str, str, str]]:
        return {(r[0], r[1], r[2]) for r in self._rows(
            "SELECT p.node_id, v.passage_hash, v.hash FROM paragraph_vectors v"
            " JOIN passages p ON p.hash = v.passage_hash WHERE v.model = %s", (model,))}

    def paragraph_vectors(self, model: str) -> tuple[list[int], list[str], list[str], np.ndarray]:
        """Kept between calls on this connection while the graph's version and the model's
        paragraph vectors (their count and keys) are unchanged, as ``passage_vector_matrix``: a
        warm MCP server reads them once, not once per build."""
        state = self._one(
            "SELECT current_database(), current_schema(), (SELECT value FROM meta WHERE key = 'graph_version'),"
            " count(*), COALESCE(sum(hashtext(passage_hash || hash)), 0) FROM paragraph_vectors WHERE model = %s",
            (model,),
        )
        key = (id(self.conn), model, self.include_private)
        cached = _PARAGRAPH_MATRICES.get(key)
        if cached is not None and cached[0] == state:
            return cached[1], cached[2], cached[3], cached[4]
        rows = self._rows(
            "SELECT p.id, p.node_id, v.hash, v.vector FROM paragraph_vectors v"
            " JOIN passages p ON p.hash = v.passage_hash WHERE v.model = %s ORDER BY p.id, v.hash",
            (model,),
        )
        if rows:
            found = ([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                     np.vstack([_vector(r[3]) for r in rows]))
        else:
            found = ([], [], [], np.zeros((0, 0), dtype=np.float32))
        _PARAGRAPH_MATRICES[key] = (state, *found)
        return found

    def remember_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> bool:
        """Best effort, as ``remember_query_vector``: never waits for a lock."""
        import psycopg

        if not rows:
            return True
        try:
            with self.conn.transaction():
                self.conn.execute("SET LOCAL lock_timeout = 1")
                with self.conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO passage_vectors (model, hash, dim, vector) VALUES (%s, %s, %s, %s)"
                        " ON CONFLICT (model, hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector",
                        [(model, h, int(v.shape[0]), vector_text(v)) for h, v in rows],
                    )
        except psycopg.Error:
            return False
        return True

    def query_vector(self, model: str, text: str) -> np.ndarray | None:
        from ctx.store.vectors import _query_key as query_key

        row = self._one(
            "SELECT vector FROM query_embeddings WHERE model = %s AND text_hash = %s", (model, query_key(text))
        )
        return _vector(row[0]) if row else None

    def remember_query_vector(self, model: str, text: str, vector: np.ndarray) -> None:
        """Best effort: never waits for a lock; a read-only role or replica caches nothing."""
        from ctx.store.vectors import _query_key as query_key

        import psycopg

        try:
            with self.conn.transaction():
                self.conn.execute("SET LOCAL lock_timeout = 1")
                self.conn.execute(
                    "INSERT INTO query_embeddings (model, text_hash, dim, vector, used_at) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (model, text_hash) DO UPDATE SET dim = excluded.dim, vector = excluded.vector,"
                    " used_at = excluded.used_at",
                    (model, query_key(text), int(vector.shape[0]), vector_text(vector), time.time()),
                )
        except psycopg.Error:
            pass

    # -- the graph as a whole --------------------------------------------------------------------

    def graph_version(self) -> int:
        value = self.setting("graph_version")
        return int(value) if value else 0

    def warm_state(self) -> None:
        """Other sessions' commits are not visible as a counter here: a warm process keeps nothing."""
        return None

    def last_sync(self) -> float | None:
        row = self._one("SELECT max(coalesce(checked_at, imported_at)) FROM sources")
        return float(row[0]) if row is not None and row[0] is not None else None

    def remember_setting(self, key: str, value: str) -> None:
        """Best effort, as ``remember_query_vector``: never waits for a lock; a read-only role or
        a replica keeps nothing."""
        import psycopg

        try:
            with self.conn.transaction():
                self.conn.execute("SET LOCAL lock_timeout = 1")
                self.conn.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
        except psycopg.Error:
            pass

    def remember_context(
        self, context_id: str, key: str, graph_version: int, manifest: str, *, keep: int, keep_total: int,
    ) -> bool:
        """Best effort, as ``remember_setting``: a reader role (SELECT only) keeps nothing."""
        import psycopg

        if keep < 1 or keep_total < 1:
            return False
        private = self.include_private
        try:
            with self.conn.transaction():
                self.conn.execute("SET LOCAL lock_timeout = 1")
                self.conn.execute("LOCK TABLE contexts IN SHARE ROW EXCLUSIVE MODE")
                self.conn.execute(
                    "INSERT INTO contexts (id, key, private, graph_version, seq, manifest)"
                    " VALUES (%s, %s, %s, %s, (SELECT coalesce(max(seq), 0) + 1 FROM contexts), %s)"
                    " ON CONFLICT (id) DO UPDATE SET key = excluded.key, private = excluded.private,"
                    " graph_version = excluded.graph_version, seq = excluded.seq, manifest = excluded.manifest",
                    (context_id, key, private, graph_version, manifest),
                )
                self.conn.execute(
                    "DELETE FROM contexts WHERE key = %s AND private = %s AND id NOT IN"
                    " (SELECT id FROM contexts WHERE key = %s AND private = %s ORDER BY seq DESC LIMIT %s)",
                    (key, private, key, private, keep),
                )
                self.conn.execute(
                    "DELETE FROM contexts WHERE id NOT IN (SELECT id FROM contexts ORDER BY seq DESC LIMIT %s)",
                    (keep_total,),
                )
        except psycopg.Error:
            return False
        return True

    def recorded_context(self, context_id: str | None, key: str) -> tuple[str, str] | None:
        import psycopg

        try:
            if context_id is None:
                row = self._one(
                    "SELECT id, manifest FROM contexts WHERE key = %s AND private = %s ORDER BY seq DESC LIMIT 1",
                    (key, self.include_private),
                )
            else:
                row = self._one(
                    "SELECT id, manifest FROM contexts WHERE id = %s AND private = %s", (context_id, self.include_private)
                )
        except psycopg.Error:  # a graph from before migration 14, read by a role that cannot migrate
            return None
        return (str(row[0]), str(row[1])) if row else None

    def setting(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return None if row is None else row[0]

    def file_path(self) -> Path | None:
        return None  # a server's graph: no file of this machine

    def stats(self) -> dict[str, Any]:
        from ctx.store.postgres import counts

        nodes_total = self.node_count()
        by_type, edges = counts.by_type(self.conn, include_private=self.include_private)
        edges_total, unresolved = self._one("SELECT count(*), count(*) FILTER (WHERE dst IS NULL) FROM edges")  # type: ignore[misc]
        private = int(self._one("SELECT count(*) FROM nodes WHERE private")[0])  # type: ignore[index]
        files = dict(self._rows("SELECT source_id, count(*) FROM files GROUP BY source_id"))
        nodes = dict(self._rows("SELECT source_id, count(*) FROM nodes GROUP BY source_id"))
        sources = [
            {"id": r[0], "root": r[1], "name": r[2], "format": r[3], "imported_at": r[4],
             "files": int(files.get(r[0], 0)), "nodes": int(nodes.get(r[0], 0))}
            for r in self._rows("SELECT id, root, name, format, imported_at FROM sources ORDER BY id")
        ]
        meta = dict(self._rows("SELECT key, value FROM meta WHERE key IN ('graph_version', 'last_import')"))
        last = meta.get("last_import")
        return {
            "nodes": nodes_total,
            "nodes_by_type": by_type,
            "edges": edges,
            "edges_total": int(edges_total),
            "private_edges": int(edges_total) - sum(edges.values()),
            "unresolved_links": int(unresolved),
            "private_nodes": private,
            "sources": sources,
            "graph_version": int(meta.get("graph_version", 0)),
            "last_import": float(last) if last else None,
        }

    def sources(self, *, counted: bool = False) -> list[Source]:
        if not counted:
            return [
                Source(r[0], r[1], r[2], r[3], r[4], r[5], None, None, None)
                for r in self._rows("SELECT id, root, name, format, imported_at, checked_at FROM sources ORDER BY id")
            ]
        model = self.active_model()
        fresh = dict(self._rows(
            "SELECT n.source_id, count(*) FROM embeddings e JOIN nodes n"
            " ON n.id = e.node_id AND n.content_hash = e.content_hash WHERE e.model = %s GROUP BY n.source_id",
            (model,),
        )) if model else {}
        nodes = dict(self._rows("SELECT source_id, count(*) FROM nodes GROUP BY source_id"))
        files = dict(self._rows("SELECT source_id, count(*) FROM files GROUP BY source_id"))
        return [
            Source(r[0], r[1], r[2], r[3], r[4], r[5], int(files.get(r[0], 0)), int(nodes.get(r[0], 0)),
                   int(fresh.get(r[0], 0)))
            for r in self._rows("SELECT id, root, name, format, imported_at, checked_at FROM sources ORDER BY id")
        ]

    def source_at(self, root: Path) -> tuple[int, str] | None:
        row = self._one("SELECT id, format FROM sources WHERE root = %s", (str(root),))
        return None if row is None else (int(row[0]), str(row[1]))

    def file_states(self, source_id: int) -> dict[str, FileState]:
        return {
            r[0]: (int(r[1]), int(r[2]), str(r[3]))
            for r in self._rows("SELECT path, mtime_ns, size, hash FROM files WHERE source_id = %s", (source_id,))
        }

    def file_states_of(self, source_id: int, paths: list[str]) -> dict[str, FileState]:
        if not paths:
            return {}
        return {
            r[0]: (int(r[1]), int(r[2]), str(r[3]))
            for r in self._rows(
                "SELECT path, mtime_ns, size, hash FROM files WHERE source_id = %s AND path = ANY(%s)", (source_id, list(paths))
            )
        }

    def privacy_changed(self, config: PrivacyConfig | PrivacyRules) -> bool:
        value = self.setting("privacy_config")
        return value is None or value != config.fingerprint()
