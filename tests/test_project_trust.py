"""A folder never reaches outside itself (issue 24, H3).

The audit's case: a repository ships ``.ctx/graph.db`` whose ``sources`` table names a folder of the
user's (or ``/usr``), and ``.ctx/config.yaml`` with ``sync: before_build: true``; the first `ctx build`
in the clone imported that folder into the shipped file. Now a graph not created by ctx on this
machine is never synced until `ctx trust`, and a project graph reads only its own folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import CliResult


def cli(*args: str) -> CliResult:
    from typer.testing import CliRunner

    from ctx.app import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.delenv("CTX_DB", raising=False)
    monkeypatch.chdir(home)
    return home


def node_ids(db: Path) -> set[str]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM nodes")}
    finally:
        conn.close()


def copy_graph(source: Path, target: Path) -> None:
    """A byte copy of the graph in a new file (what a clone or an unpacked archive gives)."""
    import sqlite3

    conn = sqlite3.connect(source)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copy(source, target)


def shipped_clone(tmp_path: Path, victim: Path) -> Path:
    """A clone whose .ctx/graph.db was made elsewhere (here: a copy, so a new file) and names
    ``victim`` as a source, with a config that syncs before every build."""
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    made = elsewhere / "graph.db"
    assert cli("import", str(victim), "--db", str(made), "-q").exit_code == 0
    clone = tmp_path / "clone"
    (clone / ".ctx").mkdir(parents=True)
    copy_graph(made, clone / ".ctx" / "graph.db")
    (clone / ".ctx" / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    (clone / "README.md").write_text("# Clone\n", encoding="utf-8")
    return clone


def test_a_shipped_graph_is_never_synced_before_the_user_says_so(home: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "my-notes"
    victim.mkdir()
    (victim / "Plan.md").write_text("# Plan\n\nThe plan.\n", encoding="utf-8")
    clone = shipped_clone(tmp_path, victim)
    db = clone / ".ctx" / "graph.db"
    before = node_ids(db)
    (victim / "Diary.md").write_text("# Diary\n\nWritten after the graph was shipped.\n", encoding="utf-8")
    monkeypatch.chdir(clone)
    synced = cli("sync")
    assert synced.exit_code == 1
    assert synced.stderr == (
        f"ctx: error: {db} was not created by ctx on this machine, so its sources are not synced;"
        f" check them with `ctx sources --db {db}`, then `ctx trust --db {db}` to allow it\n"
    )
    built = cli("build", "Plan")
    assert built.exit_code == 0 and "ctx trust" in built.stderr
    assert cli("watch").exit_code == 1
    from ctx.mcp_server import CtxTools

    tools = CtxTools(db)
    assert "ctx trust" in " ".join(tools.search("plan").warnings)
    tools.handle.close()
    assert node_ids(db) == before
    # Trusted, it is synced, but a project graph still reads nothing outside its project.
    assert cli("trust").exit_code == 0
    synced = cli("sync")
    assert synced.exit_code == 0 and "outside the project" in synced.stderr
    assert node_ids(db) == before
    # Its own folder is read.
    (clone / "notes").mkdir()
    (clone / "notes" / "Inside.md").write_text("# Inside\n\nA project note.\n", encoding="utf-8")
    assert cli("import", "notes").exit_code == 0
    (clone / "notes" / "More.md").write_text("# More\n\nAnother.\n", encoding="utf-8")
    assert cli("sync").exit_code == 0
    assert {"Inside", "More"} <= node_ids(db) and "Diary" not in node_ids(db)


def test_a_graph_made_here_is_synced_and_a_copy_of_it_is_not(home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# A\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert cli("import", str(vault), "--db", str(db)).exit_code == 0
    assert cli("sync", "--db", str(db)).exit_code == 0
    copy = tmp_path / "copy.db"
    copy_graph(db, copy)
    assert cli("sync", "--db", str(copy)).exit_code == 1
    assert cli("trust", "--db", str(copy)).exit_code == 0
    assert cli("sync", "--db", str(copy)).exit_code == 0


def test_a_project_graph_imports_only_inside_its_project(home: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    (project / ".ctx").mkdir(parents=True)
    (project / "notes").mkdir()
    (project / "notes" / "N.md").write_text("# N\n", encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "O.md").write_text("# O\n", encoding="utf-8")
    monkeypatch.chdir(project / "notes")
    assert cli("import", ".", "--db", str(project / ".ctx" / "graph.db")).exit_code == 0
    refused = cli("import", str(outside))  # the graph found walking up from here
    assert refused.exit_code == 2 and "outside the project" in refused.stderr
    assert node_ids(project / ".ctx" / "graph.db") == {"N"}


def test_graph_in_a_project_config_stays_inside_the_project(home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "vault"
    (project / ".ctx").mkdir(parents=True)
    (project / "N.md").write_text("# N\n", encoding="utf-8")
    (project / ".ctx" / "config.yaml").write_text("graph: ../../escaped/deeper/g.db\n", encoding="utf-8")
    monkeypatch.chdir(project)
    result = cli("import", ".")
    assert result.exit_code == 2 and "must name a file inside the project" in result.stderr
    assert not (tmp_path.parent / "escaped").exists()
    (project / ".ctx" / "config.yaml").write_text("graph: data/g.db\n", encoding="utf-8")
    assert cli("import", ".").exit_code == 0
    assert (project / ".ctx" / "data" / "g.db").exists()


def test_a_project_config_names_its_lens_and_reads_no_file_it_chooses(home: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``build.lens`` in a cloned folder's config was read as a path: every build (and MCP call)
    in the clone read that file wherever it was and showed its keys in the error ("SECRETLINE:
    unknown key"). Now a project names a lens; its own lenses live in .ctx/lenses/."""
    secret = tmp_path / "secrets.yaml"
    secret.write_text("SECRETLINE: hunter2\n", encoding="utf-8")
    project = tmp_path / "clone"
    (project / ".ctx" / "lenses").mkdir(parents=True)
    (project / "N.md").write_text("# N\n\nTomatoes want sun.\n", encoding="utf-8")
    monkeypatch.chdir(project)
    assert cli("import", ".", "-q").exit_code == 0
    config = project / ".ctx" / "config.yaml"
    for named in (str(secret), "../secrets.yaml", "~/secrets.yaml", "lenses/x.yml"):
        config.write_text(f"build:\n  lens: {named}\n", encoding="utf-8")
        refused = cli("build", "N")
        assert refused.exit_code == 2, (named, refused.stdout)
        assert "names a lens, not a file" in refused.stderr and "SECRETLINE" not in refused.stdout + refused.stderr
    from ctx.lenses.lookup import builtin_lens_dir

    general = (builtin_lens_dir() / "general.yaml").read_text(encoding="utf-8")
    assert "name: general\n" in general
    (project / ".ctx" / "lenses" / "mine.yaml").write_text(general.replace("name: general\n", "name: mine\n"), encoding="utf-8")
    config.write_text("build:\n  lens: mine\n", encoding="utf-8")
    chosen = cli("build", "N", "--format", "json")
    assert chosen.exit_code == 0, chosen.stderr
    assert json.loads(chosen.stdout)["meta"]["lens"] == "mine"
    assert cli("build", "N", "--lens", str(project / ".ctx" / "lenses" / "mine.yaml")).exit_code == 0  # the user's own flag


def test_trust_on_a_team_graph_says_there_is_nothing_to_trust(pg_url: str, home: Path, tmp_path: Path) -> None:
    """A PostgreSQL graph is never refused, so `ctx trust` on it changes nothing: it says so in one
    line (not "its sources will be synced", a promise of something it does not do), and a writer's
    sync re-imports the source without it."""
    pytest.importorskip("psycopg")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# A\n", encoding="utf-8")
    assert cli("import", str(vault), "--db", pg_url).exit_code == 0
    trusted = cli("trust", "--db", pg_url)
    assert trusted.exit_code == 0 and trusted.stdout == ""
    assert trusted.stderr.count("\n") == 1 and trusted.stderr.startswith("ctx: nothing to trust: ")
    assert "will be synced" not in trusted.stderr
    (vault / "B.md").write_text("# B\n", encoding="utf-8")
    synced = cli("sync", "--db", pg_url, "--no-embed")
    assert synced.exit_code == 0 and "1 changed" in synced.stderr
    # The line never shows a password the URL carries.
    secret = pg_url.replace("postgres@", "postgres:hunter2@", 1)
    said = cli("trust", "--db", secret)
    assert said.exit_code == 0 and "hunter2" not in said.stderr and "***" in said.stderr
    # A database that holds no graph is an error, as a graph file that is not there is.
    missing = cli("trust", "--db", pg_url.rsplit("/", 1)[0] + "/no_such_database")
    assert missing.exit_code == 1 and missing.stderr.startswith("ctx: error: ") and "nothing to trust" not in missing.stderr
