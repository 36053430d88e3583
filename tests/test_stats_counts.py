"""`ctx stats` reads the node and edge counts the store keeps (store/counts.py): they must equal a
live count after every kind of write, and a graph changed behind the store's back is counted live."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctx.importers.engine import import_path
from ctx.store import connect, counts
from ctx.store.reads import stats
from ctx.store.sources import remove_source

from conftest import FIXTURES


def live(conn: sqlite3.Connection, *, include_private: bool) -> dict[str, object]:
    """``stats`` with the counts by type taken straight from the tables: every node, and every
    edge joined with both of its ends."""
    def visible(alias: str = "") -> str:
        return "1" if include_private else f"{alias}private = 0"

    seen = stats(conn, include_private=include_private)
    seen["nodes_by_type"] = dict(
        conn.execute(f"SELECT type, COUNT(*) FROM nodes WHERE {visible()} GROUP BY type ORDER BY type").fetchall()
    )
    seen["edges"] = dict(
        conn.execute(
            "SELECT e.type, COUNT(*) FROM edges e JOIN nodes s ON s.id = e.src LEFT JOIN nodes d ON d.id = e.dst"
            f" WHERE {visible('s.')} AND (d.id IS NULL OR {visible('d.')}) GROUP BY e.type ORDER BY e.type"
        ).fetchall()
    )
    seen["private_edges"] = seen["edges_total"] - sum(seen["edges"].values())
    return seen


def assert_stored_equal_live(conn: sqlite3.Connection) -> None:
    assert conn.execute("SELECT 1 FROM meta WHERE key = 'counts'").fetchone(), "no stored counts"
    for include_private in (False, True):
        assert stats(conn, include_private=include_private) == live(conn, include_private=include_private)


@pytest.fixture
def graph(tmp_path: Path) -> tuple[sqlite3.Connection, Path, Path]:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    claims = tmp_path / "claims.jsonl"
    records = [json.loads(line) for line in (FIXTURES / "claims.jsonl").read_text().splitlines() if line.strip()]
    # A private claim, and an edge from a node that does not exist: counted in the totals only.
    records.append({"id": "hidden-claim", "title": "Hidden", "body": "Not for readers.", "tags": ["private"]})
    records.append({"source": "no-such-node", "target": "hidden-claim", "type": "supports"})
    claims.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    conn = connect(tmp_path / "g.db", create=True)
    return conn, vault, claims


def test_stored_counts_equal_live_counts_after_every_write(graph, tmp_path, monkeypatch):
    conn, vault, claims = graph
    import_path(conn, vault)
    assert_stored_equal_live(conn)
    import_path(conn, claims)
    assert_stored_equal_live(conn)
    seen = stats(conn)
    assert seen["private_nodes"] >= 1 and seen["private_edges"] >= 1

    next(vault.rglob("*.md")).unlink()
    import_path(conn, vault)
    assert_stored_equal_live(conn)

    # New privacy settings, not a single file changed: a no-op import that still recounts.
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text("privacy:\n  tags: [planning]\n  fields: []\n")
    before = stats(conn)
    import_path(conn, vault)
    after = stats(conn)
    assert after["private_nodes"] != before["private_nodes"]
    assert after["graph_version"] == before["graph_version"] + 1
    assert_stored_equal_live(conn)

    remove_source(conn, 1)
    assert_stored_equal_live(conn)


def test_stats_reads_the_stored_counts_while_they_describe_the_graph(graph):
    conn, vault, _ = graph
    import_path(conn, vault)
    stored = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'counts'").fetchone()[0])
    stored["nodes"]["visible"] = {"planted": 1}
    conn.execute("UPDATE meta SET value = ? WHERE key = 'counts'", (json.dumps(stored),))
    assert stats(conn)["nodes_by_type"] == {"planted": 1}

    # Changed behind the store's back (no import, no version bump): the key no longer matches.
    conn.execute("UPDATE nodes SET private = 1 WHERE id = (SELECT MIN(id) FROM nodes)")
    assert stats(conn)["nodes_by_type"] == live(conn, include_private=False)["nodes_by_type"]
    assert "planted" not in stats(conn)["nodes_by_type"]


def test_a_graph_without_stored_counts_is_counted_live(graph):
    conn, vault, _ = graph
    import_path(conn, vault)
    conn.execute("DELETE FROM meta WHERE key = 'counts'")
    found = stats(conn)
    assert found == live(conn, include_private=False)
    types = dict(conn.execute("SELECT type, COUNT(*) FROM nodes GROUP BY type ORDER BY type").fetchall())
    assert found["nodes_by_type"] == types
    assert sum(found["edges"].values()) == conn.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
    assert counts.by_type(conn, include_private=True)[0] == types


def test_a_reimport_brings_the_stored_counts_up_to_date_from_what_it_wrote(tmp_path, monkeypatch):
    """A re-import of a few files does not count the whole graph again (at 100k notes that cost
    ~0.46 s for a one-note edit): the counts stored before it, plus what its rows changed, equal
    a live count after every kind of change -- a note made private (its links hidden, a tag only
    it carries made private with them), a note whose type changes, a deleted note others link
    to, a dangling link that resolves, a note renamed, and a note made public again."""
    counted: list[int] = []
    whole = counts._count
    monkeypatch.setattr(counts, "_count", lambda conn: (counted.append(1), whole(conn))[1])
    vault = tmp_path / "vault"

    def write(files: dict[str, str], gone: tuple[str, ...] = ()) -> None:
        for rel, text in files.items():
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(text, encoding="utf-8")
        for rel in gone:
            (vault / rel).unlink()

    write({
        "Hub.md": "# Hub\n\nSee [[Alpha]], [[Beta]] and [[Later]]. #shared\n",
        "Alpha.md": "---\ntags: [shared, alpha-only]\n---\nAlpha links [[Hub]] and [[Beta]].\n",
        "Beta.md": "---\ntype: person\n---\nBeta links [[Hub]]. #shared\n",
        **{f"filler/F{i}.md": f"Filler {i}: [[Hub]] [[Alpha]] #shared\n" for i in range(8)},
    })
    # Another source's edge from a note of the vault: not counted once the note is gone.
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        json.dumps({"id": "c1", "title": "A claim", "body": "Claimed."}) + "\n"
        + json.dumps({"source": "Beta", "target": "c1", "type": "supports"}) + "\n"
    )
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    import_path(conn, claims)
    assert_stored_equal_live(conn)
    counted.clear()

    steps: list[tuple[dict[str, str], tuple[str, ...]]] = [
        ({"Alpha.md": "---\ntags: [private, shared, alpha-only]\n---\nAlpha links [[Hub]] and [[Beta]].\n"}, ()),
        ({"Beta.md": "---\ntype: project\n---\nBeta links [[Hub]] and [[Alpha]]. #shared\n"}, ()),
        ({"Later.md": "Later exists now, links [[Beta]].\n"}, ()),
        ({}, ("Beta.md",)),
        ({"Beta2.md": "Beta links [[Hub]]. #shared #new-tag\n"}, ("filler/F0.md",)),
        ({"Alpha.md": "---\ntags: [shared]\n---\nAlpha is public again: [[Hub]], [[Beta2]].\n"}, ()),
    ]
    private = []
    for files, gone in steps:
        write(files, gone)
        before = stats(conn, include_private=True)
        import_path(conn, vault)
        assert_stored_equal_live(conn)
        assert stats(conn, include_private=True) != before  # each step changes some count
        private.append(stats(conn)["private_nodes"])
    assert counted == []  # every re-import brought the stored counts up to date
    assert private[0] == 3  # Alpha, and the two tags only it carries (alpha-only, private)
    assert stats(conn)["private_nodes"] == 0

    # A re-import replacing half the source or more counts the graph again, and still agrees.
    write({f"filler/F{i}.md": f"Filler {i} changed: [[Hub]]\n" for i in range(1, 8)})
    import_path(conn, vault)
    assert_stored_equal_live(conn)
    assert counted == [1]


def test_a_json_graph_read_again_whole_is_counted_again_without_noting_its_rows(tmp_path, monkeypatch):
    """A JSON graph is one file: its re-import streams every row again. Noting each would cost
    more than counting, so the noting that began with the re-import stops once the file is
    known to be replaced whole (as the noting of links that move does), and the counts are
    counted again -- still equal to a live count."""
    from ctx.store import writes

    graph_file = tmp_path / "graph.json"
    nodes = [{"id": f"n{i}", "title": f"Node {i}", "links": [f"n{(i + 1) % 6}"], "tags": ["t"]} for i in range(6)]
    graph_file.write_text(json.dumps({"nodes": nodes}))
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, graph_file, format="json")
    assert_stored_equal_live(conn)

    noting: list[bool] = []
    forget = writes.forget_files
    monkeypatch.setattr(writes, "forget_files", lambda *a: (forget(*a), noting.append(counts._tracking(a[0])))[0])
    counted: list[int] = []
    whole = counts._count
    monkeypatch.setattr(counts, "_count", lambda c: (counted.append(1), whole(c))[1])
    nodes[2]["tags"] = ["private"]
    graph_file.write_text(json.dumps({"nodes": nodes[:5]}))
    import_path(conn, graph_file, format="json")
    assert noting == [True, False]  # noted from the re-import's first step, until the file is read again whole
    assert counted == [1]
    assert_stored_equal_live(conn)
    assert stats(conn)["private_nodes"] >= 1
