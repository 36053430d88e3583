"""Every build and search states how fresh the graph is; a stale one says so in one line on stderr
and in the markdown header, within the exact budget. Real files, real SQLite, the real CLI."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder
from json_contract import assert_valid_build

from ctx.freshness import LOCK_BUSY, SKIPPED_BUSY, Refresh, graph_freshness
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.store import as_store, connect
from ctx.tokens import count_tokens


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    copy = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", copy)
    return copy


def _facts(db: Path) -> tuple[int, str]:
    """(graph version, last sync as ISO UTC), read straight from the tables."""
    conn = sqlite3.connect(db)
    version = int(conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()[0])
    last = conn.execute("SELECT MAX(checked_at) FROM sources").fetchone()[0]
    conn.close()
    return version, dt.datetime.fromtimestamp(last, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _build_json(run_cli, *args: str) -> tuple[dict, str]:
    out = run_cli("build", *args, "--format", "json")
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert_valid_build(doc)
    return doc, out.stderr


def test_a_fresh_graph_says_so_and_prints_no_line(vault, run_cli, db_path):
    assert run_cli("import", str(vault)).exit_code == 0
    version, last = _facts(db_path)
    doc, err = _build_json(run_cli, "Project Apollo")
    assert doc["meta"]["freshness"] == {"stale": False, "graph_version": version, "last_sync": last,
                                        "pending_sources": []}
    assert "stale" not in err
    text = run_cli("build", "Project Apollo", "--max-tokens", "2000")
    assert "stale:" not in text.stdout and "stale" not in text.stderr
    search = run_cli("search", "launch", "--format", "json")
    assert json.loads(search.stdout)["freshness"]["stale"] is False


def test_pending_changes_and_stale_vectors_are_stated_everywhere(vault, run_cli, db_path):
    assert run_cli("import", str(vault)).exit_code == 0
    conn = connect(db_path)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    # One note edited and one added, imported without embedding: one vector stale, one missing.
    home = vault / "Home.md"
    home.write_text(home.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    (vault / "Brand new.md").write_text("# Brand new\n\nNew words.\n", encoding="utf-8")
    import_path(conn, vault)
    conn.close()
    # And a change the graph has not seen yet.
    (vault / "Later.md").write_text("# Later\n", encoding="utf-8")
    version, last = _facts(db_path)
    root = str(vault.resolve())
    expected = {"stale": True, "graph_version": version, "last_sync": last, "pending_sources": [root],
                "vectors": {"model": FAKE_MODEL.name, "stale": 1, "missing": 1}}
    line = (f"stale: graph v{version}, last sync {last}; pending changes in {root} (ctx sync);"
            " vectors: 1 stale, 1 missing (ctx sync or ctx embed)")
    doc, err = _build_json(run_cli, "Project Apollo", "--lens", "general")
    assert doc["meta"]["freshness"] == expected
    assert f"ctx: warning: {line}\n" in err
    text = run_cli("build", "Project Apollo", "--lens", "general", "--max-tokens", "3000")
    assert text.stdout.splitlines()[2] == line  # under the title and the lens line
    assert text.stderr.count(line) == 1
    search = run_cli("search", "launch", "--format", "json")
    assert json.loads(search.stdout)["freshness"] == expected and line in search.stderr


def test_the_header_line_counts_toward_the_exact_budget(vault, run_cli, db_path):
    assert run_cli("import", str(vault)).exit_code == 0
    (vault / "Later.md").write_text("# Later\n", encoding="utf-8")
    for budget in (60, 90, 150, 300, 700, 2000):
        for fmt in ("markdown", "json"):
            for topic, lens in (("Project Apollo", "general"), ("what is blocking the launch", "answer")):
                out = run_cli("build", topic, "--lens", lens, "--max-tokens", str(budget), "--format", fmt)
                used = count_tokens(out.stdout)
                assert used <= budget, (budget, fmt, lens)
                if fmt == "json":
                    doc = json.loads(out.stdout)
                    assert doc["meta"]["tokens"]["used"] == used
                    assert doc["meta"].get("freshness", {"stale": True})["stale"] is True
                    assert_valid_build(doc)
                elif budget >= 300:
                    assert "stale:" in out.stdout


def test_the_stat_check_runs_once_per_interval(vault, db_path):
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    store = as_store(conn)
    assert graph_freshness(store, interval=60, now=1000.0).pending == ()
    (vault / "Later.md").write_text("# Later\n", encoding="utf-8")
    # Within the interval the last check's answer stands; after it the files are looked at again.
    assert graph_freshness(store, interval=60, now=1030.0).pending == ()
    assert graph_freshness(store, interval=60, now=1061.0).pending == (str(vault.resolve()),)
    # An import changes the graph version: the remembered answer no longer applies.
    import_path(conn, vault)
    assert graph_freshness(store, interval=60, now=1062.0).pending == ()


def test_a_skipped_sync_is_said(vault, db_path):
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    freshness = graph_freshness(as_store(conn), Refresh(checked=False, skipped=LOCK_BUSY))
    assert freshness.stale and freshness.as_meta()["sync"] == SKIPPED_BUSY
    assert f"; {SKIPPED_BUSY}" in freshness.line()
