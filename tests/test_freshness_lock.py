"""A freshness check never waits for the write lock and never fails a read (issue 24, M1).

With ``sync: before_build`` a build is a writer: while another process held the write lock it waited
the whole busy timeout (30 s) even when nothing had changed, and exited 1 when a source had changed
(9 of 31 builds failed in the audit's concurrency run). Here another connection holds the lock for
the whole test: every build must answer from the graph as it is.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import CliResult


def cli(*args: str) -> CliResult:
    from typer.testing import CliRunner

    from ctx.app import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def synced_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(home)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Plan.md").write_text("# Plan\n\nCOUNTER=1\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert cli("import", str(vault), "--db", str(db), "-q").exit_code == 0
    return vault, db


def test_a_build_answers_from_the_graph_while_another_process_writes(synced_graph: tuple[Path, Path]) -> None:
    from ctx import freshness

    vault, db = synced_graph
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # the write lock, held by "another process" throughout
    try:
        unchanged = cli("build", "Plan", "--db", str(db))
        assert unchanged.exit_code == 0 and "COUNTER=1" in unchanged.stdout
        assert unchanged.stderr == ""
        (vault / "Plan.md").write_text("# Plan\n\nCOUNTER=2\n", encoding="utf-8")
        changed = cli("build", "Plan", "--db", str(db))
        assert changed.exit_code == 0 and "COUNTER=1" in changed.stdout
        assert changed.stderr.startswith(f"ctx: warning: {freshness.BUSY_WARNING}\n")
        # ... and the context says how fresh it is: the sync skipped, the change still pending.
        assert f"; {freshness.SKIPPED_BUSY}; pending changes in " in changed.stderr
        last = freshness.last_refresh()
        assert last is not None and last.skipped == freshness.LOCK_BUSY
        from ctx.mcp_server import CtxTools

        tools = CtxTools(db)
        reply = tools.search("COUNTER")
        assert not reply.is_error and freshness.BUSY_WARNING in reply.warnings
        tools.handle.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    # Once the lock is free, the next build brings the graph up to date.
    fresh = cli("build", "Plan", "--db", str(db))
    assert fresh.exit_code == 0 and "COUNTER=2" in fresh.stdout and fresh.stderr == ""
    last = freshness.last_refresh()
    assert last is not None and last.skipped is None and last.stale
