"""Node facts' tags and fields: the stored JSON parsed, empty ones given without a parse, each
node its own list and dict (a build may fill a candidate's from them)."""

from __future__ import annotations

import json
import shutil
import sqlite3

from conftest import FIXTURES

from ctx import Graph


def _imported_demo(tmp_path):
    """The demo vault copied under ``tmp_path`` (so a test may edit it) and imported: (vault, db)."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    db = tmp_path / "g.db"
    with Graph.open(db, create=True) as graph:
        graph.import_path(vault)
    return vault, db


def test_node_facts_are_the_stored_json_and_empty_ones_are_each_nodes_own(tmp_path):
    _, db = _imported_demo(tmp_path)
    conn = sqlite3.connect(db)
    stored = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, tags, fields FROM nodes WHERE private = 0")}
    conn.close()
    empty = [i for i, (tags, fields) in stored.items() if tags == "[]" and fields == "{}"]
    assert len(empty) >= 2 and any(tags != "[]" for tags, _ in stored.values())
    assert any(fields != "{}" for _, fields in stored.values())
    with Graph.open(db) as graph:
        for with_fields in (True, False):
            facts = graph.reader.node_facts(sorted(stored), with_fields=with_fields)
            assert [f.id for f in facts] == sorted(stored)
            for f in facts:
                assert f.tags == json.loads(stored[f.id][0])
                assert f.fields == (json.loads(stored[f.id][1]) if with_fields else {})
        by_id = {f.id: f for f in graph.reader.node_facts(empty, with_fields=True)}
        first, second = by_id[empty[0]], by_id[empty[1]]
        first.tags.append("x")
        first.fields["k"] = ["v"]
        assert second.tags == [] and second.fields == {}


def test_a_long_lived_view_hides_a_node_made_private_by_a_later_import(tmp_path):
    """``private_among`` answers "none" at once on a graph without private nodes; it asks each
    time, so a view kept across an import (a warm server's) sees a node that became private."""
    vault, db = _imported_demo(tmp_path)
    with Graph.open(db) as graph:
        conn = sqlite3.connect(db)
        conn.execute("UPDATE nodes SET private = 0")  # whatever the fixture marks: none now
        conn.commit()
        ids = [r[0] for r in conn.execute("SELECT id FROM nodes")]
        reader = graph.store.reader()
        assert reader.hidden_among(ids) == set() and reader.private_among(ids) == set()
        note = vault / "Projects" / "Project Apollo.md"
        note.write_text("---\nprivate: true\n---\n" + note.read_text(), encoding="utf-8")
        graph.import_path(vault)
        now = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 1")}
        conn.close()
        assert now and reader.private_among(ids) == now & set(ids) and reader.hidden_among(ids) == now & set(ids)
        assert graph.store.reader(include_private=True).hidden_among(ids) == set()
