"""The installed `ctx` console script answers `ctx build` through its fast path (no Typer) exactly
as through the Typer command: same stdout bytes, same stderr bytes, same exit code, over many
argument sets, graph locations, config files and environments. Each case runs twice as a real
process, once as users run it and once with CTX_NO_FAST_PATH=1 (the Typer command)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ctx.commands.build_argv import parse_build

from conftest import imported_graph

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    fast: bool  # whether the fast path takes it (else it goes to Typer either way)
    home: str = "plain"  # which CTX_HOME (config folder) the run gets
    cwd: str = "tmp"
    env: dict[str, str] = field(default_factory=dict)


DB = "{db}"  # placeholders, filled in by the fixture
LENS_FILE = "{lens_file}"
BAD_LENS = "{bad_lens}"
FRESH_DB = "{fresh_db}"
NOT_A_GRAPH = "{not_a_graph}"
MISSING = "{missing}"

CASES = [
    Case("id topic", ("build", "Project Apollo", "--db", DB), True),
    Case("db before build", ("--db", DB, "build", "Project Apollo"), True),
    Case("db= before build", ("--db=" + DB, "--plain", "build", "Jane Doe", "--depth", "1"), True),
    Case("lens budget json", ("build", "Project Apollo", "--lens", "planning", "--max-tokens", "700",
                              "--format", "json", "--db", DB), True),
    Case("several topics explain", ("build", "Project Apollo", "Jane Doe", "--depth=1", "--explain",
                                    "--no-include-fields", "--db", DB), True),
    Case("question, auto lens", ("build", "what blocks the launch?", "--db", DB), True),
    Case("question json", ("build", "who decided on the database?", "-f", "json", "-t", "1500", "--db", DB), True),
    Case("not found", ("build", "no such thing at all qqq", "--db", DB), True),
    Case("misspelt title", ("build", "Projct Apolo", "--db", DB), True),
    Case("unknown lens", ("build", "Project Apollo", "--lens", "plannin", "--db", DB), True),
    Case("bad format", ("build", "Project Apollo", "--format", "yaml", "--db", DB), True),
    Case("other encoding", ("build", "Project Apollo", "--encoding", "o200k_base", "--db", DB), True),
    Case("unknown encoding", ("build", "Project Apollo", "--encoding", "nope", "--db", DB), True),
    Case("topic after --", ("build", "--db", DB, "--", "-weird topic", "--depth"), True),
    Case("smallest budget", ("build", "Project Apollo", "-t", "50", "-f", "json", "-d", "0", "--db", DB), True),
    Case("summary-first budget", ("build", "Project Apollo", "-t", "300", "--db", DB), True),
    Case("depth over the lens cap", ("build", "Project Apollo", "-d", "9", "-l", "claims", "--db", DB), True),
    Case("private and fields", ("build", "Project Apollo", "--include-private", "--include-fields",
                                "--db", DB), True),
    Case("repeated options", ("build", "Project Apollo", "-t", "900", "--max-tokens", "1200", "--no-include-fields",
                              "--include-fields", "--db", DB), True),
    Case("lens file", ("build", "Project Apollo", "--lens", LENS_FILE, "--db", DB), True),
    Case("invalid lens file", ("build", "Project Apollo", "--lens", BAD_LENS, "--db", DB), True),
    Case("no graph there", ("build", "Project Apollo", "--db", MISSING), True),
    Case("not a graph", ("build", "Project Apollo", "--db", NOT_A_GRAPH), True),
    Case("graph is a folder", ("build", "Project Apollo", "--db", "{tmp}"), True),
    Case("CTX_DB", ("build", "Project Apollo"), True, env={"CTX_DB": DB}),
    Case("flag over CTX_DB", ("build", "Project Apollo", "--db", DB), True, env={"CTX_DB": MISSING}),
    Case("root flag over CTX_DB", ("--db", DB, "build", "Project Apollo"), True, env={"CTX_DB": MISSING}),
    Case("build's flag over the root's", ("--db", MISSING, "build", "Project Apollo", "--db", DB), True),
    Case("config defaults and graph", ("build", "Project Apollo"), True, home="config"),
    Case("flags over config", ("build", "Project Apollo", "--lens", "general", "-t", "2000", "--encoding",
                               "cl100k_base", "--db", DB), True, home="config"),
    Case("invalid config", ("build", "Project Apollo", "--db", DB), True, home="bad"),
    Case("project graph and config", ("build", "Project Apollo"), True, cwd="project"),
    Case("project over user config", ("build", "Jane Doe", "-d", "1"), True, home="config", cwd="project"),
    Case("freshness check", ("build", "Project Apollo", "--db", FRESH_DB), True, home="fresh"),
    Case("ascii stdout", ("build", "Project Apollo", "-t", "600", "--db", DB), True,
         env={"PYTHONIOENCODING": "ascii"}),
    Case("C locale", ("build", "what blocks the launch?", "--db", DB), True, env={"LC_ALL": "C"}),
    # Two that go to Typer either way (test_fast_build.py checks many more in process).
    Case("help", ("build", "--help"), False),
    Case("negative depth", ("build", "Project Apollo", "--depth", "-1", "--db", DB), False),
]


@dataclass(frozen=True)
class Run:
    code: int
    out: bytes
    err: bytes


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, demo_vault: Path) -> dict[str, Path]:
    """Graphs, lens files and config folders the cases name."""
    assert CTX, "the ctx console script is installed with the package"
    root = tmp_path_factory.mktemp("fastcli")
    db = imported_graph(tmp_path_factory, demo_vault)
    lens_file = root / "my-lens.yaml"
    lens_file.write_text("name: mine\ndescription: a lens of my own\ndepth: 1\nedges:\n  link: {direction: both, weight: 2}\n")
    bad_lens = root / "bad-lens.yaml"
    bad_lens.write_text("name: bad\nedges: 7\nscoring: {weights: nope}\n")
    not_a_graph = root / "notes.txt"
    not_a_graph.write_text("not a graph\n")

    homes = {name: root / "homes" / name for name in ("plain", "config", "bad", "fresh")}
    for home in homes.values():
        home.mkdir(parents=True)
    (homes["config"] / "config.yaml").write_text(
        f"graph: {db}\nbuild:\n  lens: planning\n  max_tokens: 900\n  encoding: cl100k_base\n")
    (homes["bad"] / "config.yaml").write_text("build:\n  budget: 7\n")
    (homes["fresh"] / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n")

    vault = root / "vault"
    shutil.copytree(demo_vault, vault)
    fresh_db = root / "fresh.db"
    subprocess.run([CTX, "import", str(vault), "--db", str(fresh_db)], check=True, capture_output=True,
                   env=_base_env(root, homes["plain"]))

    project = root / "project"
    (project / ".ctx").mkdir(parents=True)
    shutil.copy(db, project / ".ctx" / "graph.db")
    (project / ".ctx" / "config.yaml").write_text("build:\n  max_tokens: 1200\n  lens: general\n")
    (project / "sub").mkdir()
    return {"db": db, "lens_file": lens_file, "bad_lens": bad_lens, "fresh_db": fresh_db,
            "not_a_graph": not_a_graph, "missing": root / "nowhere" / "graph.db", "tmp": root,
            "project": project / "sub", **{f"home:{k}": v for k, v in homes.items()}}


def _base_env(root: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CTX_", "XDG_", "_CTX_")) and k not in ("LC_ALL", "PYTHONIOENCODING")}
    env.update({"HOME": str(root / "user"), "CTX_HOME": str(home),
                "CTX_CACHE_DIR": str(root / "cache"), "HF_HUB_OFFLINE": "1"})
    return env


def _fill(text: str, world: dict[str, Path]) -> str:
    return text.format(**{k: v for k, v in world.items() if ":" not in k})


def _run(case: Case, world: dict[str, Path], *, typer: bool) -> Run:
    env = _base_env(world["tmp"], world[f"home:{case.home}"])
    env.update({k: _fill(v, world) for k, v in case.env.items()})
    if typer:
        env["CTX_NO_FAST_PATH"] = "1"
    cwd = world["project"] if case.cwd == "project" else world["tmp"]
    proc = subprocess.run([CTX, *(_fill(a, world) for a in case.argv)], capture_output=True, env=env,
                          cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def runs(world: dict[str, Path]) -> dict[str, tuple[Run, Run]]:
    """Every case both ways, a few processes at a time (each mostly waits on its start-up)."""
    # The first process of a cache folder stores the tokenizer's cache; the rest read it.
    _run(CASES[0], world, typer=False)
    jobs = [(case, typer) for case in CASES for typer in (False, True)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        done = list(pool.map(lambda job: _run(job[0], world, typer=job[1]), jobs))
    return {case.name: (done[2 * i], done[2 * i + 1]) for i, case in enumerate(CASES)}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_path_answers_exactly_as_the_typer_command(case: Case, runs, world, monkeypatch):
    fast, typer = runs[case.name]
    assert fast == typer
    assert b"Traceback" not in fast.err
    if fast.code == 0:
        assert fast.out  # a context was printed (not two empty failures)
    # Whether this argument set really took the fast path: the same decision, in process.
    for name in [k for k in os.environ if k.startswith(("CTX_", "_CTX_"))]:
        monkeypatch.delenv(name)
    for key, value in case.env.items():
        monkeypatch.setenv(key, _fill(value, world))
    assert (parse_build([_fill(a, world) for a in case.argv]) is not None) == case.fast


def test_the_cases_cover_every_outcome(runs):
    codes = {fast.code for fast, _ in runs.values()}
    assert {0, 1, 2, 3} <= codes
    assert sum(1 for case in CASES if case.fast and runs[case.name][0].code == 0) >= 20


def test_config_defaults_reach_the_fast_path(runs):
    """The user's config (lens planning, 900 tokens, its graph) and the project's (general, 1,200
    tokens, its own .ctx/graph.db) are what the fast path's header reports."""
    user, _ = runs["config defaults and graph"]
    assert user.code == 0 and b"lens: planning" in user.out and b"/900" in user.out
    project, _ = runs["project graph and config"]
    assert project.code == 0 and b"lens: general" in project.out and b"/1200" in project.out


def test_the_fast_exit_leaves_the_graph_closed(world, tmp_path):
    """The fast path leaves without finalising the interpreter; the graph was closed before, so
    SQLite removed its -wal and -shm files as on any ordinary exit."""
    graph = tmp_path / "graph.db"
    shutil.copy(world["db"], graph)
    env = _base_env(world["tmp"], world["home:plain"])
    proc = subprocess.run([CTX, "build", "Project Apollo", "--db", str(graph)], capture_output=True, env=env)
    assert proc.returncode == 0 and proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.db"]


def test_a_closed_pipe_ends_both_paths_alike(world):
    script = f"'{CTX}' build 'Project Apollo' --max-tokens 8000 --db '{world['db']}' | head -c 10; echo \" ${{PIPESTATUS[0]}}\""
    outcomes = []
    for typer in (False, True):
        env = _base_env(world["tmp"], world["home:plain"])
        if typer:
            env["CTX_NO_FAST_PATH"] = "1"
        proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
        outcomes.append((proc.stdout, proc.stderr))
    assert outcomes[0] == outcomes[1] == ("# Context: 0\n", "")
