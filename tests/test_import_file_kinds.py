"""Only regular files inside the imported folder are read, in every importer.

A vault may hold a symlink to a file outside it (``leak.md -> /elsewhere/secret.md``), a symlink
to a FIFO or a device, a FIFO itself (opening one for reading blocks until a writer comes, so an
import would hang), or a symlinked folder that leads out. Each is skipped with a warning naming
it, the rest is imported, and a symlink that stays inside the folder is followed. A deadline
guards every import: if anything opened a FIFO the test fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")

OUTSIDE_SECRET = "TAPIRVELVET4471"
DEADLINE_SECONDS = 20


@contextlib.contextmanager
def deadline(seconds: int = DEADLINE_SECONDS) -> Iterator[None]:
    """Fail (not hang) if the block outlives ``seconds``: a blocked open() is interrupted."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds}s: something opened a FIFO?")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def do_import(tmp_path: Path, source: Path, fmt: str):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    conn = connect(tmp_path / "graph.db", create=True)
    with deadline():
        report = import_path(conn, source, format=fmt)
    return conn, report


def outside_files(tmp_path: Path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{OUTSIDE_SECRET} lives here.\n", encoding="utf-8")
    (outside / "secret.csv").write_text(f"Name,Note\n{OUTSIDE_SECRET},x\n", encoding="utf-8")
    (outside / "dir").mkdir()
    (outside / "dir" / "deep.md").write_text(f"- {OUTSIDE_SECRET} in a folder\n", encoding="utf-8")
    fifo = outside / "fifo"
    os.mkfifo(fifo)
    return {"dir": outside, "md": outside / "secret.md", "csv": outside / "secret.csv", "fifo": fifo}


def hostile_entries(folder: Path, out: dict[str, Path], suffix: str, target: Path) -> dict[str, str]:
    """Plant the hostile entries in ``folder``; returns {relative name: what the warning says}."""
    os.symlink(target, folder / f"leak{suffix}")
    os.mkfifo(folder / f"pipe{suffix}")
    os.symlink(f"pipe{suffix}", folder / f"pipe-link{suffix}")  # inside, but to a FIFO
    os.symlink(out["fifo"], folder / f"far-pipe{suffix}")
    names = {
        f"leak{suffix}": "outside the imported folder",
        f"pipe{suffix}": "a FIFO",
        f"pipe-link{suffix}": "a symlink to a FIFO",
        f"far-pipe{suffix}": "outside the imported folder",
    }
    if os.path.exists("/dev/null"):
        os.symlink("/dev/null", folder / f"device{suffix}")
        names[f"device{suffix}"] = "outside the imported folder"
    os.symlink(out["dir"] / "dir", folder / "linked-dir")  # a folder that leads out: not entered
    return names


def node_texts(conn: sqlite3.Connection) -> str:
    return "\n".join(f"{r[0]} {r[1]}" for r in conn.execute("SELECT title, body FROM nodes"))


def assert_skipped(report, names: dict[str, str], prefix: str = "") -> None:
    for name, reason in names.items():
        hits = [w for w in report.warnings if w.startswith(f"{prefix}{name}:")]
        assert hits, f"no warning names {prefix}{name}: {report.warnings}"
        assert reason in hits[0] and "skipped" in hits[0], hits[0]


@pytest.mark.parametrize("fmt", ["obsidian", "foam", "dendron"])
def test_markdown_vaults_read_only_regular_files_inside(tmp_path, fmt):
    out = outside_files(tmp_path)
    vault = tmp_path / "vault"
    (vault / "sub").mkdir(parents=True)
    real = "real.md" if fmt != "dendron" else "proj.real.md"
    (vault / "sub" / real).write_text("# Real\n\nA real note inside the vault.\n", encoding="utf-8")
    os.symlink(Path("sub") / real, vault / ("inside.md" if fmt != "dendron" else "proj.inside.md"))
    names = hostile_entries(vault, out, ".md", out["md"])
    conn, report = do_import(tmp_path, vault, fmt)
    assert_skipped(report, names)
    text = node_texts(conn)
    assert OUTSIDE_SECRET not in text
    # The symlink inside the vault is followed: the note is there under both names.
    bodies = [r[0] for r in conn.execute("SELECT body FROM nodes WHERE body LIKE '%real note inside%'")]
    assert len(bodies) == 2


def test_logseq_reads_only_regular_files_inside(tmp_path):
    out = outside_files(tmp_path)
    graph = tmp_path / "graph"
    (graph / "pages").mkdir(parents=True)
    (graph / "pages" / "Real.md").write_text("- a real block inside the graph\n", encoding="utf-8")
    os.symlink("Real.md", graph / "pages" / "Inside.md")
    names = hostile_entries(graph / "pages", out, ".md", out["md"])
    # journals/ itself is a symlink that leads out of the graph: what it holds is outside.
    os.symlink(out["dir"] / "dir", graph / "journals")
    conn, report = do_import(tmp_path, graph, "logseq")
    assert_skipped(report, names, prefix="pages/")
    assert any(w.startswith("journals/deep.md:") and "outside the imported folder" in w for w in report.warnings)
    assert OUTSIDE_SECRET not in node_texts(conn)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE body = 'a real block inside the graph'").fetchone()[0] == 2


def test_notion_reads_only_regular_files_inside(tmp_path):
    out = outside_files(tmp_path)
    export = tmp_path / "export"
    export.mkdir()
    page_id = "0123456789abcdef0123456789abcdef"
    (export / f"Home {page_id}.md").write_text("# Home\n\nThe real home page.\n", encoding="utf-8")
    names = hostile_entries(export, out, ".md", out["md"])
    os.symlink(out["csv"], export / f"Leaked db {page_id}.csv")
    names[f"Leaked db {page_id}.csv"] = "outside the imported folder"
    conn, report = do_import(tmp_path, export, "notion")
    assert_skipped(report, names)
    assert OUTSIDE_SECRET not in node_texts(conn)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE title = 'Home'").fetchone()[0] == 1


ROAM_PAGE = [{"title": "Inside page", "uid": "p1", "children": [{"string": "inside block", "uid": "b1"}]}]
TANA_DOCS = {
    "formatVersion": 1,
    "docs": [{"id": "n1", "props": {"name": "Inside node", "created": 1700000000000}, "children": []}],
}


@pytest.mark.parametrize(
    ("fmt", "good", "secret"),
    [
        ("roam", ROAM_PAGE, [{"title": OUTSIDE_SECRET, "uid": "s1", "children": []}]),
        ("tana", TANA_DOCS, {"formatVersion": 1, "docs": [{"id": "s1", "props": {"name": OUTSIDE_SECRET}}]}),
    ],
)
def test_json_export_folders_read_only_regular_files_inside(tmp_path, fmt, good, secret):
    out = outside_files(tmp_path)
    secret_file = out["dir"] / "secret.json"
    secret_file.write_text(json.dumps(secret), encoding="utf-8")
    folder = tmp_path / "exports"
    folder.mkdir()
    (folder / "good.json").write_text(json.dumps(good), encoding="utf-8")
    names = hostile_entries(folder, out, ".json", secret_file)
    conn, report = do_import(tmp_path, folder, fmt)
    assert_skipped(report, names)
    assert OUTSIDE_SECRET not in node_texts(conn)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE title IN ('Inside page', 'Inside node')").fetchone()[0] == 1


@pytest.mark.parametrize("fmt", ["json", "roam", "tana", "obsidian", "auto"])
def test_a_fifo_given_as_the_source_is_refused_without_opening_it(tmp_path, run_cli, fmt):
    fifo = tmp_path / "graph.json"
    os.mkfifo(fifo)
    with deadline():
        result = run_cli("import", str(fifo), "--format", fmt)
    assert result.exit_code in (0, 2), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "graph.json" in result.stderr


def test_a_symlink_imported_before_is_dropped_once_it_points_outside(tmp_path):
    out = outside_files(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "target.md").write_text("# Target\n\nOriginally inside.\n", encoding="utf-8")
    os.symlink("target.md", vault / "alias.md")
    conn, _ = do_import(tmp_path, vault, "obsidian")
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE id = 'alias'").fetchone()[0] == 1
    (vault / "alias.md").unlink()
    os.symlink(out["md"], vault / "alias.md")
    conn, report = do_import(tmp_path, vault, "obsidian")
    assert any(w.startswith("alias.md:") for w in report.warnings)
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE id = 'alias'").fetchone()[0] == 0
    assert OUTSIDE_SECRET not in node_texts(conn)
