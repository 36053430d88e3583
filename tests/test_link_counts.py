"""The kept counts of a node's links by type (``ctx.store.link_counts``) stay what counting the
edges gives, through a first import, edits re-imported, links repeated and removed, a note
renamed, a source removed, and the migration of a graph written before them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, link_counts
from ctx.store.migrations import MIGRATIONS
from ctx.store.sources import remove_source


def counted(conn: sqlite3.Connection) -> dict[tuple[str, str, str], int]:
    """Every class's distinct links, counted from the edges."""
    out: dict[tuple[str, str, str], int] = {}
    for direction, near, far in (("in", "dst", "src"), ("out", "src", "dst")):
        for node, etype, n in conn.execute(
            f"SELECT {near}, type, COUNT(DISTINCT {far}) FROM edges"
            f" WHERE dst IS NOT NULL AND dst != src GROUP BY {near}, type"
        ):
            out[(node, direction, etype)] = n
    return out


def kept(conn: sqlite3.Connection) -> dict[tuple[str, str, str], int]:
    return {(node, d, t): n for node, d, t, n in conn.execute("SELECT node, dir, type, n FROM link_counts")}


def assert_exact(conn: sqlite3.Connection) -> int:
    """Each kept row is the class's count now (0 for a class that lost every link); how many."""
    now = counted(conn)
    rows = kept(conn)
    assert rows, "nothing kept: the test would prove nothing"
    assert {key: now.get(key, 0) for key in rows} == rows
    return len(rows)


def write_vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir(exist_ok=True)
    for name, text in notes.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def keep_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_counts, "KEPT_AT_LEAST", 1)


def test_counts_stay_exact_through_imports_edits_and_removal(tmp_path: Path, keep_every_class) -> None:
    notes = {f"Note {i}": f"Links [[Hub]] and [[Note {(i + 1) % 12}]]. #topic\n" for i in range(12)}
    notes["Hub"] = "The hub links [[Note 1]] and [[Note 2]] and itself: [[Hub]].\n"
    notes["Note 3"] = "Twice to the hub: [[Hub]] [[Hub]], and [[Missing]]. #topic #other\n"
    vault = write_vault(tmp_path / "vault", notes)
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    # The triggers set aside for the first import are back, and the table was filled after it.
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert set(link_counts.TRIGGERS) <= triggers
    assert assert_exact(conn) == len(counted(conn))
    hub = conn.execute("SELECT id FROM nodes WHERE title = 'Hub'").fetchone()[0]
    assert kept(conn)[(hub, "in", "link")] == 12  # Note 3's two links count once; the hub's own not

    # Edits: a repeated link dropped (still linked once), links removed, added, a new note, a
    # deleted one, a link that now resolves.
    (vault / "Note 3.md").write_text("Once now: [[Hub]]. [[Missing]] #topic\n", encoding="utf-8")
    (vault / "Note 4.md").write_text("No links any more.\n", encoding="utf-8")
    (vault / "Note 5.md").write_text("[[Hub]] [[Note 3]] [[Note 3]] #other\n", encoding="utf-8")
    (vault / "Missing.md").write_text("Now it exists: [[Hub]]\n", encoding="utf-8")
    (vault / "Note 7.md").unlink()
    import_path(conn, vault)
    assert_exact(conn)
    assert kept(conn)[(hub, "in", "link")] == 11  # -4 (no links), -7 (gone), +Missing

    # A renamed note: its old links go, its new file's come.
    (vault / "Note 8.md").rename(vault / "Note eight.md")
    import_path(conn, vault)
    assert_exact(conn)

    # The whole source removed: every link gone, every kept count 0.
    remove_source(conn, conn.execute("SELECT id FROM sources").fetchone()[0])
    assert set(kept(conn).values()) == {0}


def test_only_big_classes_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_counts, "KEPT_AT_LEAST", 5)
    notes = {f"N{i}": "[[Hub]] [[Hub]] #tag\n" if i < 6 else "[[Small]]\n" for i in range(9)}
    notes["Hub"] = "hub"
    notes["Small"] = "small"
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path / "v", notes))
    rows = kept(conn)
    hub = conn.execute("SELECT id FROM nodes WHERE title = 'Hub'").fetchone()[0]
    # Six notes link the hub (twice each: twelve edge rows, six links); three link Small.
    assert rows[(hub, "in", "link")] == 6
    assert all(n >= 5 for n in rows.values()) and not any(key[0].lower().endswith("small") for key in rows)
    assert link_counts.kept(conn, hub, "in", "link") == 6
    assert link_counts.kept(conn, hub, "out", "link") is None


def test_the_migration_counts_a_graph_written_before_it(tmp_path: Path, keep_every_class) -> None:
    notes = {f"N{i}": f"[[Hub]] [[N{(i + 3) % 7}]]\n" for i in range(7)}
    notes["Hub"] = "hub"
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, write_vault(tmp_path / "v", notes))
    # As a graph of the schema before link counts: no table, no triggers, an older version.
    for name in link_counts.TRIGGERS:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE link_counts")
    number = MIGRATIONS.index(next(m for m in MIGRATIONS if getattr(m, "__name__", "") == "_m017_link_counts")) + 1
    conn.execute(f"PRAGMA user_version = {number - 1}")
    conn.close()
    conn = connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert assert_exact(conn) == len(counted(conn))


def test_a_graph_without_the_table_reads_counts_from_the_index(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "bare.db")
    conn.execute("CREATE TABLE edges (id INTEGER PRIMARY KEY, src TEXT, dst TEXT, type TEXT)")
    assert link_counts.kept(conn, "x", "in", "link") is None
