"""Migration 8: passages stop storing their node's title and, where it is a span of the body, their
text. A graph written before it must read, search and build exactly as a graph imported after it,
and its full-text indexes must stay consistent through later deletions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ctx.assemble import BuildRequest, build_context
from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.migrations import MIGRATIONS, statements
from ctx.store.passages import passages_of, search

from conftest import FIXTURES

V6_PASSAGE_COLUMNS = 'id, node_id, ord, start, "end", title, context, heading, text, tokens, hash'
NODE_COLUMNS = (
    "rowid, id, title, body, type, tags, fields, aliases, source_id, source_path, file, parent_id,"
    " position, created, updated, content_hash, tokens, private, split"
)
# A body SQLite's substr() cannot cut (it stops at the NUL): its passage must keep its own text.
NUL_BODY = "Before the zero byte\x00and after it, zeppelin."


def postings(conn: sqlite3.Connection, index: str) -> list[tuple[object, ...]]:
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{index}_postings USING fts5vocab(main, {index}, instance)")
    return [tuple(r) for r in conn.execute(f"SELECT term, doc, col, offset FROM temp.{index}_postings ORDER BY 1, 2, 3, 4")]


def imported(path: Path) -> sqlite3.Connection:
    conn = connect(path, create=True)
    import_path(conn, FIXTURES / "demo-vault")
    import_path(conn, FIXTURES / "outline-logseq", format="logseq")
    return conn


def as_version_7(reference: sqlite3.Connection, path: Path) -> None:
    """The reference graph as ctx wrote it at schema 7: passages holding title and text."""
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("BEGIN")
    for script in MIGRATIONS[:7]:
        for statement in statements(script):
            old.execute(statement)
    old.execute("PRAGMA user_version = 7")
    old.execute("COMMIT")
    old.execute("ATTACH DATABASE ? AS ref", (reference.execute("PRAGMA database_list").fetchone()[2],))
    old.execute("BEGIN")
    for table in ("sources", "files", "edges", "node_keys"):
        old.execute(f"INSERT INTO main.{table} SELECT * FROM ref.{table}")
    old.execute("DELETE FROM main.meta")
    old.execute("INSERT INTO main.meta SELECT * FROM ref.meta")
    old.execute(f"INSERT INTO main.nodes ({NODE_COLUMNS}) SELECT {NODE_COLUMNS} FROM ref.nodes ORDER BY rowid")
    old.execute(
        f"INSERT INTO main.passages ({V6_PASSAGE_COLUMNS})"
        ' SELECT p.id, p.node_id, p.ord, p.start, p."end", t.title, t.context, t.heading, t.text, p.tokens, p.hash'
        " FROM ref.passages p JOIN ref.passage_texts t ON t.id = p.id ORDER BY p.id"
    )
    old.execute(
        "INSERT INTO main.nodes (id, title, body, source_id, file, content_hash, split)"
        " VALUES ('nul-note', 'Nul note', ?, 1, '', 'x', 1)",
        (NUL_BODY,),
    )
    old.execute(
        'INSERT INTO main.passages (node_id, ord, start, "end", title, text, tokens, hash)'
        " VALUES ('nul-note', 0, 0, ?, 'Nul note', ?, 12, 'nul-hash')",
        (len(NUL_BODY), NUL_BODY),
    )
    old.execute("COMMIT")
    old.execute("DETACH DATABASE ref")
    old.close()


def test_a_graph_from_schema_7_reads_searches_and_builds_as_a_new_one(tmp_path):
    reference = imported(tmp_path / "new.db")
    as_version_7(reference, tmp_path / "old.db")

    migrated = connect(tmp_path / "old.db")
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 8
    columns = {r[1] for r in migrated.execute("PRAGMA table_info(passages)")}
    assert "text" not in columns and "title" not in columns
    # Markdown passages are spans of their bodies; an outline page's are its blocks, kept whole.
    spans = migrated.execute("SELECT COUNT(*) FROM passages WHERE own_text IS NULL").fetchone()[0]
    kept = migrated.execute("SELECT COUNT(*) FROM passages WHERE own_text IS NOT NULL").fetchone()[0]
    assert spans > 0 and kept > 1
    assert reference.execute("SELECT COUNT(*) FROM passages WHERE own_text IS NULL").fetchone()[0] == spans
    assert migrated.execute("SELECT text FROM passage_texts WHERE node_id = 'nul-note'").fetchone()[0] == NUL_BODY
    assert search(migrated, ["zeppelin"], limit=5, include_private=True)[0].node_id == "nul-note"

    # The NUL note goes the way a re-import removes a node: its passage and its index rows too.
    with migrated:
        migrated.execute("DELETE FROM nodes WHERE id = 'nul-note'")
    ids = [r[0] for r in reference.execute("SELECT id FROM nodes ORDER BY id")]
    assert passages_of(migrated, ids) == passages_of(reference, ids)
    for index in ("passages_fts", "passages_exact"):
        assert postings(migrated, index) == postings(reference, index)
        migrated.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
    for topic in ("how does offline sync resolve conflicts?", "Project Apollo", "encrypted graphs"):
        for fmt in ("markdown", "json"):
            request = BuildRequest(topics=(topic,), max_tokens=1500, format=fmt)
            # The same text, but for the context id: it names the graph's state (its version
            # counter differs between the two files), and every id costs the same tokens.
            assert same_but_id(build_context(migrated, request).text) == same_but_id(build_context(reference, request).text)


def same_but_id(text: str) -> str:
    import re

    return re.sub(r"c-[0-9]{12}", "c-<id>", text)
