"""The README and docs/ say only what runs: every shell example is executed against the demo vault,
every configuration and lens example is loaded by the real code, and the command table is the one
the CLI's help generates (tests/docs_tables.py). docs/python-api.md is run by test_python_api.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from docs_tables import COMMANDS_END, COMMANDS_START, between, command_table

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, *DOCS]
CTX = Path(sys.executable).with_name("ctx")

# Commands an example may show that this test does not run, each with the reason and where it is
# tested instead. Anything else in a shell example must be `ctx ...`, `llm -f ctx:...` or a pipe
# into `llm`, so that an example nobody can run never reaches the docs.
NOT_RUN = {
    ("ctx", "watch"): "runs until Ctrl-C; tests/test_watch.py runs it",
    ("ctx", "embed"): "loads the embedding model (minutes on 2 cores); tests/test_semantic.py runs it",
    ("ctx", "mcp"): "serves MCP over stdin until closed (--print-config is run); tests/test_mcp*.py run it",
    ("pip", "install"): "installing is what CI itself does (.ci/run)",
    ("python", "-m"): "the test suite is what CI itself runs (.ci/run)",
}
README_TEST_COMMAND = "pip install -e '.[dev]' && python -m pytest -q -n auto --dist loadfile"


def blocks(page: Path, *languages: str) -> list[str]:
    pattern = r"^```(" + "|".join(languages) + r")\n(.*?)^```"
    return [m.group(2) for m in re.finditer(pattern, page.read_text(encoding="utf-8"), flags=re.S | re.M)]


def shell_lines(page: Path) -> list[str]:
    """The commands of a page's shell examples, in order; a console block's are its `$ ` lines."""
    lines: list[str] = []
    for block in blocks(page, "bash", "sh"):
        lines += [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for block in blocks(page, "console"):
        lines += [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    return lines


def expected_exit(line: str) -> int:
    comment = re.search(r"#[^'\"]*?exit (\d+)\s*$", line)
    return int(comment.group(1)) if comment else 0


def commands(line: str) -> list[list[str]]:
    """The simple commands of ``line``: split at `&&`, and only the left side of a pipe (whose
    right side must be `llm`)."""
    words = shlex.split(line, comments=True)
    found: list[list[str]] = [[]]
    piped = False
    for word in words:
        if word == "&&":
            found.append([])
            piped = False
        elif word == "|":
            piped = True
            found.append(["|"])
        elif not piped:
            found[-1].append(word)
        else:
            found[-1].append(word)
    out = []
    for command in found:
        if command and command[0] == "|":
            assert command[1] == "llm", f"a docs example pipes into {command[1]!r}, which this test cannot run"
            continue
        out.append(command)
    return out


@pytest.fixture(scope="module")
def demo_graph(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    subprocess.run([str(CTX), "import", str(FIXTURES / "demo-vault"), "--db", str(folder / "graph.db")],
                   check=True, capture_output=True, env=_env(folder))
    return folder / "graph.db"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(HOME=str(home / "home"), CTX_HOME=str(home / "home"), CTX_CACHE_DIR=str(home / "cache"), COLUMNS="120")
    return env


def _workspace(tmp_path: Path, demo_graph: Path) -> dict[str, str]:
    """A folder like a clone of the repository: fixtures/ and lenses/, a lens file of the user's own
    (my-lens.yaml, as the docs show one) and the demo vault imported into the default graph."""
    (tmp_path / "fixtures").symlink_to(FIXTURES, target_is_directory=True)
    (tmp_path / "lenses").symlink_to(REPO / "lenses", target_is_directory=True)
    shutil.copy(REPO / "lenses" / "writing.yaml", tmp_path / "my-lens.yaml")
    (tmp_path / "home").mkdir()
    env = _env(tmp_path)
    env["CTX_DB"] = str(tmp_path / "graph.db")
    shutil.copy(demo_graph, tmp_path / "graph.db")
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if command[:2] == ["llm", "-f"]:
        code = "import sys; from ctx.llm_plugin import load_ctx_fragment; print(load_ctx_fragment(sys.argv[1]))"
        assert command[2].startswith("ctx:"), command
        return subprocess.run([sys.executable, "-c", code, command[2][4:]], cwd=cwd, env=env, capture_output=True, text=True)
    assert command[0] == "ctx", f"a docs example runs {command[0]!r}, which this test cannot run: {command}"
    return subprocess.run([str(CTX), *command[1:]], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_shell_example_runs(page, tmp_path, demo_graph):
    env = _workspace(tmp_path, demo_graph)
    ran = 0
    for line in shell_lines(page):
        for command in commands(line):
            if tuple(command[:2]) in NOT_RUN and "--print-config" not in command:
                continue
            result = _run(command, tmp_path, env)
            assert result.returncode == expected_exit(line), f"{page.name}: {line}\n{result.stderr}"
            if result.returncode == 0 and "json" in command and command[1] in ("build", "search", "show", "stats"):
                from json_contract import validator

                doc = json.loads(result.stdout)
                errors = list(validator(command[1]).iter_errors(doc))
                assert not errors, f"{page.name}: {line}: {errors[0].message}"
            ran += 1
    if page == README:
        assert ran >= 15


def test_the_readme_shows_the_ci_test_command_verbatim():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert README_TEST_COMMAND in README.read_text(encoding="utf-8")
    lines = ci.splitlines()
    marker = lines.index("# --- the README's test command, verbatim ---")
    assert lines[marker + 1] == README_TEST_COMMAND


def test_the_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_command_table_is_the_one_the_cli_generates():
    table = between(README.read_text(encoding="utf-8"), COMMANDS_START, COMMANDS_END)
    assert table == command_table(), "README command table is stale; paste `python tests/docs_tables.py`:\n" + command_table()


def test_the_lens_table_names_every_builtin_lens():
    from ctx.lenses import builtin_lens_names

    table = between(README.read_text(encoding="utf-8"), "<!-- lenses: tests/test_docs.py checks that this table names every built-in lens -->", "<!-- /lenses -->")
    named = re.findall(r"^\| `([a-z-]+)`", table, flags=re.M)
    assert named[0] == "auto"
    assert sorted(named[1:]) == sorted(builtin_lens_names())


def test_every_link_between_pages_resolves():
    for page in PAGES:
        # A link shown as code is not one: drop fenced blocks, then inline code (which may wrap a line).
        prose = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
        prose = re.sub(r"`[^`]*`", "", prose)
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", prose):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"


def test_the_configuration_examples_load(tmp_path, monkeypatch):
    from ctx import config

    page = REPO / "docs" / "configuration.md"
    examples = blocks(page, "yaml")
    assert examples
    for number, text in enumerate(examples):
        # The user's own file: the one that may set every key (a project's may only add privacy
        # markers, and its graph: stays inside the project).
        home = tmp_path / f"home{number}"
        home.mkdir()
        (home / "config.yaml").write_text(text, encoding="utf-8")
        monkeypatch.setenv("CTX_HOME", str(home))
        monkeypatch.chdir(home)
        settings = config.load_settings()
        privacy = config.load_privacy_config()
        limits = config.load_import_limits()
        import yaml

        data = yaml.safe_load(text)
        assert set(privacy.tags) >= set(data["privacy"]["tags"])
        if "build" in data:
            assert settings.max_tokens == data["build"]["max_tokens"]
            assert settings.lens == data["build"]["lens"]
        if "import" in data:
            assert limits.max_note_chars == data["import"]["max_note_chars"]


def test_the_lens_examples_are_valid_lenses():
    import yaml

    from ctx.lenses.validate import parse_lens

    examples = blocks(REPO / "docs" / "lenses.md", "yaml")
    assert len(examples) >= 5
    for number, text in enumerate(examples):
        parse_lens(yaml.safe_load(text), where=f"docs/lenses.md example {number + 1}", name="example", source="docs")


def test_the_json_graph_example_imports(tmp_path):
    from ctx import Graph

    (example,) = blocks(REPO / "docs" / "json-format.md", "json")
    (tmp_path / "claims.jsonl").write_text(example, encoding="utf-8")
    graph = Graph.open(tmp_path / "g.db", create=True)
    report = graph.import_path(tmp_path / "claims.jsonl")
    assert not report.warnings
    assert report.nodes_written == len([line for line in example.splitlines() if '"id"' in line])
    graph.close()
