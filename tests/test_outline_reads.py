"""Outline reads (page -> block tree, block -> breadcrumb) and `ctx build` on outliner pages."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctx.assemble.outline_view import render_outline
from ctx.store.outline import breadcrumb, outline_of, page_of
from ctx.tokens import count_tokens
from tests.conftest import corpus_path

PAGE = """\
status:: draft

- Goals
\t- Ship the importer
\t\t- With tests
\t- Measure it
- Risks
\t- Time
"""


@pytest.fixture
def outline_db(tmp_path: Path, run_cli, db_path: Path) -> sqlite3.Connection:
    graph = tmp_path / "graph"
    (graph / "pages").mkdir(parents=True)
    (graph / "journals").mkdir()
    (graph / "pages" / "Plan.md").write_text(PAGE, encoding="utf-8")
    assert run_cli("import", str(graph)).exit_code == 0
    conn = sqlite3.connect(db_path)
    yield conn
    conn.close()


def test_outline_is_depth_first_in_sibling_order(outline_db):
    outline = outline_of(outline_db, "Plan", max_nodes=50)
    assert [(e.title, e.depth) for e in outline.entries] == [
        ("Goals", 1), ("Ship the importer", 2), ("With tests", 3), ("Measure it", 2),
        ("Risks", 1), ("Time", 2),
    ]
    assert not outline.truncated
    assert render_outline(outline).splitlines()[:3] == ["- Goals", "  - Ship the importer", "    - With tests"]


def test_outline_is_bounded_and_says_so(outline_db):
    outline = outline_of(outline_db, "Plan", max_nodes=3)
    assert [e.title for e in outline.entries] == ["Goals", "Ship the importer", "With tests"]
    assert outline.truncated and render_outline(outline).endswith("- …")


def test_breadcrumb_runs_from_the_page_down_to_the_parent(outline_db):
    assert [c.title for c in breadcrumb(outline_db, "Plan#0.0.0")] == ["Plan", "Goals", "Ship the importer"]
    assert breadcrumb(outline_db, "Plan") == []
    assert page_of(outline_db, "Plan#1.0") == page_of(outline_db, "Plan") == "Plan"


def test_breadcrumb_in_a_real_tana_export(run_cli, db_path):
    run_cli("import", str(corpus_path("tana-books")))
    with sqlite3.connect(db_path) as conn:
        deep = conn.execute(
            "SELECT e.dst FROM edges e JOIN edges up ON up.dst = e.src"
            " WHERE e.type = 'child' AND up.type = 'child' ORDER BY e.dst LIMIT 1"
        ).fetchone()[0]
        crumbs = breadcrumb(conn, deep)
        assert len(crumbs) >= 2
        # Each crumb really is the parent of the next one.
        for parent, child in zip(crumbs, [*crumbs[1:], None]):
            target = child.id if child else deep
            assert conn.execute(
                "SELECT 1 FROM edges WHERE src = ? AND dst = ? AND type = 'child'", (parent.id, target)
            ).fetchone()


@pytest.mark.parametrize(
    ("corpus", "topic", "field"),
    [
        ("logseq-docs", "Whiteboard/Action Bar", "UI Element"),
        ("roam-fixtures", "Sapiens", "Yuval Noah Harari"),
        ("notion-export", "Home", None),
        ("tana-books", "Frankenstein; Or, The Modern Prometheus", None),
    ],
)
def test_build_on_an_outliner_page_stays_in_budget(corpus, topic, field, run_cli):
    assert run_cli("import", str(corpus_path(corpus))).exit_code == 0
    result = run_cli("build", topic, "--max-tokens", "600")
    assert result.exit_code == 0, result.stderr
    assert count_tokens(result.stdout) <= 600
    assert topic in result.stdout
    if field:
        assert field in result.stdout
    as_json = json.loads(run_cli("build", topic, "--max-tokens", "600", "--format", "json").stdout)
    assert as_json["meta"]["tokens"]["used"] <= 600
