"""Incremental imports on a real vault: no-op re-import, changes, deletions, interruptions."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import corpus_path

from ctx.importers import REGISTRY
from ctx.importers.markdown import ObsidianImporter
from ctx.store import connect
from ctx.store.db import graph_version
from ctx.importers.engine import import_path


class InterruptedImporter(ObsidianImporter):
    """A real importer whose derived-records step is hit by Ctrl-C, i.e. inside the transaction
    after the changed files' old records were already deleted and new ones inserted."""

    format = "interrupted"

    def finalize(self, source):
        raise KeyboardInterrupt


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A writable copy of the dwarves-brain vault (../shared is read-only)."""
    copy = tmp_path / "vault"
    shutil.copytree(corpus_path("obsidian-dwarves-brain"), copy)
    return copy


def _snapshot(conn: sqlite3.Connection) -> tuple:
    nodes = conn.execute("SELECT id, content_hash FROM nodes ORDER BY id").fetchall()
    edges = conn.execute("SELECT src, type, target, dst FROM edges ORDER BY src, type, target, dst").fetchall()
    return [tuple(r) for r in nodes], [tuple(r) for r in edges], graph_version(conn)


def test_reimport_unchanged_is_a_noop(vault, tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    first = import_path(conn, vault)
    assert first.changed and first.files_parsed == first.files_seen > 800
    before = _snapshot(conn)
    second = import_path(conn, vault)
    assert (second.changed, second.files_parsed, second.files_unchanged) == (False, 0, first.files_seen)
    assert _snapshot(conn) == before


def test_touched_but_identical_file_is_not_reparsed(vault, tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    version = graph_version(conn)
    note = vault / "README.md"
    note.write_text(note.read_text(encoding="utf-8"), encoding="utf-8")  # new mtime, same bytes
    report = import_path(conn, vault)
    assert report.files_parsed == 0 and graph_version(conn) == version + 1
    # The refreshed stat is remembered, so the next run does not even read the file.
    assert import_path(conn, vault).changed is False


def test_modified_and_deleted_files_are_picked_up(vault, tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    version = graph_version(conn)
    # The most linked-to note: deleting it must leave its backlinks as unresolved references.
    target_id, backlinks = conn.execute(
        "SELECT dst, COUNT(*) FROM edges WHERE type = 'link' AND dst IS NOT NULL"
        " AND dst NOT LIKE 'tag:%' GROUP BY dst ORDER BY COUNT(*) DESC, dst LIMIT 1"
    ).fetchone()
    assert backlinks >= 3
    pointing = [r[0] for r in conn.execute("SELECT id FROM edges WHERE dst = ? AND file != 'README.md'", (target_id,))]
    (vault / f"{target_id}.md").unlink()
    (vault / "README.md").write_text("---\ntitle: Changed readme\n---\nNow links [[Brand New Note]].\n", encoding="utf-8")

    report = import_path(conn, vault)
    assert (report.files_parsed, report.files_deleted) == (1, 1)
    assert graph_version(conn) == version + 1
    assert conn.execute("SELECT 1 FROM nodes WHERE id = ?", (target_id,)).fetchone() is None
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE src = ?", (target_id,)).fetchone()[0] == 0
    marks = ",".join("?" * len(pointing))
    still = conn.execute(f"SELECT dst FROM edges WHERE id IN ({marks})", pointing).fetchall()
    assert len(still) == len(pointing) and all(r[0] is None for r in still)  # kept, now unresolved
    readme = conn.execute("SELECT title, body FROM nodes WHERE id = 'README'").fetchone()
    assert readme[0] == "Changed readme" and "Brand New Note" in readme[1]
    assert [tuple(r) for r in conn.execute("SELECT target, dst FROM edges WHERE src = 'README'")] == [("brand new note", None)]

    # Creating the missing note resolves the dangling link without touching README again.
    (vault / "Brand New Note.md").write_text("hello", encoding="utf-8")
    report = import_path(conn, vault)
    assert report.files_parsed == 1
    assert [tuple(r) for r in conn.execute("SELECT dst FROM edges WHERE src = 'README'")] == [("Brand New Note",)]


def test_interrupted_import_leaves_previous_state(vault, tmp_path, monkeypatch):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    before = _snapshot(conn)
    (vault / "README.md").write_text("rewritten [[Somewhere]]", encoding="utf-8")
    (vault / "Latest Notes.md").unlink()

    monkeypatch.setitem(REGISTRY, "interrupted", f"{__name__}:InterruptedImporter")
    with pytest.raises(KeyboardInterrupt):
        import_path(conn, vault, format="interrupted")
    assert not conn.in_transaction
    assert _snapshot(conn) == before

    # A fresh connection (a new process after Ctrl-C) sees the old state, and the next import
    # still knows the two files have to be redone.
    fresh = connect(tmp_path / "g.db")
    assert _snapshot(fresh) == before
    report = import_path(fresh, vault)
    assert (report.files_parsed, report.files_deleted) == (1, 1)
    assert fresh.execute("SELECT body FROM nodes WHERE id = 'README'").fetchone()[0] == "rewritten [[Somewhere]]"


def test_cli_reimport_reports_unchanged(vault, run_cli):
    assert run_cli("import", str(vault)).exit_code == 0
    version = json.loads(run_cli("stats", "--format", "json").stdout)["graph_version"]
    result = run_cli("import", str(vault), "--output", "json")
    assert json.loads(result.stdout)["files_parsed"] == 0
    assert json.loads(run_cli("stats", "--format", "json").stdout)["graph_version"] == version


@pytest.mark.parametrize(
    ("name", "content", "fmt"),
    [
        ("note.md", "# Note\n\nText.\n", "notion"),  # Notion reads an export folder, not a file
        ("note.md", "# Note\n\nText.\n", "logseq"),  # Logseq reads pages/ and journals/
        ("graph.json", '[{"title": "Page"}]', "obsidian"),
        ("folder", None, "json"),  # a JSON graph is one file; its folder's name was read as one
        ("folder", None, "obsidian"),  # an empty vault
    ],
)
def test_importing_nothing_the_format_reads_is_a_usage_error(tmp_path, run_cli, db_path, name, content, fmt):
    # These used to print "unchanged ... 0 seen", exit 0 and leave an empty source behind.
    target = tmp_path / name
    if content is None:
        target.mkdir()
    else:
        target.write_text(content, encoding="utf-8")
    result = run_cli("import", str(target), "--format", fmt)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"ctx: error: nothing to import: the {fmt} importer reads no files in "
        f"{'folder' if content is None else 'file'} {target}"
    )
    assert not db_path.exists()  # a failed first import leaves no graph behind (issue 20)


def test_a_vault_emptied_since_its_last_import_drops_its_nodes(tmp_path, run_cli):
    # With every note deleted the folder no longer looks like any format, so auto-detection
    # refused it (exit 2) and the deleted notes stayed in the graph; the recorded format is used.
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Only.md").write_text("# Only\n\nSoon gone.\n", encoding="utf-8")
    assert run_cli("import", str(vault)).exit_code == 0
    (vault / "Only.md").unlink()
    result = run_cli("import", str(vault))
    assert result.exit_code == 0, result.stderr
    assert "1 deleted" in result.stderr
    assert json.loads(run_cli("stats", "--format", "json").stdout)["nodes"] == 0
    # A folder never imported still gets the detection error.
    (tmp_path / "other").mkdir()
    assert run_cli("import", str(tmp_path / "other")).exit_code == 2


def _write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _edges(conn: sqlite3.Connection) -> list[tuple]:
    rows = conn.execute("SELECT file, src, type, target, by_id, label, position, dst FROM edges ORDER BY 1, 2, 3, 4, 5, 6, 7")
    return [tuple(r) for r in rows]


def test_a_reimport_resolves_links_as_a_fresh_import_writing_only_those_that_moved(tmp_path, monkeypatch):
    """After a re-import, every edge points where a first import of the same files points it: a
    dangling link whose note now exists, a name two notes share won by a new note nearer the root,
    a deleted note's backlinks, a tag no note carries any more. Only edges whose target changed are
    written (a one-note edit at 10k notes had rewritten all 73k edges)."""
    from ctx.store import writes

    vault = tmp_path / "vault"
    _write(vault, {
        "Alpha.md": "---\ntags: [shared]\nproject: \"[[Beta]]\"\n---\nSee [[Beta]], [[Gamma]] and [[Dup]].\n",
        "Beta.md": "# Beta\n\nBack to [[Alpha]]. #gone\n",
        "deep/down/Dup.md": "The only Dup so far. [[Alpha]]\n",
        "Other.md": "Links [[Dup]] and [[Beta]] and [[Alpha]].\n",
    })
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    assert ("Alpha.md", "Alpha", "link", "gamma", 0, None, 1, None) in _edges(conn)

    _write(vault, {"Gamma.md": "Now Gamma exists.\n", "Dup.md": "A Dup nearer the root.\n"})
    (vault / "Beta.md").unlink()
    written: list[tuple[int, int, int]] = []  # (rows written, rows whose dst moved, edges)
    resolve = writes.resolve_edges
    counter = "SELECT n FROM content_version"  # moved by a trigger once per edge row written

    def counting(conn: sqlite3.Connection, source_id: int, **kwargs: bool) -> None:
        before, count = dict(conn.execute("SELECT id, dst FROM edges").fetchall()), conn.execute(counter).fetchone()[0]
        resolve(conn, source_id, **kwargs)
        after = dict(conn.execute("SELECT id, dst FROM edges").fetchall())
        moved = sum(before[k] != v for k, v in after.items())
        written.append((conn.execute(counter).fetchone()[0] - count, moved, len(after)))

    monkeypatch.setattr(writes, "resolve_edges", counting)
    report = import_path(conn, vault)
    assert (report.files_parsed, report.files_deleted) == (2, 1)
    monkeypatch.undo()

    fresh = connect(tmp_path / "fresh.db", create=True)
    import_path(fresh, vault)
    assert _edges(conn) == _edges(fresh)
    moved = dict(((src, target), dst) for _, src, kind, target, _, _, _, dst in _edges(conn) if kind == "link")
    assert moved[("Alpha", "gamma")] == "Gamma"
    assert moved[("Alpha", "dup")] == moved[("Other", "dup")] == "Dup"
    assert moved[("Alpha", "beta")] is None and moved[("Other", "beta")] is None
    [(rows_written, moved_rows, edges)] = written
    assert rows_written == moved_rows and 6 <= moved_rows < edges


def _stale(conn: sqlite3.Connection) -> list[tuple]:
    """Edges whose dst is not where their target points now (a full resolve would move them)."""
    from ctx.store.writes import _RESOLVED

    return [tuple(r) for r in conn.execute(f"SELECT source_id, src, target, dst FROM edges WHERE dst IS NOT {_RESOLVED}")]


def test_a_reimport_looks_only_at_the_links_that_can_move_and_moves_all_of_them(tmp_path, monkeypatch):
    """A re-import resolves only the edges its own changes can move (new edges, unresolved ones,
    and those pointing by a name or at a node that came or went): after each step below every
    edge points where a full resolve points it, and the graph equals a first import of the same
    files. Tag nodes, removed and made again by every re-import, move nothing. Another source's
    links by id follow a note that goes, and find it again at that source's next import. An
    edge no change can reach is not looked at: one set wrong on purpose stays wrong (a full
    resolve of every edge, as before, would have put it back; at 100k notes it cost 2.4 s)."""
    from ctx.store import writes
    from ctx.store.sources import remove_source

    # Which imports looked only at what they changed: a JSON graph is one file, read again whole,
    # so noting its every row would cost more than resolving every edge.
    narrowed: list[int] = []
    resolve_moved = writes._resolve_moved
    monkeypatch.setattr(writes, "_resolve_moved", lambda conn, source_id: (narrowed.append(source_id), resolve_moved(conn, source_id)))
    vault, other = tmp_path / "vault", tmp_path / "other"
    _write(vault, {
        "Alpha.md": "---\ntags: [shared]\n---\nSee [[Beta]] and [[Dup]]. #shared\n",
        "Beta.md": "# Beta\n\nBack to [[Alpha]] and [[Later]]. #shared #beta\n",
        "deep/Dup.md": "A Dup. [[Alpha]]\n",
        "Quiet.md": "Links [[Alpha]] and [[Beta]].\n",
        # (a re-import replacing half the files or more resolves every edge)
        **{f"filler/F{i}.md": f"Filler {i}, see [[Alpha]]. #shared\n" for i in range(8)},
    })
    _write(other, {"graph.json": json.dumps({"nodes": [
        {"id": "x1", "title": "X one", "links": ["Alpha", "Beta"], "tags": ["shared"]},
        {"id": "x2", "title": "X two", "links": ["x1", "Later"]},
    ]})})
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    import_path(conn, other / "graph.json", format="json")
    assert _stale(conn) == []

    # An edge of an unchanged note, set wrong on purpose: no change below can reach it.
    conn.execute("UPDATE edges SET dst = 'x2' WHERE src = 'Quiet' AND target = 'beta'")
    conn.commit()

    def step(files: dict[str, str], gone: tuple[str, ...] = ()) -> None:
        _write(vault, files)
        for rel in gone:
            (vault / rel).unlink()
        import_path(conn, vault)
        # (the other source's links by id are resolved by its own imports, as before)
        assert [s for s in _stale(conn) if s[0] == 1] == [(1, "Quiet", "beta", "x2")]

    step({"Later.md": "Later exists now.\n", "Dup.md": "A Dup nearer the root.\n"})  # a dangling link resolves; a name is won
    step({}, gone=("Alpha.md",))  # backlinks of a deleted note, and another source's link by id, point nowhere
    assert conn.execute("SELECT dst FROM edges WHERE src = 'x1' AND target = 'Alpha'").fetchone()[0] is None
    step({"Alpha.md": "Back again. #shared\n"})
    # The other source's link by id finds the note again at that source's next import.
    _write(other, {"graph.json": (other / "graph.json").read_text().replace("X two", "X 2")})
    import_path(conn, other / "graph.json", format="json")
    assert conn.execute("SELECT dst FROM edges WHERE src = 'x1' AND target = 'Alpha'").fetchone()[0] == "Alpha"
    step({"Beta.md": "# Beta\n\nNo tags now. [[Dup]]\n"}, gone=("Dup.md",))  # a tag no note of this source carries

    conn.execute("UPDATE edges SET dst = 'Beta' WHERE src = 'Quiet' AND target = 'beta'")
    conn.commit()
    assert _stale(conn) == []
    fresh = connect(tmp_path / "fresh.db", create=True)
    import_path(fresh, vault)
    import_path(fresh, other / "graph.json", format="json")
    assert [e for e in _edges(conn)] == [e for e in _edges(fresh)]

    # A source that takes over another's tag nodes when that one is removed resolves every
    # link at its next import (the tag node's names are now its own).
    remove_source(conn, 1)
    assert conn.execute("SELECT 1 FROM meta WHERE key = 'resolve_all:2'").fetchone() is not None
    _write(other, {"graph.json": (other / "graph.json").read_text().replace("X 2", "X two")})
    import_path(conn, other / "graph.json", format="json")
    assert _stale(conn) == []
    assert conn.execute("SELECT 1 FROM meta WHERE key LIKE 'resolve_all:%'").fetchone() is None
    assert narrowed == [1, 1, 1, 1]  # the vault's four re-imports; never the JSON file's


def test_noting_what_moves_stops_for_the_transaction_once_half_the_source_is_replaced(tmp_path):
    """What was written while nothing was noted cannot be resolved from the notes: once a
    transaction replaces half a source's files or more, it resolves every edge, even if a later
    step replaces only a few."""
    from ctx.store import writes

    vault = tmp_path / "vault"
    _write(vault, {f"N{i}.md": f"Note {i} links [[N{(i + 1) % 4}]].\n" for i in range(4)})
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    conn.execute("BEGIN IMMEDIATE")
    writes.forget_files(conn, 1, ["N0.md"], [])
    assert writes._tracking(conn) and not writes._everything(conn)
    writes.forget_files(conn, 1, ["N1.md"], ["N2.md"])
    assert not writes._tracking(conn) and writes._everything(conn)
    writes.forget_files(conn, 1, ["N3.md"], [])
    assert not writes._tracking(conn)
    conn.rollback()
    assert not writes._tracking(conn) and not writes._everything(conn)
