"""The fast path of `ctx search` (commands/search_argv, called by ctx.entry): it reads exactly what
the Typer command reads, gives way to Typer for everything else, and prints and exits exactly as
the Typer command does."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

from ctx.commands.build_argv import spellings
from ctx.commands.search_argv import fast_search, parse_search
from ctx.commands.search_run import run_search
from ctx.options import SearchRequest

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")


def _typer_search():
    import typer.main

    from ctx.app import app

    return typer.main.get_command(app).commands["search"]


def _minimum(param) -> int | None:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29 keeps it here
    if descriptor is not None:
        return descriptor.parameter_info.min
    return getattr(param.type, "min", None)


def test_option_spellings_defaults_and_minimums_match_the_typer_command():
    search = _typer_search()
    values, flags, minimum, defaults = {}, {}, {}, {}
    for param in search.params:
        if param.param_type_name != "option":
            continue
        if param.is_flag:
            for spelling in param.opts:
                flags[spelling] = (param.name, True)
            assert not param.secondary_opts
        else:
            values.update({spelling: param.name for spelling in param.opts})
        if _minimum(param) is not None:
            minimum[param.name] = _minimum(param)
        if param.name not in ("db", "plain"):
            defaults[param.name] = param.default
    spelled = spellings(SearchRequest)
    assert values == spelled.values
    assert flags == spelled.flags
    assert minimum == {name: least for name, (least, _) in spelled.bounds.items() if least is not None}
    assert defaults == {name: value for name, value in spelled.defaults.items()}


def test_run_search_takes_every_parameter_of_the_command():
    assert set(inspect.signature(run_search).parameters) == {p.name for p in _typer_search().params}


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["search", "apollo"], {"query": "apollo", "limit": 20, "format": "text", "db": None, "plain": False}),
        (["search", "launch risk", "-n", "3", "-f", "json"], {"query": "launch risk", "limit": 3, "format": "json"}),
        (["--db", "g.db", "search", "a", "--limit=5"], {"db": Path("g.db"), "limit": 5}),
        (["--db", "root.db", "search", "a", "--db", "own.db"], {"db": Path("own.db")}),
        (["--plain", "search", "a", "--include-private"], {"plain": True, "include_private": True}),
        (["search", "--", "-not an option"], {"query": "-not an option"}),
        (["search", "a", "--format", "yaml"], {"format": "yaml"}),  # the core refuses it, as for Typer
    ],
)
def test_plain_arguments_are_read(argv, expected, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    parsed = parse_search(argv)
    assert parsed is not None
    assert {k: parsed[k] for k in expected} == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["search"], ["search", "a", "b"], ["search", "a", "--help"], ["search", "-h"],
        ["search", "a", "--limit", "0"], ["search", "a", "-n", "-1"], ["search", "a", "-n", "two"],
        ["search", "a", "-n"], ["search", "a", "--unknown"], ["search", "a", "-n5"],
        ["search", "a", "--plain=1"], ["search", "a", "--db", ""], ["search", "-"], ["build", "a"],
        ["--", "search", "a"], ["search", "a", "--lens", "x"], ["--install-completion", "search", "a"],
    ],
)
def test_anything_else_goes_to_typer(argv, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    assert parse_search(argv) is None


def test_switches_that_force_typer(monkeypatch):
    monkeypatch.setenv("CTX_NO_FAST_PATH", "1")
    assert fast_search(["search", "a"]) is None
    monkeypatch.delenv("CTX_NO_FAST_PATH")
    monkeypatch.setenv("_CTX_COMPLETE", "bash_complete")
    assert parse_search(["search", "a"]) is None


def test_db_from_the_environment_unless_a_flag_names_one(monkeypatch):
    monkeypatch.setenv("CTX_DB", "env.db")
    assert parse_search(["search", "a"])["db"] == Path("env.db")
    assert parse_search(["search", "a", "--db", "flag.db"])["db"] == Path("flag.db")
    monkeypatch.setenv("CTX_DB", "")
    assert parse_search(["search", "a"]) is None


@pytest.mark.parametrize(
    "args",
    [
        ["search", "launch"],
        ["search", "launch", "--format", "json", "-n", "2"],
        ["search", "apollo AND (risk"],
        ["search", "zzzqqq nothing matches"],
        ["search", "launch", "--include-private", "--plain"],
        ["search", "launch", "--format", "yaml"],
    ],
)
def test_fast_path_prints_and_exits_as_the_typer_command(args, demo_db, capsys, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    argv = ["--db", str(demo_db), *args]
    fast_code = fast_search(argv)
    assert fast_code is not None
    fast = capsys.readouterr()

    monkeypatch.setattr("sys.argv", ["ctx", *argv])
    from ctx.app import main as typer_main

    with pytest.raises(SystemExit) as typer_exit:
        typer_main()
    slow = capsys.readouterr()
    assert (fast_code, fast.out, fast.err) == (typer_exit.value.code or 0, slow.out, slow.err)
    assert fast.out or fast_code != 0


def test_a_missing_graph_fails_alike(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    argv = ["search", "a", "--db", str(tmp_path / "absent.db")]
    fast_code = fast_search(argv)
    fast = capsys.readouterr()
    monkeypatch.setattr("sys.argv", ["ctx", *argv])
    from ctx.app import main as typer_main

    with pytest.raises(SystemExit) as typer_exit:
        typer_main()
    slow = capsys.readouterr()
    assert fast_code == typer_exit.value.code != 0
    assert fast.err == slow.err and "no graph" in fast.err
    assert not (tmp_path / "absent.db").exists()


def test_the_console_script_answers_a_search_without_leaving_wal_files(demo_db, tmp_path):
    """The fast path leaves with os._exit: the graph must have been closed before (SQLite removes
    its -wal and -shm files on the last close), as for a build."""
    import subprocess
    import sys

    from conftest import copy_graph

    db = copy_graph(demo_db, tmp_path / "copy.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": str(tmp_path / "home"), "CTX_CACHE_DIR": str(tmp_path / "cache")})
    proc = subprocess.run([sys.executable, "-c", "from ctx.entry import main; main()", "search", "launch", "--db", str(db)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and "launch" in proc.stdout.lower()
    assert not (tmp_path / "copy.db-wal").exists() and not (tmp_path / "copy.db-shm").exists()
