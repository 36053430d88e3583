"""`ctx watch` outlives what a batch meets (issue 24, M2, M4).

The audit's watcher exited at its first lock timeout (nothing kept the graph fresh afterwards), and
went on writing into a graph file that had been deleted and created again at its path, reporting
success. Each test runs the real watcher in a thread on real files and waits (bounded) for events.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from conftest import FIXTURES
from ctx.importers.engine import import_path
from ctx.store import connect

pytest.importorskip("watchfiles", reason="ctx watch needs the watch extra")


class Watcher:
    def __init__(self, db: Path) -> None:
        from ctx.watch import watch

        self.reports: list[object] = []
        self.problems: list[str] = []
        self.cond = threading.Condition()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=watch, args=(db,),
            kwargs={"on_sync": self._sync, "on_problem": self._problem, "stop_event": self.stop, "debounce_ms": 100},
        )

    def _sync(self, report: object) -> None:
        with self.cond:
            self.reports.append(report)
            self.cond.notify_all()

    def _problem(self, line: str) -> None:
        with self.cond:
            self.problems.append(line)
            self.cond.notify_all()

    def wait(self, predicate, timeout: float = 20) -> bool:  # type: ignore[no-untyped-def]
        with self.cond:
            return self.cond.wait_for(predicate, timeout=timeout)

    def edit_until(self, note: Path, text: str, predicate, timeout: float = 30) -> bool:  # type: ignore[no-untyped-def]
        """Write ``text`` (again, in case inotify was not ready) until ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            note.write_text(text, encoding="utf-8")
            if self.wait(predicate, timeout=3):
                return True
        return False

    def __enter__(self) -> Watcher:
        self.thread.start()
        assert self.wait(lambda: len(self.reports) >= 1), "the first sync never came"
        time.sleep(0.5)  # inotify's watches in place
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    target = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", target)
    return target


def body(db: Path, node: str) -> str:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT body FROM nodes WHERE id = ?", (node,)).fetchone()
        return row[0] if row else ""
    finally:
        conn.close()


def test_watch_survives_a_locked_graph_and_syncs_when_it_is_free(vault: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "200")
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.close()
    note = vault / "Tasks" / "Security review.md"
    with Watcher(db) as w:
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            assert w.edit_until(note, "# Security review\n\nLocked edit.\n", lambda: w.problems), "no problem reported"
            assert "not synced" in w.problems[0] and w.thread.is_alive()
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        # Retried on its own once the lock is free, without another edit.
        assert w.wait(lambda: "Locked edit." in body(db, "Tasks/Security review"), timeout=30)
        assert w.thread.is_alive()
    assert not w.thread.is_alive()


def test_watch_reopens_a_graph_replaced_at_its_path(vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.close()
    note = vault / "Tasks" / "Security review.md"
    with Watcher(db) as w:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        conn = connect(db, create=True)  # a new file at the same path (a restore, a fresh import)
        import_path(conn, vault)
        conn.close()
        assert w.edit_until(note, "# Security review\n\nAfter the replacement.\n",
                            lambda: "After the replacement." in body(db, "Tasks/Security review"))
        assert any("replaced" in p for p in w.problems)


def test_an_edit_made_during_the_first_sync_is_synced(vault: Path, tmp_path: Path) -> None:
    """At dc7f3bd the watch began only after the first sync (and the embedding after it, ~20 s of
    model loading on a graph with vectors): a note saved meanwhile stayed out of the graph until
    the next edit of its source. The edit here is made while the first sync reports, before
    anything else edits the vault."""
    from ctx.watch import watch

    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.close()
    note = vault / "Tasks" / "Security review.md"
    reports: list[object] = []
    seen = threading.Condition()
    stop = threading.Event()

    def on_sync(report: object) -> None:
        if not reports:
            note.write_text("# Security review\n\nSaved during the first sync.\n", encoding="utf-8")
        with seen:
            reports.append(report)
            seen.notify_all()

    thread = threading.Thread(target=watch, args=(db,),
                              kwargs={"on_sync": on_sync, "stop_event": stop, "debounce_ms": 100})
    thread.start()
    try:
        with seen:
            synced = seen.wait_for(lambda: "Saved during the first sync." in body(db, "Tasks/Security review"),
                                   timeout=30)
        assert synced, f"{len(reports)} sync(s), the edit never imported"
    finally:
        stop.set()
        thread.join(timeout=30)


def test_a_project_graph_whose_sources_are_all_outside_it_says_so(vault: Path, tmp_path: Path) -> None:
    """A graph moved into a project's `.ctx/` keeps sources outside the project, which sync
    refuses. At dc7f3bd `ctx watch` said "none of the registered sources exists any more" of
    folders that were all there."""
    from ctx.errors import CtxError
    from ctx.watch import watch

    made = tmp_path / "made.db"
    conn = connect(made, create=True)
    import_path(conn, vault)
    conn.close()
    project = tmp_path / "project"
    (project / ".ctx").mkdir(parents=True)
    db = made.rename(project / ".ctx" / "graph.db")  # the same file: created by ctx here, trusted
    with pytest.raises(CtxError) as raised:
        watch(db, on_sync=lambda _report: None, stop_event=threading.Event())
    message = str(raised.value)
    assert message.startswith(f"nothing to watch: {vault}: outside the project") and "exists" not in message
