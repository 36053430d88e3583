"""The installed `ctx` script: every error is one line on stderr with the documented exit code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctx.errors import EXIT_NOT_FOUND, EXIT_RUNTIME, EXIT_USAGE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _ctx(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")
    assert exe, "the ctx console script is installed with the package"
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["build", "--no-such-flag", "x"], EXIT_USAGE, "No such option: --no-such-flag"),
        (["build", "x", "--max-tokens", "10"], EXIT_USAGE, "--max-tokens"),
        (["build"], EXIT_USAGE, "Missing argument"),
        (["no-such-command"], EXIT_USAGE, "No such command"),
        (["build", "x", "--lens", "no-such-lens"], EXIT_USAGE, "no lens named 'no-such-lens'"),
        (["build", "zzz-nothing-matches-this"], EXIT_NOT_FOUND, "no node matches"),
        (["show", "zzz-nothing-matches-this"], EXIT_NOT_FOUND, "no node with id, title or alias"),
    ],
)
def test_errors_are_one_line(demo_db, args, code, fragment):
    result = _ctx(*args, "--db", str(demo_db), cwd=demo_db.parent)
    assert result.returncode == code, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ctx: error: "), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.stderr


def test_missing_graph_is_a_runtime_error(tmp_path):
    result = _ctx("stats", "--db", str(tmp_path / "none.db"), cwd=tmp_path)
    assert result.returncode == EXIT_RUNTIME
    assert result.stderr.startswith("ctx: error: no graph at") and result.stderr.count("\n") == 1


def test_not_found_still_prints_a_valid_empty_context(demo_db):
    result = _ctx("build", "zzz-nothing-matches-this", "--db", str(demo_db), cwd=demo_db.parent)
    assert result.returncode == EXIT_NOT_FOUND
    assert "No matching nodes found" in result.stdout


def test_a_closed_pipe_is_not_an_error(demo_db):
    exe = shutil.which("ctx", path=str(Path(sys.executable).parent)) or "ctx"
    pipeline = subprocess.run(
        f"'{exe}' build 'Project Apollo' --max-tokens 8000 --db '{demo_db}' | head -c 10",
        shell=True, capture_output=True, text=True, timeout=60,
    )
    assert pipeline.stdout == "# Context:"
    assert "Traceback" not in pipeline.stderr and "error" not in pipeline.stderr


def test_no_arguments_shows_help(tmp_path):
    result = _ctx(cwd=tmp_path)
    assert result.returncode == 0
    assert "build" in result.stdout + result.stderr


def test_an_empty_node_name_is_a_usage_error(demo_db):
    result = _ctx("show", "  ", "--db", str(demo_db), cwd=demo_db.parent)
    assert result.returncode == EXIT_USAGE
    assert result.stderr == "ctx: error: give a node id, title or alias\n"


@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_search_is_a_usage_error_as_an_empty_build_is(demo_db, query):
    """At dc7f3bd `ctx search ""` printed "no matches for ''" and exited 0, while `ctx build ""`
    was a usage error."""
    for command, message in (("search", "give some text to search for"), ("build", "give at least one topic or node id")):
        result = _ctx(command, query, "--db", str(demo_db), cwd=demo_db.parent)
        assert result.returncode == EXIT_USAGE, (command, result.stdout)
        assert result.stderr == f"ctx: error: {message}\n" and result.stdout == ""


def test_watch_without_a_graph_says_one_line(tmp_path):
    """At dc7f3bd `ctx watch` wrote "ctx: watching the sources of ... (Ctrl-C to stop)" above
    the error saying there was no graph to watch."""
    result = _ctx("watch", "--db", str(tmp_path / "none.db"), cwd=tmp_path)
    assert result.returncode == EXIT_RUNTIME
    assert result.stderr.startswith("ctx: error: no graph at") and result.stderr.count("\n") == 1


def test_format_has_the_same_short_flag_everywhere(demo_db):
    for command in (["stats"], ["search", "apollo"], ["show", "Project Apollo"]):
        result = _ctx(*command, "-f", "json", "--db", str(demo_db), cwd=demo_db.parent)
        assert result.returncode == 0, result.stderr
        assert result.stdout.lstrip().startswith("{")


@pytest.mark.parametrize(
    ("args", "allowed"),
    [
        (["import", "{vault}", "--output", "yaml"], "'text', 'json'"),
        (["import", "{vault}", "--format", "markdown"], "'auto', 'obsidian'"),
        (["embed", "--output", "yaml"], "'text', 'json'"),
        # build, search and show check --format in the core, with the MCP tools' very message
        (["build", "Project Apollo", "--format", "yaml"], "--format must be markdown or json"),
        (["search", "apollo", "--format", "yaml"], "--format must be text or json"),
        (["show", "Project Apollo", "--format", "yaml"], "--format must be text or json"),
        (["stats", "--format", "yaml"], "'text', 'json'"),
        (["sources", "--format", "yaml"], "'text', 'json'"),
        (["lens", "list", "--format", "yaml"], "'text', 'json'"),
        (["mcp", "--print-config", "--format", "yaml"], "'text', 'json'"),
    ],
)
def test_every_closed_option_refuses_other_values(demo_db, args, allowed):
    """Options with a fixed set of values are choices: anything else is a usage error naming them,
    before any work is done (`import --output yaml` once imported and then printed text)."""
    argv = [a.replace("{vault}", str(FIXTURES / "demo-vault")) for a in args]
    if argv[0] != "lens":
        argv += ["--db", str(demo_db)]
    done = _ctx(*argv, cwd=demo_db.parent)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctx: error: ") and allowed in lines[0], done.stderr


def test_python_dash_m_ctx_is_the_ctx_command(demo_db, tmp_path):
    """`python -m ctx` failed at 733ae3a ("No module named ctx.__main__"): for an environment whose
    scripts folder is not on PATH it is the way in, and it prints what `ctx` prints."""
    args = ["build", "Project Apollo", "--max-tokens", "600", "--db", str(demo_db)]
    ran = subprocess.run([sys.executable, "-m", "ctx", *args], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == _ctx(*args, cwd=tmp_path).stdout
    missing = subprocess.run([sys.executable, "-m", "ctx", "show", "no such node", "--db", str(demo_db)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert missing.returncode == EXIT_NOT_FOUND and missing.stderr.startswith("ctx: error: ")
