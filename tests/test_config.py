"""The config file: user and project files, flags winning, the graph path, bad keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctx.errors import UsageError



@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(user config dir, project folder); the tests run inside the project folder."""
    user = tmp_path / "user"
    user.mkdir()
    project = tmp_path / "project"
    (project / ".ctx").mkdir(parents=True)
    monkeypatch.setenv("CTX_HOME", str(user))
    monkeypatch.delenv("CTX_DB", raising=False)
    monkeypatch.chdir(project)
    return user, project


def _meta(run_cli, *args: str, db: Path) -> dict:
    result = run_cli("build", "Project Apollo", "--format", "json", *args, db=db)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["meta"]


def test_flags_beat_the_project_file_which_beats_the_user_file(homes, run_cli, demo_db):
    user, project = homes
    assert (_meta(run_cli, db=demo_db)["lens"], _meta(run_cli, db=demo_db)["tokens"]["budget"]) == ("general", 4000)
    (user / "config.yaml").write_text("build:\n  lens: planning\n  max_tokens: 1500\n", encoding="utf-8")
    meta = _meta(run_cli, db=demo_db)
    assert (meta["lens"], meta["tokens"]["budget"]) == ("planning", 1500)
    (project / ".ctx" / "config.yaml").write_text("build:\n  max_tokens: 900\n", encoding="utf-8")
    meta = _meta(run_cli, db=demo_db)
    assert (meta["lens"], meta["tokens"]["budget"]) == ("planning", 900)  # key by key
    meta = _meta(run_cli, "--lens", "writing", "--max-tokens", "700", db=demo_db)
    assert (meta["lens"], meta["tokens"]["budget"]) == ("writing", 700)


def test_the_mcp_context_tool_uses_the_same_defaults(homes, demo_db):
    user, _ = homes
    (user / "config.yaml").write_text("build:\n  lens: planning\n  max_tokens: 1200\n", encoding="utf-8")
    from ctx.mcp_server import CtxTools

    meta = json.loads(CtxTools(demo_db).context("Project Apollo", format="json").text)["meta"]
    assert (meta["lens"], meta["tokens"]["budget"]) == ("planning", 1200)


def test_the_graph_path_order(homes, run_cli, demo_db, tmp_path):
    from ctx.config import default_db_path

    user, project = homes
    assert default_db_path() == user / "graph.db"
    (user / "config.yaml").write_text(f"graph: {demo_db}\n", encoding="utf-8")
    assert default_db_path() == demo_db
    (project / ".ctx" / "graph.db").touch()
    assert default_db_path() == project / ".ctx" / "graph.db"  # a project's own graph beats the user's
    (project / ".ctx" / "config.yaml").write_text("graph: ../team.db\n", encoding="utf-8")
    assert default_db_path() == (project / "team.db").resolve()  # relative to the config file
    # A project's graph stays inside the project (issue 24, H3).
    (project / ".ctx" / "config.yaml").write_text(f"graph: {demo_db}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="must name a file inside the project"):
        default_db_path()
    # The graph named in the config is what commands open without --db.
    from conftest import copy_graph

    copy_graph(demo_db, project / "team.db")
    (project / ".ctx" / "config.yaml").write_text("graph: ../team.db\n", encoding="utf-8")
    from typer.testing import CliRunner

    from ctx.app import app

    result = CliRunner().invoke(app, ["stats", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["nodes"] > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("build:\n  lenz: x\n", "build.lenz: unknown key (expected lens, max_tokens, encoding)"),
        ("colour: red\n", "colour: unknown key (expected graph, build, sync, contexts, import, privacy)"),
        ("build:\n  max_tokens: lots\n", "build.max_tokens: must be a whole number"),
        ("sync:\n  before_build: 3\n", "sync.before_build: must be true or false"),
        ("build: planning\n", "build: must be a mapping"),
    ],
)
def test_a_bad_config_file_is_a_usage_error_naming_the_key(homes, run_cli, demo_db, text, message):
    user, _ = homes
    (user / "config.yaml").write_text(text, encoding="utf-8")
    result = run_cli("build", "Project Apollo", db=demo_db)
    assert result.exit_code == 2
    assert result.stderr == f"ctx: error: {user / 'config.yaml'}: {message}\n"
