"""An import never puts older content back (issue 24, M3).

Imports parse changed files before they take the write lock. Two imports of one folder could then
commit in the wrong order: the audit saw a build read COUNTER=24 and one 1.7 s later COUNTER=16, and
under `ctx watch` the event was consumed, so the old text stayed. Here the interleaving is forced: a
second import of a newer version commits between the first one's parse and its write.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx.importers import engine
from ctx.importers.engine import import_path
from ctx.store import connect


def body(db: Path) -> str:
    conn = connect(db)
    try:
        return str(conn.execute("SELECT body FROM nodes WHERE id = 'Counter'").fetchone()[0])
    finally:
        conn.close()


def write(note: Path, counter: int, mtime_s: int) -> None:
    note.write_text(f"# Counter\n\nCOUNTER={counter}\n", encoding="utf-8")
    os.utime(note, (mtime_s, mtime_s))


@pytest.mark.parametrize("deleted", [False, True])
def test_a_slower_import_does_not_overwrite_a_newer_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        deleted: bool) -> None:
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "Counter.md"
    write(note, 1, 1_700_000_000)
    db = tmp_path / "g.db"
    first = connect(db, create=True)
    import_path(first, vault)
    write(note, 16, 1_700_000_100)  # what the slow import reads (or, deleted, finds gone)
    if deleted:
        note.unlink()
    real_apply = engine._apply
    calls: list[int] = []

    def newer_import_commits_meanwhile(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) > 1:  # the second process's own write
            return real_apply(*args, **kwargs)  # type: ignore[arg-type]
        write(note, 24, 1_700_000_200)
        other = connect(db)
        import_path(other, vault)  # a second process: parses COUNTER=24 and commits first
        other.close()
        assert "COUNTER=24" in body(db)
        return real_apply(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_apply", newer_import_commits_meanwhile)
    import_path(first, vault)
    monkeypatch.setattr(engine, "_apply", real_apply)
    assert "COUNTER=24" in body(db)
    # And the next import agrees with the file.
    import_path(first, vault)
    assert "COUNTER=24" in body(db)
    first.close()
