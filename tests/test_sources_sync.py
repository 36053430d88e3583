"""Registered sources: `ctx sources`, `ctx sources remove`, `ctx sync`, `ctx watch` and the opt-in
freshness check before builds and MCP calls. Real files, real SQLite, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder

from ctx.errors import UsageError
from ctx.importers.engine import import_path
from ctx.store import vectors
from ctx.semantic.embedding import embed_graph
from ctx.store import connect

CLAIMS = FIXTURES / "claims.jsonl"
@pytest.fixture
def vault(tmp_path: Path) -> Path:
    copy = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", copy)
    return copy


def _json(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _source_counts(db: Path) -> dict[str, tuple[int, int, int]]:
    """root -> (nodes, edges, files), counted straight from the tables."""
    conn = sqlite3.connect(db)
    out = {}
    for sid, root in conn.execute("SELECT id, root FROM sources"):
        out[root] = tuple(
            conn.execute(f"SELECT COUNT(*) FROM {table} WHERE source_id = ?", (sid,)).fetchone()[0]
            for table in ("nodes", "edges", "files")
        )
    return out


# -- ctx sources ---------------------------------------------------------------------------------


def test_sources_lists_every_source_with_its_counts(vault, run_cli, db_path):
    assert run_cli("import", str(vault)).exit_code == 0
    assert run_cli("import", str(CLAIMS)).exit_code == 0
    listed = _json(run_cli("sources", "--format", "json"))
    counts = _source_counts(db_path)
    assert [s["root"] for s in listed["sources"]] == [str(vault.resolve()), str(CLAIMS.resolve())]
    for source in listed["sources"]:
        assert (source["nodes"], source["files"]) == (counts[source["root"]][0], counts[source["root"]][2])
        assert source["exists"] is True and source["embeddings"] is None
    assert [s["format"] for s in listed["sources"]] == ["obsidian", "json"]
    assert listed["sources"][1]["files"] == 1
    assert listed["sources"][0]["files"] == len(list(vault.rglob("*.md")))
    text = run_cli("sources").stdout
    assert text.splitlines()[0].split() == ["id", "format", "nodes", "files", "last", "import", "vectors", "path"]
    assert str(vault.resolve()) in text and "vectors: none" in text


def test_sources_shows_vectors_per_source_and_a_missing_folder(vault, run_cli, db_path):
    run_cli("import", str(vault))
    run_cli("import", str(CLAIMS))
    conn = connect(db_path)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    (vault / "Home.md").write_text("# Home\n\nRewritten.\n", encoding="utf-8")
    import_path(conn, vault)  # one node changed since it was embedded
    listed = _json(run_cli("sources", "--format", "json"))
    first, second = listed["sources"]
    assert listed["embedding_model"] == FAKE_MODEL.name
    assert first["embeddings"] == {"model": FAKE_MODEL.name, "fresh": first["nodes"] - 1, "stale_or_missing": 1}
    assert second["embeddings"]["stale_or_missing"] == 0
    shutil.rmtree(vault)
    assert _json(run_cli("sources", "--format", "json"))["sources"][0]["exists"] is False
    assert "(missing)" in run_cli("sources").stdout


def test_remove_takes_a_sources_nodes_edges_files_and_vectors(vault, run_cli, db_path):
    run_cli("import", str(vault))  # first: the tag nodes both use are the vault's
    run_cli("import", str(CLAIMS))
    conn = connect(db_path)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    before = _source_counts(db_path)
    vault_nodes = {r[0] for r in conn.execute("SELECT n.id FROM nodes n JOIN sources s ON s.id = n.source_id WHERE s.root = ?", (str(vault.resolve()),))}
    removed = _json(run_cli("sources", "remove", str(vault), "--output", "json"))
    # Tag nodes the vault created that claims' notes also carry stay, handed over to claims.
    kept = vault_nodes & {
        r[0]
        for r in sqlite3.connect(db_path).execute(
            "SELECT id FROM nodes WHERE type = 'tag' AND source_id = (SELECT id FROM sources WHERE root = ?)",
            (str(CLAIMS.resolve()),),
        )
    }
    assert kept, "the demo vault and the claims fixture share a tag; the hand-over is under test"
    assert removed["nodes"] == before[str(vault.resolve())][0] - len(kept)
    assert removed["edges"] == before[str(vault.resolve())][1]
    assert removed["files"] == before[str(vault.resolve())][2]
    assert removed["vectors"] == removed["nodes"]
    after = _source_counts(db_path)
    assert list(after) == [str(CLAIMS.resolve())]
    assert after[str(CLAIMS.resolve())][1:] == before[str(CLAIMS.resolve())][1:]
    conn = connect(db_path)
    assert conn.execute("SELECT COUNT(*) FROM nodes_fts WHERE nodes_fts MATCH 'Apollo'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM embeddings WHERE node_id NOT IN (SELECT id FROM nodes)").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE dst IS NOT NULL AND dst NOT IN (SELECT id FROM nodes)").fetchone()[0] == 0
    # Every claims tag edge still reaches its tag node.
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE type = 'tag' AND dst IS NULL").fetchone()[0] == 0
    assert run_cli("build", "Project Apollo").exit_code == 3


def test_remove_takes_the_sources_passages_their_index_rows_and_vectors(vault, run_cli, db_path):
    run_cli("import", str(vault))
    run_cli("import", str(CLAIMS))
    conn = connect(db_path)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    vault_id, claims_id = (r[0] for r in conn.execute("SELECT id FROM sources ORDER BY id"))
    owned = "SELECT p.{} FROM passages p JOIN nodes n ON n.id = p.node_id WHERE n.source_id = ?"
    vault_passages = {r[0] for r in conn.execute(owned.format("id"), (vault_id,))}
    claims_hashes = {r[0] for r in conn.execute(owned.format("hash"), (claims_id,))}
    vault_only_hashes = {r[0] for r in conn.execute(owned.format("hash"), (vault_id,))} - claims_hashes
    assert vault_passages and claims_hashes and vault_only_hashes
    vectored = {r[0] for r in conn.execute("SELECT hash FROM passage_vectors")}
    assert vault_only_hashes <= vectored and claims_hashes <= vectored
    conn.close()

    assert run_cli("sources", "remove", str(vault)).exit_code == 0
    conn = connect(db_path)
    remaining = {r[0] for r in conn.execute("SELECT id FROM passages")}
    assert remaining and not remaining & vault_passages
    assert {r[0] for r in conn.execute(owned.format("hash"), (claims_id,))} == claims_hashes
    for index in ("passages_fts", "passages_exact"):
        # Every row the index still has is a remaining passage's ("Apollo" is only the vault's).
        conn.execute(f"CREATE VIRTUAL TABLE temp.{index}_rows USING fts5vocab(main, {index}, instance)")
        assert {r[0] for r in conn.execute(f"SELECT DISTINCT doc FROM temp.{index}_rows")} == remaining
        assert conn.execute(f"SELECT COUNT(*) FROM {index} WHERE {index} MATCH 'Apollo'").fetchone()[0] == 0
        conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
    assert {r[0] for r in conn.execute("SELECT hash FROM passage_vectors")} == claims_hashes


def test_remove_is_one_transaction(vault, run_cli, db_path):
    run_cli("import", str(vault))
    before = _source_counts(db_path)
    conn = sqlite3.connect(db_path)
    # The last statement of the removal fails: everything before it must be undone.
    conn.execute("CREATE TRIGGER no_source_delete BEFORE DELETE ON sources BEGIN SELECT RAISE(ABORT, 'refused'); END")
    conn.commit()
    conn.close()
    result = run_cli("sources", "remove", str(vault))
    assert result.exit_code == 1 and "refused" in result.stderr
    assert _source_counts(db_path) == before


def test_remove_an_unknown_path_lists_the_registered_ones(vault, run_cli, tmp_path):
    run_cli("import", str(vault))
    result = run_cli("sources", "remove", str(tmp_path / "elsewhere"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"ctx: error: no source is registered at {tmp_path / 'elsewhere'} (registered: [1] {vault.resolve()})\n"
    )
    # By id, as `ctx sources` numbers them.
    assert run_cli("sources", "remove", "1").exit_code == 0
    assert _json(run_cli("sources", "--format", "json"))["sources"] == []


def test_remove_with_an_empty_path_removes_nothing(vault, run_cli, monkeypatch):
    """At 733ae3a `ctx sources remove ""` (a script's unset variable) was the current folder:
    run inside the vault it removed the vault's source, exit 0."""
    run_cli("import", str(vault))
    monkeypatch.chdir(vault)
    for empty in ("", "  "):
        result = run_cli("sources", "remove", empty)
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == "ctx: error: give a source's path as `ctx sources` lists it (or its id), not an empty one\n"
    assert [s["root"] for s in _json(run_cli("sources", "--format", "json"))["sources"]] == [str(vault.resolve())]
    assert run_cli("sources", "remove", ".").exit_code == 0  # the current folder, said as such


def test_import_of_an_empty_path_imports_nothing(vault, run_cli, monkeypatch, tmp_path):
    """At c3e5698 `ctx import ""` (a script's unset variable) imported the current folder, exit 0,
    as `ctx sources remove ""` removed its source (probe58)."""
    from ctx.graph import Graph

    monkeypatch.chdir(vault)
    db = tmp_path / "empty.db"
    for empty in ("", "  "):
        result = run_cli("import", empty, "--db", str(db))
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == "ctx: error: give the folder or file to import (`.` for the current one), not an empty path\n"
    assert not db.exists()
    graph = Graph.open(tmp_path / "api.db", create=True)
    try:
        with pytest.raises(UsageError, match="not an empty path"):
            graph.import_path("")
        assert graph.stats()["nodes"] == 0
    finally:
        graph.close()
    assert run_cli("import", ".", "--db", str(db)).exit_code == 0  # the current folder, said as such


# -- ctx sync ------------------------------------------------------------------------------------


def _edit_delete_add(vault: Path) -> None:
    plan = vault / "Projects" / "Project Hermes.md"
    plan.write_text(plan.read_text(encoding="utf-8") + "\nHermes now ships a zeppelin courier.\n", encoding="utf-8")
    (vault / "Writing" / "Launch Blog Post Draft.md").unlink()
    (vault / "Reference" / "Courier Zeppelins.md").write_text(
        "# Courier Zeppelins\n\nSlow, quiet and cheap. See [[Project Hermes]].\n", encoding="utf-8"
    )


def test_sync_after_an_edit_a_delete_and_a_new_file_updates_graph_and_vectors(vault, db_path):
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    import_path(conn, CLAIMS)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    hermes_before = conn.execute("SELECT content_hash FROM nodes WHERE id = 'Projects/Project Hermes'").fetchone()[0]
    _edit_delete_add(vault)
    HashEncoder.calls = []
    from ctx.sync import sync

    calls: list[tuple[str, int, int]] = []
    report = sync(conn, encoder_factory=HashEncoder, progress=lambda *call: calls.append(call))
    assert [s.status for s in report.sources] == ["changed", "unchanged"]
    # Every phase is named, the source's own ones after it.
    phases = list(dict.fromkeys(c[0] for c in calls))
    assert phases[:2] == ["vault: reading files", "vault: counting tokens"]
    # The save is shown step by step ("vault: saving: tags", ...), then the model and the vectors.
    saving = phases[2:-2]
    assert any(p.startswith("vault: saving: ") for p in saving)
    assert all(p == "vault: saving" or p.startswith("vault: saving: ") for p in saving)
    assert phases[-2:] == ["loading model", "embedding"]
    changed = report.sources[0].report
    assert (changed.files_parsed, changed.files_deleted) == (2, 1)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE id = 'Writing/Launch Blog Post Draft'").fetchone()[0] == 0
    assert conn.execute("SELECT content_hash FROM nodes WHERE id = 'Projects/Project Hermes'").fetchone()[0] != hermes_before
    link = conn.execute("SELECT dst FROM edges WHERE src = 'Reference/Courier Zeppelins' AND type = 'link'").fetchone()
    assert link[0] == "Projects/Project Hermes"
    # Exactly the edited and the new note were embedded (with their passages whose text is new);
    # every node's vector is fresh again.
    assert report.embedded == 2
    from ctx.store.passages import embed_text

    changed_passages = {
        embed_text(*row)
        for row in conn.execute(
            "SELECT title, context, heading, text FROM passage_texts"
            " WHERE node_id IN ('Projects/Project Hermes', 'Reference/Courier Zeppelins')"
        )
    }
    node_texts = [t for t in HashEncoder.calls if t not in changed_passages]
    assert len(node_texts) == 2 and set(HashEncoder.calls) - set(node_texts) <= changed_passages
    # The report counts every text embedded, as `ctx embed` does: the passages beside the nodes.
    passage_texts = set(HashEncoder.calls) - set(node_texts)
    assert passage_texts and report.passages_embedded == len(passage_texts)
    assert report.as_dict()["passages_embedded"] == report.passages_embedded
    assert report.texts_embedded == 2 + len(passage_texts) + report.paragraphs_embedded
    assert any("zeppelin courier" in text for text in node_texts)
    state = vectors.status(conn)
    assert state.fresh == state.nodes
    assert conn.execute("SELECT COUNT(*) FROM embeddings WHERE node_id NOT IN (SELECT id FROM nodes)").fetchone()[0] == 0
    # Nothing changed since: nothing is read or embedded.
    again = sync(conn, encoder_factory=HashEncoder)
    assert [s.status for s in again.sources] == ["unchanged", "unchanged"] and again.texts_embedded == 0


def test_sync_command_reports_changes_and_a_missing_source(vault, tmp_path, run_cli):
    elsewhere = tmp_path / "other"
    shutil.copytree(vault / "People", elsewhere)
    run_cli("import", str(vault))
    run_cli("import", str(elsewhere))
    _edit_delete_add(vault)
    shutil.rmtree(elsewhere)
    result = run_cli("sync", "--output", "json")
    report = _json(result)
    assert [s["status"] for s in report["sources"]] == ["changed", "missing"]
    assert report["sources"][0]["import"]["files_parsed"] == 2
    assert report["embed_model"] is None and report["embedded"] == 0
    text = run_cli("sync")
    assert text.exit_code == 0
    assert f"ctx: warning: {elsewhere}: no longer exists" in text.stderr
    assert "synced: 2 sources" in text.stderr and "1 unchanged, 1 missing" in text.stderr
    shown = _json(run_cli("show", "Courier Zeppelins", "--format", "json"))
    assert shown["edges"][0]["id"] == "Projects/Project Hermes"


def test_sync_with_no_sources_says_how_to_add_one(run_cli, db_path):
    connect(db_path, create=True).close()
    result = run_cli("sync")
    assert result.exit_code == 0 and "no sources yet" in result.stderr


# -- ctx watch -----------------------------------------------------------------------------------


def test_watch_picks_up_an_edit_within_a_bounded_wait(vault, db_path):
    pytest.importorskip("watchfiles", reason="ctx watch needs the watch extra")
    from ctx.watch import watch

    conn = connect(db_path, create=True)
    import_path(conn, vault)
    conn.close()
    reports = []
    synced = threading.Condition()
    stop = threading.Event()

    def on_sync(report):
        with synced:
            reports.append(report)
            synced.notify_all()

    thread = threading.Thread(target=watch, args=(db_path,), kwargs={"on_sync": on_sync, "stop_event": stop, "debounce_ms": 100})
    thread.start()
    try:
        with synced:
            assert synced.wait_for(lambda: len(reports) >= 1, timeout=20), "the first sync never came"
        assert not reports[0].changed
        # inotify needs its watches in place before the edit; a second edit covers a slow start.
        time.sleep(0.5)
        note = vault / "Tasks" / "Security review.md"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            note.write_text("# Security review\n\nPen test booked with Northwind.\n", encoding="utf-8")
            with synced:
                if synced.wait_for(lambda: any(r.changed for r in reports), timeout=3):
                    break
        assert any(r.changed for r in reports), "no change was synced within 20 s"
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not thread.is_alive()
    body = connect(db_path).execute("SELECT body FROM nodes WHERE id = 'Tasks/Security review'").fetchone()[0]
    assert "Pen test booked" in body


def test_watch_without_sources_is_an_error(run_cli, db_path):
    pytest.importorskip("watchfiles", reason="ctx watch needs the watch extra")
    connect(db_path, create=True).close()
    result = run_cli("watch")
    assert result.exit_code == 1 and "no sources to watch" in result.stderr


# -- freshness before builds and MCP calls -------------------------------------------------------


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "ctx-home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    return home


def test_builds_read_fresh_notes_only_when_the_setting_is_on(vault, run_cli, config_home):
    run_cli("import", str(vault))
    note = vault / "Projects" / "Project Hermes.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nHermes gained a zeppelin courier.\n", encoding="utf-8")
    stale = run_cli("build", "Project Hermes", "--depth", "0")
    assert stale.exit_code == 0 and "zeppelin" not in stale.stdout
    (config_home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    fresh = run_cli("build", "Project Hermes", "--depth", "0")
    assert fresh.exit_code == 0 and "zeppelin courier" in fresh.stdout


def test_the_check_is_rate_limited_graph_wide(vault, db_path):
    from ctx.freshness import refresh

    conn = connect(db_path, create=True)
    import_path(conn, vault)
    first = refresh(conn, interval=60, now=1000.0)
    assert first.checked and first.stale == []
    (vault / "Home.md").write_text("# Home\n\nMoved.\n", encoding="utf-8")
    assert not refresh(conn, interval=60, now=1030.0).checked  # within the interval: no stat at all
    later = refresh(conn, interval=60, now=1061.0)
    assert later.checked and later.stale == [str(vault.resolve())]
    assert "Moved." in conn.execute("SELECT body FROM nodes WHERE id = 'Home'").fetchone()[0]
    assert refresh(conn, interval=60, now=2000.0).stale == []  # imported: nothing left to do


def test_stat_only_check_sees_edits_deletions_and_new_files(vault, db_path):
    from ctx.freshness import stale_sources
    from ctx.store.sources import list_sources

    conn = connect(db_path, create=True)
    import_path(conn, vault)
    import_path(conn, CLAIMS)
    assert stale_sources(conn) == []
    for change in (
        lambda: (vault / "New.md").write_text("new\n", encoding="utf-8"),
        lambda: (vault / "New.md").unlink(),
        lambda: (vault / "Home.md").write_text("edited\n", encoding="utf-8"),
    ):
        change()
        assert [s.root for s in stale_sources(conn)] == [str(vault.resolve())]
        import_path(conn, vault)
        assert stale_sources(conn) == []
    assert [s.format for s in list_sources(conn)] == ["obsidian", "json"]


def test_mcp_tools_see_fresh_notes_with_the_setting_on(vault, db_path, config_home):
    from ctx.mcp_server import CtxTools

    conn = connect(db_path, create=True)
    import_path(conn, vault)
    conn.close()
    (config_home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    tools = CtxTools(db_path)
    assert "zeppelin" not in tools.context("Project Hermes", depth=0).text
    note = vault / "Projects" / "Project Hermes.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nHermes gained a zeppelin courier.\n", encoding="utf-8")
    assert "zeppelin courier" in tools.context("Project Hermes", depth=0).text
    assert "zeppelin" in tools.search("zeppelin").text


def test_the_check_treats_symlinks_as_the_importer_does(vault, tmp_path, db_path):
    from ctx.freshness import stale_sources

    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n", encoding="utf-8")
    (vault / "Inside link.md").symlink_to(vault / "Home.md")  # followed: inside the vault
    (vault / "Leak.md").symlink_to(outside)  # refused by the importer: never counts
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    assert conn.execute("SELECT COUNT(*) FROM files WHERE path = 'Inside link.md'").fetchone()[0] == 1
    assert stale_sources(conn) == []
    (vault / "Home.md").write_text("# Home\n\nEdited through its link too.\n", encoding="utf-8")
    assert len(stale_sources(conn)) == 1


def test_ctrl_c_stops_watch_cleanly_with_exit_0(vault, db_path):
    pytest.importorskip("watchfiles", reason="ctx watch needs the watch extra")
    import shutil as sh
    import signal
    import subprocess
    import sys

    ctx = sh.which("ctx", path=str(Path(sys.executable).parent)) or sh.which("ctx")
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    conn.close()
    # PYTHONFAULTHANDLER: should the watcher ever hang, SIGABRT makes it print every thread's stack,
    # so the failure says where (it hung once in a full CI run and never when run alone).
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
    # Ctrl-C as a terminal delivers it: the suite may itself run where SIGINT is ignored (a
    # background job of a script), and a child inherits that; ctx watch rightly keeps ignoring it.
    proc = subprocess.Popen([ctx, "watch", "--db", str(db_path)], stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stderr.readline() == f"ctx: watching the sources of {db_path} (Ctrl-C to stop)\n"
    time.sleep(1.5)  # past the first sync, into the wait for file events
    proc.send_signal(signal.SIGINT)
    try:
        _, rest = proc.communicate(timeout=60)  # never hang the suite on a watcher that ignores it
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            _, stacks = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stacks = proc.communicate()
        pytest.fail(f"ctx watch did not stop within 60 s of Ctrl-C; where it was:\n{stacks}")
    assert proc.returncode == 0
    assert rest == "ctx: stopped watching\n"


def test_sync_names_a_bad_record_and_still_syncs_the_rest(vault, tmp_path, run_cli):
    graph = tmp_path / "graph.jsonl"
    graph.write_text('{"id": "g1", "title": "Graph node"}\n', encoding="utf-8")
    run_cli("import", str(vault))
    run_cli("import", str(graph))
    graph.write_text('{"id": "g1", "title": "Graph node, edited"}\n{"id": \n', encoding="utf-8")
    (vault / "Home.md").write_text("# Home\n\nSynced anyway.\n", encoding="utf-8")
    result = run_cli("sync")
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("ctx: warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"ctx: warning: {graph}: graph.jsonl:2")
    assert "synced: 2 sources" in result.stderr and "2 changed" in result.stderr
    assert "Synced anyway." in _json(run_cli("show", "Home", "--format", "json"))["body"]
    assert _json(run_cli("show", "g1", "--format", "json"))["title"] == "Graph node, edited"
