"""Private nodes' text lives in full-text indexes of its own (migration 10), so that a search without
access to it sees the BM25 statistics of the public notes alone. These tests read the indexes'
postings: each index holds exactly the rows of its side, after imports, after the private flag of
a node changes either way, and after a graph from before the split is migrated."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, migrations

PUBLIC_INDEXES = ("nodes_fts", "passages_fts", "passages_exact")


def docs(conn: sqlite3.Connection, index: str) -> set[int]:
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{index}_rows USING fts5vocab(main, {index}, instance)")
    return {r[0] for r in conn.execute(f"SELECT DISTINCT doc FROM temp.{index}_rows")}


def expected_docs(conn: sqlite3.Connection, index: str, private: bool) -> set[int]:
    flag = "!= 0" if private else "= 0"
    if index.startswith("nodes"):
        return {r[0] for r in conn.execute(
            f"SELECT rowid FROM nodes WHERE private {flag} AND (title || aliases || body) != ''")}
    return {r[0] for r in conn.execute(
        f"SELECT p.id FROM passages p JOIN nodes n ON n.id = p.node_id WHERE n.private {flag}")}


def assert_split(conn: sqlite3.Connection) -> None:
    for index in PUBLIC_INDEXES:
        for private, name in ((False, index), (True, index + "_private")):
            assert docs(conn, name) == expected_docs(conn, index, private), name


def write_vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "logseq" / "pages").mkdir(parents=True)
    (vault / "Public.md").write_text("# Public\n\nThe launch plan for apollo.\n", encoding="utf-8")
    (vault / "Secret.md").write_text("---\ntags: [private]\n---\n# Secret\n\nThe apollo zorblat.\n", encoding="utf-8")
    (vault / "Journal.md").write_text("---\ntags: [journal]\n---\n# Journal\n\nApollo diary entry.\n", encoding="utf-8")
    return vault


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(home)
    return home


def test_each_side_has_its_own_index_after_an_import(tmp_path: Path) -> None:
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path))
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] >= 1
    assert docs(conn, "nodes_fts_private") and docs(conn, "passages_fts_private")
    assert_split(conn)


def test_rows_move_when_the_private_flag_changes(tmp_path: Path, _home: Path) -> None:
    from ctx.store.reads import search

    vault = write_vault(tmp_path)
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    assert [h.id for h in search(conn, "diary")] == ["Journal"]
    # The user's own config makes #journal private: the journal leaves the public indexes.
    (_home / "config.yaml").write_text("privacy:\n  tags: [private, journal]\n", encoding="utf-8")
    import_path(conn, vault)
    assert conn.execute("SELECT private FROM nodes WHERE id = 'Journal'").fetchone()[0] == 1
    assert_split(conn)
    assert search(conn, "diary") == []
    assert [h.id for h in search(conn, "diary", include_private=True)] == ["Journal"]
    # And back.
    (_home / "config.yaml").write_text("privacy:\n  tags: [private]\n", encoding="utf-8")
    import_path(conn, vault)
    assert_split(conn)
    assert [h.id for h in search(conn, "diary")] == ["Journal"]
    # A private note edited and re-imported stays on its side.
    (vault / "Secret.md").write_text("---\ntags: [private]\n---\n# Secret\n\nNow about diary.\n", encoding="utf-8")
    import_path(conn, vault)
    assert_split(conn)
    assert [h.id for h in search(conn, "diary")] == ["Journal"]


def test_a_graph_from_before_the_split_is_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctx.store.reads import search

    vault = write_vault(tmp_path)
    old = tmp_path / "old.db"
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:9])
    monkeypatch.setattr("ctx.store.db.MIGRATIONS", migrations.MIGRATIONS[:9], raising=False)
    conn = connect(old, create=True)
    import_path(conn, vault)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 9
    conn.close()
    monkeypatch.undo()
    conn = connect(old)
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 10
    assert_split(conn)
    fresh = connect(tmp_path / "fresh.db", create=True)
    import_path(fresh, vault)
    for query in ("apollo", "zorblat", "diary entry", "launch"):
        assert [(h.id, h.score) for h in search(conn, query)] == [(h.id, h.score) for h in search(fresh, query)]


def test_migration_11_makes_tags_only_private_notes_carry_private_again(tmp_path: Path) -> None:
    """Graphs from before the derived-privacy fix kept public tag nodes that only private notes use
    (issue 24, M6): the migration recomputes them from the flags the graph holds (set by the user's
    markers), never making anything public, and leaves the full recompute to the next import."""
    from ctx.store.reads import search

    vault = write_vault(tmp_path)
    (vault / "Plans.md").write_text("---\ntags: [private, acquisitiontarget]\n---\n# Plans\n\nBuy.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    tag = "tag:acquisitiontarget"
    assert conn.execute("SELECT private FROM nodes WHERE id = ?", (tag,)).fetchone()[0] == 1
    # The graph as an older ctx left it: the tag node public, the schema before migration 11.
    conn.execute("UPDATE nodes SET private = 0 WHERE id = ?", (tag,))
    conn.execute("PRAGMA user_version = 10")
    assert [h.id for h in search(conn, "acquisitiontarget")] == [tag]
    conn.close()
    conn = connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] >= 11
    assert conn.execute("SELECT private FROM nodes WHERE id = ?", (tag,)).fetchone()[0] == 1
    assert search(conn, "acquisitiontarget") == []
    assert_split(conn)
    assert conn.execute("SELECT value FROM meta WHERE key = 'privacy_config'").fetchone() is None
    public = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 0")}
    assert {"Public", "Journal"} <= public
