"""``GraphView.with_outline_link`` answers at once where no source is in the outline formats asked
(a graph of JSON or markdown alone), and that answer is the one the joined query gives: checked on
a real outliner graph (logseq-docs) and on a JSON graph whose nodes have parents in the same file
(as bench_scale's graphs do), every node asked, both ends of the edges."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import corpus_path, read_only_graph

from ctx.lenses.model import OutputOptions
from ctx.store.view import GraphView

OUTLINE_FORMATS = OutputOptions().outline_formats


def _child_edges(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, str, str, str]]:
    """Every child edge with both ends' file and source and the parent's source format, read once:
    the reference below asks them in Python, apart from any plan SQLite may choose."""
    return conn.execute(
        "SELECT e.src, e.dst, p.file, n.file, p.source_id, n.source_id, s.format FROM edges e"
        " JOIN nodes p ON p.id = e.src JOIN nodes n ON n.id = e.dst JOIN sources s ON s.id = p.source_id"
        " WHERE e.type = 'child'"
    ).fetchall()


def _joined(edges: list[tuple[str, str, str, str, str, str, str]], ids: list[str], formats: tuple[str, ...],
            end: str) -> set[str]:
    """The query without the shortcut: the ``end`` (src or dst) of child edges among ``ids``
    within one tracked file of a source in ``formats``."""
    wanted = set(ids)
    at = 0 if end == "src" else 1
    return {
        edge[at] for edge in edges
        if edge[at] in wanted and edge[2] != "" and edge[2] == edge[3] and edge[4] == edge[5] and edge[6] in formats
    }


def _json_graph(folder: Path) -> Path:
    """Forty notes, each of the last thirty the child of one of the first ten, in one file."""
    nodes = [{"id": f"n{i:02d}", "title": f"Note {i}", "body": f"Text of note {i}."} for i in range(40)]
    for i in range(10, 40):
        nodes[i]["parent"] = f"n{i % 10:02d}"
    path = folder / "graph.json"
    path.write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    return path


@pytest.mark.parametrize("name, fmt", [("logseq-docs", "logseq"), ("json", "json")])
def test_outline_links_are_the_joined_querys(tmp_path_factory, name, fmt):
    source = _json_graph(tmp_path_factory.mktemp("json")) if name == "json" else corpus_path(name)
    db = read_only_graph(tmp_path_factory, source)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT format FROM sources").fetchall() == [(fmt,)]
        assert conn.execute("SELECT COUNT(*) FROM edges WHERE type = 'child'").fetchone()[0] >= 30
        ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]
        view = GraphView(conn)
        edges = _child_edges(conn)
        for formats in (OUTLINE_FORMATS, (*OUTLINE_FORMATS, "json"), ()):
            for end in ("src", "dst"):
                want = _joined(edges, ids, formats, end)
                assert view.with_outline_link(ids, formats, end) == want, (formats, end)
                # Each graph's own format finds its parents and children; another's none.
                assert bool(want) == (fmt in formats), (formats, end)
    finally:
        conn.close()


def test_outline_links_are_read_from_the_edges_first(tmp_path_factory):
    """Asked of a few hundred ids, the query starts from the edges' index, not from every node of
    the outliner's source (SQLite chose that for 500 ids of logseq-docs and took ~0.5 s a call
    where the edges' index takes ~1 ms: a depth-3 build of a Logseq page spent 0.43-0.57 s there)."""
    db = read_only_graph(tmp_path_factory, corpus_path("logseq-docs"))
    conn = sqlite3.connect(db)
    try:
        ids = [r[0] for r in conn.execute("SELECT dst FROM edges WHERE type = 'child' ORDER BY dst LIMIT 500")]
        assert len(ids) == 500
        asked: list[str] = []
        conn.set_trace_callback(asked.append)
        for end in ("src", "dst"):
            GraphView(conn).with_outline_link(ids, OUTLINE_FORMATS, end)
        conn.set_trace_callback(None)
        joins = [sql for sql in asked if "FROM edges e" in sql]
        assert len(joins) == 2
        for sql in joins:
            plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
            first = next(step for step in plan if step.startswith(("SEARCH", "SCAN")))
            assert first.startswith("SEARCH e USING"), plan
    finally:
        conn.close()
