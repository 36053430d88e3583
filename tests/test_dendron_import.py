"""Dendron vaults: dot hierarchy, stubs, reversed link labels, epoch-ms dates, the real site vault."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from conftest import corpus_path
from vault_counts import count_vault, markdown_files

FILE_LINKS = "type IN ('link', 'embed') AND file != ''"


def _count(db_path: Path, sql: str) -> int:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql).fetchone()[0]


def _rows(db_path: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql, args).fetchall()


def _hierarchy(names: set[str]) -> tuple[set[str], int]:
    """(missing intermediate levels, number of parent->child pairs) of a set of dotted names."""
    stubs: set[str] = set()
    for name in names:
        parts = name.split(".")
        for end in range(1, len(parts)):
            prefix = ".".join(parts[:end])
            if prefix not in names:
                stubs.add(prefix)
    every = names | stubs
    return stubs, sum(1 for n in every if "." in n)


def test_dendron_site_counts_match_an_independent_count(run_cli, db_path):
    root = corpus_path("dendron-site")
    result = run_cli("import", str(root), "--output", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["format"] == "dendron" and report["warnings"] == []

    expected = count_vault(root, dendron=True)
    names = {Path(rel).name[:-3] for rel in markdown_files(root)}
    stubs, child_pairs = _hierarchy(names)
    assert _count(db_path, "SELECT COUNT(*) FROM nodes WHERE type NOT IN ('stub', 'tag')") == expected.notes
    assert {r[0] for r in _rows(db_path, "SELECT id FROM nodes WHERE type = 'stub'")} == stubs
    assert _count(db_path, "SELECT COUNT(*) FROM edges WHERE type = 'child'") == child_pairs
    assert _count(db_path, "SELECT COUNT(*) FROM edges WHERE type = 'child' AND dst IS NULL") == 0
    assert _count(db_path, f"SELECT COUNT(*) FROM edges WHERE {FILE_LINKS}") == len(expected.links)
    assert _count(db_path, f"SELECT COUNT(*) FROM edges WHERE {FILE_LINKS} AND dst IS NULL") == expected.unresolved
    assert expected.resolved > 1000 and stubs


def test_hierarchy_stubs_labels_dates_and_ids(tmp_path, run_cli, db_path):
    vault = tmp_path / "site"
    (vault / "notes").mkdir(parents=True)
    (vault / "dendron.yml").write_text("version: 5\n", encoding="utf-8")
    files = {
        "root.md": "---\nid: root\ntitle: root\n---\n",
        "proj.md": "---\nid: p1\ntitle: Projects\ncreated: 1646109207637\nupdated: 1646152951747\n---\nAll projects.",
        "proj.alpha.plan.md": (
            "---\nid: abc123\ntitle: Alpha plan\ndesc: ''\n---\n"
            "See [[the beta|proj.beta]], [[proj#intro]], [[Vaults|dendron://site/proj]], "
            "![[proj.beta#goals,1:#*]] and the id link [[p1]]. #role.owner\n"
        ),
        "proj.beta.md": "---\nid: b1\ntitle: Beta\n---\nbeta",
        "tags.role.owner.md": "---\nid: t1\ntitle: Owner\n---\n",
    }
    for name, text in files.items():
        (vault / "notes" / name).write_text(text, encoding="utf-8")
    result = run_cli("import", str(vault), "--output", "json")
    assert result.exit_code == 0, result.stderr

    nodes = {r[0]: r[1:] for r in _rows(db_path, "SELECT id, type, title, parent_id, created, updated FROM nodes")}
    assert nodes["proj.alpha"][:3] == ("stub", "alpha", "proj")
    assert nodes["proj.alpha.plan"][:3] == ("note", "Alpha plan", "proj.alpha")
    assert nodes["proj"][3:] == (1646109207.637, 1646152951.747)
    assert nodes["tags"][0] == "stub" and nodes["tags.role"][0] == "stub"
    children = set(_rows(db_path, "SELECT src, dst FROM edges WHERE type = 'child'"))
    assert children == {
        ("proj", "proj.alpha"), ("proj.alpha", "proj.alpha.plan"), ("proj", "proj.beta"),
        ("tags", "tags.role"), ("tags.role", "tags.role.owner"),
    }
    links = set(_rows(db_path, "SELECT type, dst, label FROM edges WHERE src = 'proj.alpha.plan' AND type != 'tag'"))
    assert links == {
        ("link", "proj.beta", "the beta"),
        ("link", "proj", "#intro"),
        ("link", "proj", "Vaults"),
        ("embed", "proj.beta", "#goals,1:#*"),
        ("link", "proj", None),  # [[p1]]: by Dendron id
        ("link", "tags.role.owner", "#role.owner"),
    }
    fields = json.loads(_rows(db_path, "SELECT fields FROM nodes WHERE id = 'proj.alpha.plan'")[0][0])
    assert fields == {}  # Dendron's random id and an empty desc are not worth tokens


def test_deleting_the_only_child_removes_its_stub(tmp_path, run_cli, db_path):
    vault = tmp_path / "site"
    vault.mkdir()
    (vault / "dendron.yml").write_text("version: 5\n", encoding="utf-8")
    (vault / "a.md").write_text("a", encoding="utf-8")
    (vault / "a.b.c.md").write_text("c", encoding="utf-8")
    run_cli("import", str(vault))
    assert _rows(db_path, "SELECT id FROM nodes WHERE type = 'stub'") == [("a.b",)]
    (vault / "a.b.c.md").unlink()
    run_cli("import", str(vault))
    assert _rows(db_path, "SELECT id FROM nodes ORDER BY id") == [("a",)]
    assert _rows(db_path, "SELECT COUNT(*) FROM edges") == [(0,)]
