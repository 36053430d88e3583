"""The error paths and rough edges a new user meets in the first hour (issue 20, items 6 and 7):
each is one clear line on stderr, nothing is created on failure, a path is a topic, and the
graph in use is named."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CTX = Path(sys.executable).with_name("ctx")


def _vault(root: Path) -> Path:
    vault = root / "vault"
    (vault / "Plugins").mkdir(parents=True)
    (vault / "Plugins" / "Canvas.md").write_text(
        "Canvas is a plugin for laying out notes on an infinite board.\n", encoding="utf-8"
    )
    (vault / "Plugins" / "Kanban.md").write_text("Kanban boards: columns of cards.\n", encoding="utf-8")
    (vault / "Paragraph syntax.md").write_text(
        "A paragraph is a run of lines. See [[Canvas]] for boards.\n", encoding="utf-8"
    )
    return vault


@pytest.fixture
def vault_db(tmp_path, run_cli, db_path):
    vault = _vault(tmp_path)
    assert run_cli("import", str(vault)).exit_code == 0
    return db_path


# -- item 7: nothing created on failure, "no graph" --------------------------------------------


def test_import_of_a_missing_path_creates_nothing(tmp_path, run_cli):
    db = tmp_path / "new" / "x.db"
    out = run_cli("import", str(tmp_path / "does-not-exist"), db=db)
    assert out.exit_code == 2
    assert out.stderr.strip().count("\n") == 0 and "does-not-exist" in out.stderr
    assert not db.exists() and not (tmp_path / "new").exists()
    # So a build afterwards says there is no graph, not that nothing matched.
    built = run_cli("build", "anything", db=db)
    assert built.exit_code == 1 and "no graph at" in built.stderr


def test_an_import_that_fails_after_opening_leaves_no_new_graph(tmp_path, run_cli):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "data.bin").write_bytes(b"\x00\x01")
    db = tmp_path / "y.db"
    out = run_cli("import", str(empty), "--format", "json", db=db)
    assert out.exit_code != 0
    assert not db.exists() and not Path(f"{db}-wal").exists()


def test_a_graph_with_nothing_imported_says_so_instead_of_no_match(tmp_path, run_cli):
    from ctx.graph import Graph

    db = tmp_path / "empty.db"
    Graph.open(db, create=True).close()
    built = run_cli("build", "anything", db=db)
    assert built.exit_code == 1
    assert "nothing imported" in built.stderr and "no node matches" not in built.stderr


def test_show_says_did_you_mean(vault_db, run_cli):
    out = run_cli("show", "Kanbn")
    assert out.exit_code == 3
    assert out.stderr.strip() == "ctx: error: no node with id, title or alias 'Kanbn'; did you mean 'Kanban'?"


def test_stats_on_a_folder_says_it_is_a_folder(tmp_path, run_cli):
    out = run_cli("stats", db=tmp_path)
    assert out.exit_code == 1
    assert out.stderr.strip() == f"ctx: error: {tmp_path} is a folder, not a graph file; give --db a file (such as {tmp_path / 'graph.db'})"


def test_print_config_warns_about_a_graph_that_does_not_exist(tmp_path, run_cli):
    db = tmp_path / "missing.db"
    out = run_cli("mcp", "--print-config", db=db)
    assert out.exit_code == 0 and str(db) in out.stdout
    assert out.stderr.count("\n") == 1 and "no graph at" in out.stderr and "ctx import" in out.stderr
    assert not db.exists()


@pytest.mark.parametrize(
    "url, says",
    [
        ("mysql://root:secret@db.example/notes", "ctx cannot use mysql databases"),
        ("mariadb://h/notes", "ctx cannot use mariadb databases"),
        ("sqlite:///tmp/notes.db", "not a sqlite:// URL"),
    ],
)
def test_a_database_url_is_never_a_path(tmp_path, url, says):
    env = {**os.environ, "CTX_HOME": str(tmp_path / "home")}
    for argv in (["stats"], ["import", str(_vault(tmp_path / url.split(":")[0]))], ["build", "x"]):
        out = subprocess.run([str(CTX), *argv, "--db", url], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert out.returncode == 2, (argv, out.stderr)
        assert out.stderr.count("\n") == 1 and says in out.stderr, out.stderr
        assert "secret" not in out.stderr
    assert not any(p.name.endswith(":") for p in tmp_path.iterdir())


def test_the_url_check_is_one_function():
    from ctx.errors import UsageError
    from ctx.paths import db_url_scheme

    assert db_url_scheme("notes/graph.db") is None
    assert db_url_scheme(Path("/tmp/graph.db")) is None
    assert db_url_scheme("C:/Users/me/graph.db") is None  # a drive letter, not a scheme
    with pytest.raises(UsageError):
        db_url_scheme("mysql://h/db")
    with pytest.raises(UsageError):
        db_url_scheme(Path("mysql://h/db"))  # a Path folds '//' to '/': still a URL


# -- item 7: the graph in use is named ---------------------------------------------------------


def test_stats_and_explain_name_the_graph(vault_db, run_cli):
    text = run_cli("stats")
    assert f"graph: {vault_db}" in text.stdout.splitlines()[0]
    assert json.loads(run_cli("stats", "--format", "json").stdout)["graph"] == str(vault_db)
    explained = run_cli("build", "Canvas", "--explain")
    assert f"graph: {vault_db}" in explained.stderr


# -- item 7: completion --------------------------------------------------------------------------


def _complete(tmp_path: Path, words: str) -> list[str]:
    env = {
        **os.environ,
        "_CTX_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
        "CTX_HOME": str(tmp_path / "home"),
    }
    out = subprocess.run([str(CTX)], capture_output=True, text=True, env=env, cwd=tmp_path)
    return [line for line in out.stdout.splitlines() if line]


def test_completion_offers_lens_names_and_choices(tmp_path):
    from ctx.lenses import builtin_lens_names

    lenses = _complete(tmp_path, "ctx build topic --lens ")
    assert set(builtin_lens_names()) | {"auto"} <= set(lenses)
    assert _complete(tmp_path, "ctx build topic --lens pl") == ["planning"]
    assert _complete(tmp_path, "ctx build topic --format ") == ["markdown", "json"]
    assert "obsidian" in _complete(tmp_path, "ctx import x --format ")
    assert _complete(tmp_path, "ctx lens show wri") == ["writing"]


# -- item 6: a path is a topic -------------------------------------------------------------------


@pytest.mark.parametrize("topic", ["Plugins/Canvas.md", "Plugins/Canvas", "./Plugins/Canvas.md", "plugins/canvas.md"])
def test_a_note_path_is_a_topic(vault_db, run_cli, topic):
    out = run_cli("build", topic, "--format", "json")
    assert out.exit_code == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["nodes"][0]["id"] == "Plugins/Canvas"
    assert doc["meta"]["lens_choice"]["lens"] == "general"
    assert run_cli("show", topic).exit_code == 0


def test_a_path_from_the_current_folder_is_a_topic(vault_db, tmp_path, run_cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run_cli("build", "vault/Plugins/Canvas.md", "--format", "json")
    assert json.loads(out.stdout)["nodes"][0]["id"] == "Plugins/Canvas"
    monkeypatch.chdir(tmp_path / "vault" / "Plugins")
    out = run_cli("build", "Canvas.md", "--format", "json")
    assert json.loads(out.stdout)["nodes"][0]["id"] == "Plugins/Canvas"


def test_a_path_in_an_outline_export_names_no_single_page(tmp_path, run_cli, db_path):
    export = tmp_path / "roam.json"
    export.write_text(json.dumps([
        {"title": "Alpha", "uid": "pa", "children": [{"string": "one", "uid": "b1"}]},
        {"title": "Beta", "uid": "pb", "children": [{"string": "two", "uid": "b2"}]},
    ]), encoding="utf-8")
    assert run_cli("import", str(export)).exit_code == 0
    from ctx.graph import Graph

    with Graph.open(db_path) as graph:
        assert graph.reader.find_by_path("roam.json") == []
