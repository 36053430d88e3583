"""How many notes a name is in (``reads.count_matches``, the seeds' names a question's search is
widened by): a split graph's public index holds no private row, so it is counted without the list
of private rows; a graph whose one index still holds private rows leaves them out."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, reads


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))


def graph(tmp_path: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(5):
        (vault / f"Public {i}.md").write_text(f"# Public {i}\n\nKestrel notes, page {i}.\n", encoding="utf-8")
    for i in range(3):
        (vault / f"Secret {i}.md").write_text(
            f"---\ntags: [private]\n---\n# Secret {i}\n\nKestrel and Zorblat, page {i}.\n", encoding="utf-8")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    return conn


def counted(conn, text: str, at_most: int, include_private: bool) -> tuple[int, list[str]]:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        return reads.count_matches(conn, text, at_most=at_most, include_private=include_private), statements
    finally:
        conn.set_trace_callback(None)


def test_a_split_graph_counts_its_public_index_without_the_private_rows_list(tmp_path):
    conn = graph(tmp_path)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] >= 3
    for text, at_most, private, expected in [
        ("Kestrel", 100, False, 5), ("Kestrel", 100, True, 8), ("Zorblat", 100, False, 0),
        ("Zorblat", 100, True, 3), ("Kestrel", 4, False, 4), ("Kestrel", 6, True, 6),
    ]:
        found, statements = counted(conn, text, at_most, private)
        assert found == expected, (text, at_most, private)
        assert not any("NOT IN" in s for s in statements)


def test_an_index_holding_private_rows_still_leaves_them_out(tmp_path):
    # A graph from before the split: one index for every node, private ones too.
    conn = graph(tmp_path)
    conn.execute("DROP TABLE nodes_fts_private")
    conn.execute(
        "INSERT INTO nodes_fts (rowid, title, aliases, body) SELECT rowid, title, aliases, body FROM nodes WHERE private = 1"
    )
    found, statements = counted(conn, "Zorblat", 100, False)
    assert found == 0
    assert any("NOT IN" in s for s in statements)
    assert counted(conn, "Kestrel", 100, False)[0] == 5
    assert counted(conn, "Kestrel", 100, True)[0] == 8
