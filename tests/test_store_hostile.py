"""Databases that are not ours, or not writable, and imports that race or die.

* Another application's SQLite file (or an empty file) given as --db is refused by every command,
  byte for byte untouched: no ctx tables, no switch to WAL.
* A new graph carries PRAGMA application_id; a graph from before the mark still opens.
* A graph in a read-only folder can be read; writing to it is a one-line error.
* A lock held past the busy timeout is a one-line error, not an internal error.
* Two first imports into the same new graph at the same instant both succeed.
* A killed or failed first import leaves no empty source behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import FIXTURES

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")
READ_COMMANDS = (["stats"], ["search", "apollo"], ["show", "x"], ["build", "apollo"], ["stats", "--format", "json"])


def _foreign(path: Path, journal: str = "delete") -> bytes:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {journal}")
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("marked", [False, True])
def test_another_applications_database_is_refused_and_untouched(tmp_path, run_cli, marked):
    db = tmp_path / "contacts.db"
    before = _foreign(db)
    if marked:
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA application_id = 1234")
        conn.commit()
        conn.close()
        before = db.read_bytes()
    for argv in [*READ_COMMANDS, ["import", str(FIXTURES / "demo-vault")]]:
        result = run_cli(*argv, db=db)
        assert result.exit_code == 1, (argv, result.stderr)
        assert "not a ctx graph" in result.stderr and "nothing was written" in result.stderr
        assert result.stderr.count("\n") == 1
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db"]  # no -wal, no -shm


def test_an_empty_file_is_no_graph_for_a_read_and_stays_empty(tmp_path, run_cli):
    db = tmp_path / "empty.db"
    db.touch()
    for argv in READ_COMMANDS:
        result = run_cli(*argv, db=db)
        assert result.exit_code == 1 and "no graph at" in result.stderr, (argv, result.stderr)
    assert db.stat().st_size == 0
    assert run_cli("import", str(FIXTURES / "demo-vault"), db=db).exit_code == 0  # an import may use it


def test_a_new_graph_is_marked_and_an_unmarked_old_graph_still_opens(tmp_path, run_cli):
    from ctx.store.migrations import APPLICATION_ID, MIGRATIONS, statements

    db = tmp_path / "graph.db"
    assert run_cli("import", str(FIXTURES / "demo-vault"), db=db).exit_code == 0
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
    # As a ctx from before the mark left it: no application id, schema version 3.
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    for script in MIGRATIONS[:3]:
        for statement in statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 3")
    conn.commit()
    conn.close()
    assert run_cli("stats", db=old).exit_code == 0
    conn = sqlite3.connect(old)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


@contextmanager
def _read_only(db: Path) -> Iterator[None]:
    """``db`` and its folder read-only for the block, for root too (``chattr +i``), with its
    write-ahead log folded into the file first (no -wal or -shm beside it); writable again after."""
    folder = db.parent
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for extra in (f"{db.name}-wal", f"{db.name}-shm"):
        (folder / extra).unlink(missing_ok=True)
    if os.geteuid() != 0:
        db.chmod(0o444)
        folder.chmod(0o555)
    elif not (_immutable(db) and _immutable(folder)):
        pytest.skip("cannot make a folder read-only for root here (no chattr +i)")
    try:
        yield
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder), str(db)], capture_output=True)
        else:
            folder.chmod(0o755)


def _immutable(path: Path) -> bool:
    """chattr +i: read-only even for root (tests often run as root, which chmod does not stop)."""
    return shutil.which("chattr") is not None and subprocess.run(
        ["chattr", "+i", str(path)], capture_output=True
    ).returncode == 0


def test_a_graph_in_a_read_only_folder_can_be_read(tmp_path, run_cli):
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "graph.db"
    assert run_cli("import", str(FIXTURES / "demo-vault"), db=db).exit_code == 0
    with _read_only(db):
        for argv in READ_COMMANDS:
            result = run_cli(*argv, db=db)
            assert result.exit_code in (0, 3), (argv, result.stderr)
        built = run_cli("build", "Project Apollo", db=db)
        assert built.exit_code == 0 and "Project Apollo" in built.stdout
        write = run_cli("import", str(FIXTURES / "demo-vault" / "Home.md"), "--format", "obsidian", db=db)
        assert write.exit_code == 1 and "read-only" in write.stderr and "internal error" not in write.stderr


def test_a_build_that_syncs_first_reads_a_read_only_graph_as_it_is(tmp_path, run_cli, monkeypatch):
    """With `sync: before_build: true`, a build on a graph in a read-only file or folder whose
    source had changed failed at 733ae3a ("the graph is read-only ...", exit 1), where a graph in a
    read-only folder can be read and a PostgreSQL reader role is answered from the graph as it is:
    now it answers too, saying the sync was skipped and why."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    monkeypatch.setenv("CTX_HOME", str(home))
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "graph.db"
    assert run_cli("import", str(vault), db=db).exit_code == 0
    note = vault / "Projects" / "Project Apollo.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nA zeppelin now carries the beta phones.\n", encoding="utf-8")
    with _read_only(db):
        built = run_cli("build", "Project Apollo", db=db)
        assert built.exit_code == 0, built.stderr
        assert "sync skipped, the graph is read-only here" in built.stdout
        assert "zeppelin" not in built.stdout  # the graph as it is
        assert (f"ctx: warning: {vault}: not refreshed: the graph is read-only (the file or its folder):"
                " it can be read, not changed\n") in built.stderr


def test_a_lock_held_too_long_is_one_clear_line(tmp_path, run_cli, monkeypatch):
    db = tmp_path / "graph.db"
    assert run_cli("import", str(FIXTURES / "claims.jsonl"), db=db).exit_code == 0
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "300")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = run_cli("import", str(FIXTURES / "demo-vault"), db=db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1
    assert result.stderr.startswith("ctx: error: ") and "locked by another process" in result.stderr
    assert "internal error" not in result.stderr and result.stderr.count("\n") == 1


def _spawn_import(db: Path, source: Path) -> subprocess.Popen:
    return subprocess.Popen([CTX, "import", str(source), "--db", str(db), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_two_first_imports_at_the_same_instant_both_succeed(tmp_path):
    assert CTX
    for round_ in range(2):
        db = tmp_path / f"race{round_}.db"
        first = _spawn_import(db, FIXTURES / "demo-vault")
        second = _spawn_import(db, FIXTURES / "claims.jsonl")
        for proc in (first, second):
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
        stats = json.loads(subprocess.run([CTX, "stats", "--db", str(db), "--format", "json"],
                                          capture_output=True, check=True).stdout)
        assert len(stats["sources"]) == 2 and all(s["nodes"] > 0 for s in stats["sources"])


def test_a_killed_first_import_leaves_no_empty_source(tmp_path):
    assert CTX
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(300):
        (vault / f"note {i}.md").write_text(f"# Note {i}\n\n" + "Some words about things. " * 200, encoding="utf-8")
    for delay in (0.2, 0.5, 0.9, 1.4):
        db = tmp_path / f"killed-{delay}.db"
        proc = _spawn_import(db, vault)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        if not db.exists():
            continue
        conn = sqlite3.connect(db)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "sources" not in tables:
                continue
            for (source_id,) in conn.execute("SELECT id FROM sources"):
                nodes = conn.execute("SELECT COUNT(*) FROM nodes WHERE source_id = ?", (source_id,)).fetchone()[0]
                assert nodes == 300, f"a source with {nodes} nodes after a kill at {delay}s"
        finally:
            conn.close()


def test_a_build_does_not_wait_on_a_lock_for_its_query_cache(tmp_path, run_cli):
    """The only write a build makes (a free-text topic's vector, a cache) gives up at once when
    another process holds the write lock, instead of waiting out the 30 s busy timeout."""
    import numpy as np

    from ctx.store import connect
    from ctx.store.vectors import cache_query_vector, cached_query_vector

    db = tmp_path / "graph.db"
    assert run_cli("import", str(FIXTURES / "claims.jsonl"), db=db).exit_code == 0
    conn = connect(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.perf_counter()
        cache_query_vector(conn, "fake", "a question", np.ones(4, dtype=np.float32))
        assert time.perf_counter() - started < 5
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000  # restored
    cache_query_vector(conn, "fake", "a question", np.ones(4, dtype=np.float32))
    assert cached_query_vector(conn, "fake", "a question") is not None
    conn.close()


def test_a_failed_first_import_never_removes_a_graph_another_process_is_writing(tmp_path):
    # Two first imports at one instant: the one that failed removed the new file the other was
    # writing, whose next statement then failed with "no such file" (seen once in a clean-clone CI).
    from ctx.store import connect, discarded_on_failure

    db = tmp_path / "shared.db"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from ctx.store import connect\n"
        f"conn = connect({str(db)!r}, create=True); print('open', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        with pytest.raises(RuntimeError), discarded_on_failure(db):
            assert holder.stdout is not None and holder.stdout.readline().strip() == b"open"
            raise RuntimeError("this import failed")
        assert db.exists()  # the other process's graph is left to it
    finally:
        holder.kill()
        holder.wait()
    with pytest.raises(RuntimeError), discarded_on_failure(tmp_path / "alone.db"):
        connect(tmp_path / "alone.db", create=True).close()
        raise RuntimeError("this import failed")
    assert not (tmp_path / "alone.db").exists()  # a graph no one else has open is removed, as before
