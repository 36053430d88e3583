"""Where privacy rules come from (issue 24, H2): only the user's own config may widen what is visible.

A project's ``.ctx/config.yaml`` may only add markers, and only for the sources inside that project;
the folder a command runs in changes nothing. The audit's case: a downloaded vault shipping
``privacy: {tags: [none], fields: [none]}`` made every private note of the user's whole graph public
after one ``ctx sync`` run in that folder, and it stuck.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CliResult

HOSTILE = "privacy:\n  tags: [none]\n  fields: [none]\n"


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


def notes(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "Plan.md").write_text("# Plan\n\nThe launch plan.\n", encoding="utf-8")
    (root / "Diary.md").write_text("---\ntags: [private]\n---\n# Diary\n\nMy zorblat secret.\n", encoding="utf-8")
    (root / "Health.md").write_text("---\nprivate: true\n---\n# Health\n\nA zorblat appointment.\n", encoding="utf-8")
    (root / "Journal.md").write_text("---\ntags: [journal]\n---\n# Journal\n\nA zorblat day.\n", encoding="utf-8")
    return root


def visible_hits(db: Path, *extra: str) -> set[str]:
    found = cli("search", "zorblat", "--format", "json", "--db", str(db), *extra).stdout
    return {r["id"] for r in json.loads(found)["results"]}


def hidden_notes(db: Path) -> set[str]:
    """The notes with the word that only --include-private finds."""
    return visible_hits(db, "--include-private") - visible_hits(db)


def hostile_folder(root: Path) -> Path:
    (root / ".ctx").mkdir(parents=True)
    (root / ".ctx" / "config.yaml").write_text(HOSTILE + "sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    (root / "README.md").write_text("# A downloaded vault\n", encoding="utf-8")
    return root


def test_a_folder_config_cannot_make_the_users_private_notes_public(home: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    vault = notes(tmp_path / "my-notes")
    db = tmp_path / "user.db"
    assert cli("import", str(vault), "--db", str(db)).exit_code == 0
    assert visible_hits(db) == {"Journal"} and hidden_notes(db) == {"Diary", "Health"}
    clone = hostile_folder(tmp_path / "downloads" / "vault")
    monkeypatch.chdir(clone)
    # Every way the audit found of recomputing the flags there: a sync, an import, a build that
    # syncs first after an edit, the MCP server's check.
    (vault / "Plan.md").write_text("# Plan\n\nThe launch plan, edited.\n", encoding="utf-8")
    assert cli("sync", "--db", str(db)).exit_code == 0
    assert cli("import", str(vault), "--db", str(db)).exit_code == 0
    (vault / "Plan.md").write_text("# Plan\n\nThe launch plan, edited again.\n", encoding="utf-8")
    cli("build", "Plan", "--db", str(db))
    from ctx.mcp_server import CtxTools

    (vault / "Plan.md").write_text("# Plan\n\nAnd again.\n", encoding="utf-8")
    tools = CtxTools(db)
    assert "Diary" not in tools.search("zorblat").text and "Health" not in tools.search("zorblat").text
    tools.handle.close()
    assert hidden_notes(db) == {"Diary", "Health"}
    monkeypatch.chdir(home)
    assert visible_hits(db) == {"Journal"} and hidden_notes(db) == {"Diary", "Health"}


def test_a_project_config_adds_markers_to_its_own_sources_wherever_ctx_runs(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    vault = notes(project / "notes")
    (project / ".ctx").mkdir()
    (project / ".ctx" / "config.yaml").write_text("privacy:\n  tags: [journal]\n", encoding="utf-8")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "Log.md").write_text("---\ntags: [journal]\n---\n# Log\n\nA zorblat log.\n", encoding="utf-8")
    db = tmp_path / "user.db"
    monkeypatch.chdir(project)
    assert cli("import", str(vault), "--db", str(db)).exit_code == 0
    assert hidden_notes(db) == {"Diary", "Health", "Journal"}  # Journal by the project's rule
    monkeypatch.chdir(home)
    assert cli("import", str(other), "--db", str(db)).exit_code == 0
    # Outside the project its rule does not apply; inside it, it does though ctx ran elsewhere.
    assert visible_hits(db) == {"Log"} and hidden_notes(db) == {"Diary", "Health", "Journal"}
    # A sync run anywhere keeps the project's note private: the rule belongs to the source's folder.
    (vault / "Plan.md").write_text("# Plan\n\nEdited.\n", encoding="utf-8")
    assert cli("sync", "--db", str(db)).exit_code == 0
    monkeypatch.chdir(project)
    assert cli("sync", "--db", str(db)).exit_code == 0
    assert visible_hits(db) == {"Log"} and hidden_notes(db) == {"Diary", "Health", "Journal"}


def test_the_users_own_config_may_widen(home: Path, tmp_path: Path) -> None:
    vault = notes(tmp_path / "my-notes")
    db = tmp_path / "user.db"
    cli("import", str(vault), "--db", str(db))
    assert hidden_notes(db) == {"Diary", "Health"}
    (home / "config.yaml").write_text("privacy:\n  tags: [secret]\n  fields: []\n", encoding="utf-8")
    assert cli("sync", "--db", str(db)).exit_code == 0
    assert hidden_notes(db) == set()
    assert visible_hits(db) == {"Diary", "Health", "Journal"}
