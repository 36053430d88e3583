"""``GraphView.with_outline_link`` answers at once where no source is in the outline formats asked
(a graph of JSON or markdown alone), and that answer is the one the joined query gives: checked on
a real outliner graph (logseq-docs) and on a JSON graph whose nodes have parents in the same file
(as bench_scale's graphs do), every node asked, both ends of the edges."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import corpus_path, imported_graph

from ctx.lenses.model import OutputOptions
from ctx.store.view import GraphView

OUTLINE_FORMATS = OutputOptions().outline_formats


def _joined(conn: sqlite3.Connection, ids: list[str], formats: tuple[str, ...], end: str) -> set[str]:
    """The query without the shortcut: child edges of ``ids`` within one tracked file of a source
    in ``formats``."""
    marks = ",".join("?" * len(formats))
    out: set[str] = set()
    for k in range(0, len(ids), 500):
        chunk = ids[k:k + 500]
        rows = conn.execute(
            f"SELECT DISTINCT e.{end} FROM edges e JOIN nodes p ON p.id = e.src JOIN nodes n ON n.id = e.dst"
            f" WHERE e.type = 'child' AND e.{end} IN ({','.join('?' * len(chunk))})"
            " AND p.file != '' AND p.file = n.file AND p.source_id = n.source_id"
            f" AND p.source_id IN (SELECT id FROM sources WHERE format IN ({marks}))",
            [*chunk, *formats],
        ).fetchall()
        out.update(r[0] for r in rows)
    return out


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
    db = imported_graph(tmp_path_factory, source)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT format FROM sources").fetchall() == [(fmt,)]
        assert conn.execute("SELECT COUNT(*) FROM edges WHERE type = 'child'").fetchone()[0] >= 30
        ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]
        view = GraphView(conn)
        for formats in (OUTLINE_FORMATS, (*OUTLINE_FORMATS, "json"), ()):
            for end in ("src", "dst"):
                want = _joined(conn, ids, formats, end)
                assert view.with_outline_link(ids, formats, end) == want, (formats, end)
                # Each graph's own format finds its parents and children; another's none.
                assert bool(want) == (fmt in formats), (formats, end)
    finally:
        conn.close()
