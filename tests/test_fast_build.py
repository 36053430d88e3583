"""The fast path of `ctx build` (commands/build_argv, called by ctx.entry): it reads exactly what the Typer command reads, gives
way to Typer for everything else, and prints and exits exactly as the Typer command does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx.assemble import BuildRequest
from ctx.commands.build_argv import (
    ROOT_FLAGS,
    ROOT_VALUE_OPTIONS,
    fast_build,
    parse_build,
    spellings,
)

from conftest import imported_graph

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")


def _typer_commands():
    import typer.main

    from ctx.app import app

    root = typer.main.get_command(app)
    return root, root.commands["build"]


def _minimum(param) -> int | None:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29 keeps it here
    if descriptor is not None:
        return descriptor.parameter_info.min
    return getattr(param.type, "min", None)


def test_option_spellings_match_the_typer_command():
    _, build = _typer_commands()
    values, flags, minimum = {}, {}, {}
    for param in build.params:
        if param.param_type_name != "option":
            continue
        if param.is_flag:
            for spelling in param.opts:
                flags[spelling] = (param.name, True)
            for spelling in param.secondary_opts:
                flags[spelling] = (param.name, False)
        else:
            values.update({spelling: param.name for spelling in param.opts})
        if _minimum(param) is not None:
            minimum[param.name] = _minimum(param)
    spelled = spellings(BuildRequest)
    assert values == spelled.values
    assert flags == spelled.flags
    assert minimum == {name: least for name, (least, _) in spelled.bounds.items() if least is not None}


def test_root_options_it_reads_are_the_roots():
    root, _ = _typer_commands()
    by_name = {p.name: p for p in root.params}
    assert {s: n for n, p in by_name.items() if not p.is_flag for s in p.opts} == ROOT_VALUE_OPTIONS
    assert all(spelling in by_name[name].opts for spelling, (name, _) in ROOT_FLAGS.items())


def test_the_fast_path_gives_run_build_every_parameter_of_the_command():
    _, build = _typer_commands()
    assert set(parse_build(["build", "x"])) == {p.name for p in build.params}


def test_defaults_are_the_commands():
    _, build = _typer_commands()
    parsed = parse_build(["build", "x"])
    for param in build.params:
        if param.name == "topics":
            continue
        if param.name == "db" and os.environ.get("CTX_DB"):
            continue
        assert parsed[param.name] == param.default, param.name


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["build", "a", "b"], {"topics": ("a", "b")}),
        (["build", "--depth", "3", "a", "-t", "900"], {"topics": ("a",), "depth": 3, "max_tokens": 900}),
        (["build", "a", "--max-tokens=600", "--format=json"], {"max_tokens": 600, "format": "json"}),
        (["--db", "g.db", "build", "a"], {"db": Path("g.db")}),
        (["--db", "root.db", "build", "a", "--db", "own.db"], {"db": Path("own.db")}),
        (["--plain", "build", "a", "--no-include-fields", "--explain"],
         {"plain": True, "include_fields": False, "explain": True}),
        (["build", "--", "-weird topic", "--depth"], {"topics": ("-weird topic", "--depth")}),
        (["build", "a", "-l", "planning", "--encoding", "o200k_base", "--include-private"],
         {"lens": "planning", "encoding": "o200k_base", "include_private": True}),
    ],
)
def test_plain_arguments_are_read(argv, expected, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    parsed = parse_build(argv)
    assert parsed is not None
    assert {k: parsed[k] for k in expected} == expected


@pytest.mark.parametrize(
    "argv",
    [
        [], ["build"], ["stats"], ["--version", "build", "a"], ["build", "a", "--help"], ["build", "-h"],
        ["build", "a", "--depth", "-1"], ["build", "a", "--max-tokens", "49"], ["build", "a", "-t", "1e3"],
        ["build", "a", "--depth"], ["build", "a", "--unknown"], ["build", "a", "-t4000"],
        ["build", "a", "--explain=yes"], ["build", "-"], ["build", "a", "--lens", "--depth"],
        ["build", "a", "--db", ""], ["lens", "build", "a"], ["--install-completion", "build", "a"],
        ["build", "a", "--depth", "two"], ["build", "a", "-d1"], ["build", "a", "--depth", " 3"],
        ["build", "a", "--depth", "\u0663"], ["build", "a", "--plain=1"], ["--", "build", "a"],
        ["build", "a", "-t=500"], ["--show-completion"], ["--db", "g.db"], ["build", "a", "--depth="],
    ],
)
def test_anything_else_goes_to_typer(argv, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    assert parse_build(argv) is None


def test_db_from_the_environment_unless_a_flag_names_one(monkeypatch):
    monkeypatch.setenv("CTX_DB", "env.db")
    assert parse_build(["build", "a"])["db"] == Path("env.db")
    assert parse_build(["--db", "flag.db", "build", "a"])["db"] == Path("flag.db")
    monkeypatch.setenv("CTX_DB", "")
    assert parse_build(["build", "a"]) is None


def test_shell_completion_goes_to_typer(monkeypatch):
    monkeypatch.setenv("_CTX_COMPLETE", "bash_complete")
    assert parse_build(["build", "a"]) is None


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory, demo_vault) -> Path:
    return imported_graph(tmp_path_factory, demo_vault)


@pytest.mark.parametrize(
    "args",
    [
        ["build", "Project Apollo"],
        ["build", "Project Apollo", "--lens", "planning", "--max-tokens", "700", "--format", "json"],
        ["build", "Project Apollo", "Jane Doe", "--depth=1", "--explain", "--no-include-fields"],
        ["build", "no such thing at all qqq"],
        ["build", "Project Apollo", "--lens", "no-such-lens"],
        ["build", "Project Apollo", "--format", "yaml"],
    ],
)
def test_fast_path_prints_and_exits_as_the_typer_command(args, demo_db, capsys, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    argv = ["--db", str(demo_db), *args]
    fast_code = fast_build(argv)
    assert fast_code is not None
    fast = capsys.readouterr()

    monkeypatch.setattr("sys.argv", ["ctx", *argv])
    from ctx.app import main as typer_main

    with pytest.raises(SystemExit) as typer_exit:
        typer_main()
    slow = capsys.readouterr()
    assert (fast_code, fast.out, fast.err) == (typer_exit.value.code or 0, slow.out, slow.err)
    assert fast.out or fast_code != 0


def test_switch_to_force_typer(monkeypatch):
    monkeypatch.setenv("CTX_NO_FAST_PATH", "1")
    assert fast_build(["build", "a"]) is None


def test_an_unreadable_graph_file_is_left_to_typer(tmp_path, monkeypatch):
    """Typer refuses an existing --db it cannot read as a usage error; the fast path must not
    answer such a run differently (as root, os.access always says readable, hence the stand-in)."""
    monkeypatch.delenv("CTX_DB", raising=False)
    locked = tmp_path / "locked.db"
    locked.write_bytes(b"")
    readable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(locked) else readable(path, mode))
    assert parse_build(["build", "a", "--db", str(locked)]) is None
    assert parse_build(["--db", str(locked), "build", "a", "--db", str(tmp_path / "other.db")]) is None
    monkeypatch.setenv("CTX_DB", str(locked))
    assert parse_build(["build", "a", "--db", str(tmp_path / "other.db")]) is None
    monkeypatch.delenv("CTX_DB")
    assert parse_build(["build", "a", "--db", str(tmp_path / "absent.db")]) is not None
