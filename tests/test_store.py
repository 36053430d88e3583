"""The graph file itself: migrations, WAL, where it lives, and how failures read."""

from __future__ import annotations

import sqlite3

import pytest

from ctx.errors import CtxError, NoGraphError
from ctx.config import resolve_db_path
from ctx.store import connect
from ctx.store.migrations import MIGRATIONS


def test_new_graph_is_migrated_and_in_wal_mode(db_path):
    conn = connect(db_path, create=True)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"nodes", "edges", "node_keys", "files", "sources", "meta", "nodes_fts"} <= tables


def test_new_graph_has_8k_pages_and_an_old_one_keeps_its_own(db_path, tmp_path):
    from ctx.store.db import PAGE_SIZE

    conn = connect(db_path, create=True)
    assert PAGE_SIZE == 8192
    assert conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE
    conn.close()
    # A graph made with 4 KB pages (by an older ctx) keeps them and is used as it is.
    from ctx.store.migrations import migrate

    old = tmp_path / "old.db"
    raw = sqlite3.connect(old, isolation_level=None)
    raw.execute("PRAGMA page_size = 4096")
    migrate(raw)
    raw.close()
    conn = connect(old, create=True)
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    conn.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
    assert conn.execute("SELECT value FROM meta WHERE key = 'k'").fetchone()[0] == "v"


def test_reopening_does_not_migrate_again(db_path):
    connect(db_path, create=True).close()
    conn = connect(db_path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'graph_version'").fetchone()[0] == "0"


def test_missing_graph_is_a_clear_error(tmp_path, run_cli):
    with pytest.raises(NoGraphError):
        connect(tmp_path / "nope.db")
    result = run_cli("stats", db=tmp_path / "nope.db")
    assert result.exit_code == 1
    assert result.stderr.startswith("ctx: error: no graph at")
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "nope.db").exists()


def test_graph_from_a_newer_ctx_is_refused(db_path):
    connect(db_path, create=True).close()
    raw = sqlite3.connect(db_path)
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    raw.close()
    with pytest.raises(CtxError, match="newer ctx"):
        connect(db_path)


def test_not_a_database_is_a_clear_error(tmp_path, run_cli):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    result = run_cli("stats", db=junk)
    assert result.exit_code == 1
    assert "not a usable ctx graph" in result.stderr


def test_db_location_order(tmp_path, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    project = tmp_path / "project" / "sub"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)
    assert resolve_db_path(None) == tmp_path / "home" / "graph.db"
    # A project that has its own graph wins over the user-wide one...
    (tmp_path / "project" / ".ctx").mkdir()
    (tmp_path / "project" / ".ctx" / "graph.db").touch()
    assert resolve_db_path(None) == (tmp_path / "project" / ".ctx" / "graph.db").resolve()
    # ...CTX_DB wins over both, and --db over everything.
    monkeypatch.setenv("CTX_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path(tmp_path / "flag.db") == tmp_path / "flag.db"


def test_a_graph_from_an_older_schema_is_upgraded_in_place(db_path):
    """Open a file that stopped at migration 1 (as an older ctx left it): the rest are applied."""
    from ctx.store.migrations import migrate

    raw = sqlite3.connect(db_path, isolation_level=None)
    raw.executescript(f"BEGIN; {MIGRATIONS[0]} PRAGMA user_version = 1; COMMIT;")
    raw.execute("INSERT INTO sources (root, name, format) VALUES ('/x', 'x', 'json')")
    raw.close()
    conn = connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert conn.execute("SELECT name FROM sources").fetchone()[0] == "x"
    assert migrate(conn) == len(MIGRATIONS)  # idempotent
    plan = conn.execute("EXPLAIN QUERY PLAN SELECT MAX(updated) FROM nodes").fetchall()
    assert "nodes_by_recency" in plan[0][3]
