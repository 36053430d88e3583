"""`ctx doctor`: a damaged graph is found out, one line per problem with a repair hint; a command
that meets a damaged page says so in one line (issue 20, item 8). Each test damages a real graph
file the way it happens (bytes overwritten, an index or a count out of step) and runs the real CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES


@pytest.fixture
def graph(tmp_path, run_cli, db_path) -> Path:
    assert run_cli("import", str(FIXTURES / "demo-vault")).exit_code == 0
    return db_path


def _raw(db: Path) -> sqlite3.Connection:
    """The graph file with no ctx code in between, to damage it as a crash or a bad disk would."""
    return sqlite3.connect(db, isolation_level=None)


def _doctor(run_cli, *args: str) -> tuple[int, list[str]]:
    out = run_cli("doctor", *args)
    return out.exit_code, out.stdout.splitlines()


def test_a_healthy_graph_is_ok(graph, run_cli):
    code, lines = _doctor(run_cli)
    assert code == 0
    assert lines == [f"ok: {graph}: sqlite integrity, kept counts, passage spans, full-text indexes, vectors"]
    report = json.loads(run_cli("doctor", "--format", "json").stdout)
    assert report["ok"] is True and report["problems"] == [] and report["graph"] == str(graph)


def test_overwritten_pages_are_found_and_builds_say_damaged(graph, run_cli):
    size = graph.stat().st_size
    with open(graph, "r+b") as f:  # 20 KB of garbage a third of the way in (the repro)
        f.seek(size // 3)
        f.write(bytes(range(256)) * 80)
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines and all(line.startswith(("sqlite: ", "counts: ", "passages: ", "fts: ", "vectors: ")) for line in lines)
    assert any(line.startswith("sqlite: ") for line in lines)
    assert all("repair: " in line for line in lines)
    # Whatever a command reads of the damaged pages, it fails in one line naming the repair, or
    # succeeds on pages that are intact: never a traceback, never "internal error".
    for argv in (["stats"], ["build", "Project Apollo"], ["search", "launch"], ["build", "what blocks the launch?"]):
        out = run_cli(*argv)
        if out.exit_code != 0:
            assert out.stderr.count("\n") == 1, out.stderr
            assert "damaged" in out.stderr and "ctx doctor" in out.stderr and "internal" not in out.stderr


def test_a_passage_span_outside_its_body(graph, run_cli):
    conn = _raw(graph)
    node_id, ord_ = conn.execute("SELECT node_id, ord FROM passages WHERE own_text IS NULL ORDER BY id LIMIT 1").fetchone()
    length = conn.execute("SELECT length(body) FROM nodes WHERE id = ?", (node_id,)).fetchone()[0]
    # The span is damaged, not its words: the index is left as it was, so only the span check fires.
    conn.execute("DROP TRIGGER IF EXISTS passages_au")
    conn.execute('UPDATE passages SET "end" = ? WHERE node_id = ? AND ord = ?', (length + 50, node_id, ord_))
    code, lines = _doctor(run_cli)
    assert code == 1
    span_lines = [line for line in lines if line.startswith("passages: ")]
    assert span_lines == [
        f"passages: 1 passages whose span is outside their node's body: {node_id} #{ord_} "
        f"[{conn.execute('SELECT start FROM passages WHERE node_id = ? AND ord = ?', (node_id, ord_)).fetchone()[0]}:{length + 50}]"
        f" of {length} characters; repair: " + span_lines[0].split("; repair: ", 1)[1]
    ]


def test_a_full_text_index_out_of_step(graph, run_cli):
    conn = _raw(graph)
    # Take one passage out of the stemmed index behind the content's back (as a crash between the
    # content and index writes would, without the transaction that normally prevents it).
    pid, title, context, heading, text = conn.execute(
        "SELECT id, title, context, heading, text FROM passage_texts ORDER BY id LIMIT 1"
    ).fetchone()
    conn.execute(
        "INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text) VALUES ('delete', ?, ?, ?, ?, ?)",
        (pid, title, context, heading, text),
    )
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines[0].startswith("fts: passages_fts: 1 rows of passages not indexed, 0 indexed rows not in passages; repair: ")


def test_an_index_whose_words_are_stale(graph, run_cli):
    conn = _raw(graph)
    # The node index keeps words of a body that has changed without it (triggers bypassed).
    for trigger in ("nodes_au", "nodes_passages_bd"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute("UPDATE nodes SET body = 'words the index never saw' WHERE rowid = (SELECT MIN(rowid) FROM nodes)")
    code, lines = _doctor(run_cli)
    assert code == 1
    assert any(line.startswith("fts: nodes_fts: the index is out of step with nodes") for line in lines)


def test_kept_counts_that_disagree_with_the_rows(graph, run_cli):
    conn = _raw(graph)
    stored = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'counts'").fetchone()[0])
    kind, n = next(iter(stored["nodes"]["all"].items()))
    stored["nodes"]["all"][kind] = n + 7
    conn.execute("UPDATE meta SET value = ? WHERE key = 'counts'", (json.dumps(stored),))
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines[0].startswith(f"counts: 1 kept counts differ from the rows: nodes all {kind}: kept {n + 7}, counted {n}; repair: ")


def test_vectors(graph, run_cli):
    conn = _raw(graph)
    some_node = conn.execute("SELECT id FROM nodes ORDER BY id LIMIT 1").fetchone()[0]
    conn.execute(
        "INSERT INTO embeddings (node_id, model, content_hash, dim, vector) VALUES (?, 'm', 'h', 4, ?)",
        (some_node, b"\x00" * 12),  # 3 floats for 4 dimensions
    )
    conn.execute(
        "INSERT INTO embeddings (node_id, model, content_hash, dim, vector) VALUES ('gone', 'm', 'h', 1, ?)",
        (b"\x00" * 4,),
    )
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines[0].startswith(f"vectors: 1 vectors of the wrong size: {some_node} (m); repair: ")
    # A vector whose text is gone is what an import leaves until the next `ctx embed`: a note, not damage.
    notes = run_cli("doctor").stderr
    assert "1 node vectors, 0 passage vectors and 0 paragraph vectors for texts no longer in the graph" in notes


def test_paragraph_vectors_of_the_wrong_size_and_of_passages_gone(graph, run_cli):
    """A paragraph vector of the wrong size fails every build ranking by them (the matrix cannot
    be shaped: "internal error: ValueError: cannot reshape"), and at 037d967 doctor said the
    vectors were fine; one whose passage is gone (a deleted log, left until the next ``ctx
    embed``) is a note, as a passage vector's is."""
    conn = _raw(graph)
    passage = conn.execute("SELECT hash FROM passages ORDER BY id LIMIT 1").fetchone()[0]
    conn.execute("INSERT INTO paragraph_vectors (model, passage_hash, hash, dim, vector) VALUES ('m', ?, 'p1', 4, ?)",
                 (passage, b"\x00" * 12))  # 3 floats for 4 dimensions
    conn.execute("INSERT INTO paragraph_vectors (model, passage_hash, hash, dim, vector) VALUES ('m', 'gone', 'p2', 1, ?)",
                 (b"\x00" * 4,))
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines[0].startswith(f"vectors: 1 vectors of the wrong size: paragraph p1 of passage text {passage[:12]} (m); repair: ")
    notes = run_cli("doctor").stderr
    assert "0 node vectors, 0 passage vectors and 1 paragraph vectors for texts no longer in the graph" in notes


def test_no_graph(tmp_path, run_cli):
    out = run_cli("doctor", db=tmp_path / "missing.db")
    assert out.exit_code == 1 and "no graph at" in out.stderr


def test_a_graph_another_process_is_writing_is_not_called_damaged(graph, run_cli, monkeypatch):
    """While an import (or embed, or watch) holds the write lock, the full-text check, which FTS5
    runs as a rolled-back INSERT, cannot take it. That is a lock, not a damaged index: at 1fdd446
    doctor reported all six indexes 'out of step' (database is locked) and told the user to move
    a sound graph aside and import everything again."""
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "200")
    writer = _raw(graph)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO meta (key, value) VALUES ('probe', '1')")
    try:
        out = run_cli("doctor")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert out.exit_code == 1
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and "locked by another process" in out.stderr, out.stderr
    assert "repair" not in out.stderr and "ctx import" not in out.stderr
    # The lock gone, the same graph is sound.
    assert _doctor(run_cli) == (0, [f"ok: {graph}: sqlite integrity, kept counts, passage spans, full-text indexes, vectors"])


def test_a_graph_from_a_newer_ctx_is_not_called_sound(graph, run_cli):
    """Every other command refuses a graph whose schema is newer than this ctx knows; doctor, which
    opens the file as it is, called it 'ok' (its checks are this version's invariants, which a
    newer schema need not keep)."""
    from ctx.store.migrations import MIGRATIONS

    conn = _raw(graph)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    assert run_cli("stats").exit_code == 1
    code, lines = _doctor(run_cli)
    assert code == 1
    assert lines == [
        f"schema: written by a newer ctx (schema {len(MIGRATIONS) + 1}; this ctx knows up to {len(MIGRATIONS)});"
        " repair: upgrade ctx, then run ctx doctor again"
    ]
    report = json.loads(run_cli("doctor", "--format", "json").stdout)
    assert report["ok"] is False and [p["check"] for p in report["problems"]] == ["schema"]
    assert report["graph"] == str(graph)


def test_a_database_that_is_not_a_graph_is_not_told_to_reimport(tmp_path, run_cli):
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    code, lines = _doctor(run_cli, "--db", str(other))
    assert code == 1
    assert lines == [f"graph: {other} is a SQLite database that is not a ctx graph; repair: give --db a ctx graph"]
