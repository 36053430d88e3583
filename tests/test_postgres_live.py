"""The team graph's long-running and model-backed paths on a real PostgreSQL (``pg_server``):
``ctx embed`` with the real model, ``ctx watch`` keeping a database fresh while notes change,
and a live ``ctx mcp`` session driven by the MCP SDK's own stdio client. Each answer is checked
against the same sources on SQLite or against the CLI on the same database, never against a
copy of an earlier run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.store.postgres import db as pgdb  # noqa: E402
from test_postgres_engine import _team_vault  # noqa: E402

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


# ---------------------------------------------------------------------------------------------
# ctx embed: the real model's vectors into pgvector, the same as SQLite stores


def test_embed_on_postgres_stores_the_vectors_sqlite_stores_and_builds_use_them(pg_url, tmp_path, run_cli):
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    import numpy as np

    vault = _team_vault(tmp_path)
    lite = tmp_path / "g.db"
    for target in (lite, pg_url):
        assert run_cli("import", str(vault), db=target).exit_code == 0  # type: ignore[arg-type]
    reports = []
    for target in (lite, pg_url):
        done = run_cli("embed", "--output", "json", "--quiet", db=target)  # type: ignore[arg-type]
        assert done.exit_code == 0, done.stderr
        reports.append(json.loads(done.stdout))
    a, b = reports
    assert a["embedded"] == b["embedded"] > 0 and a["passages_embedded"] == b["passages_embedded"] > 0
    assert a["dim"] == b["dim"] == 384
    # Every node has a fresh vector, on both engines; a second run has nothing to do.
    for target in (lite, pg_url):
        stats = json.loads(run_cli("stats", "--format", "json", db=target).stdout)  # type: ignore[arg-type]
        coverage = stats["embeddings"]
        assert coverage["fresh"] == coverage["nodes"] > 0 and coverage["stale"] == coverage["missing"] == 0
        again = json.loads(run_cli("embed", "--output", "json", "--quiet", db=target).stdout)  # type: ignore[arg-type]
        assert again["embedded"] == 0 and again["passages_embedded"] == 0
    with Graph.open(lite, include_private=True) as g1, Graph.open(pg_url, include_private=True) as g2:
        model = g1.reader.active_model()
        assert model is not None and g2.reader.active_model() == model
        ids1, m1 = g1.reader.vector_matrix(model)
        ids2, m2 = g2.reader.vector_matrix(model)
        # The same texts through the same model, in the same order: the same float32 numbers,
        # up to the batch's arithmetic.
        assert ids1 == ids2 and m1.shape == m2.shape and np.allclose(m1, m2, atol=1e-5)
        p1, n1, v1 = g1.reader.passage_vector_matrix(model)
        p2, n2, v2 = g2.reader.passage_vector_matrix(model)
        assert p1 == p2 and n1 == n2 and np.allclose(v1, v2, atol=1e-5)
    # A build that scores by similarity to the seeds' vectors reads them back on both engines.
    with Graph.open(lite) as g1, Graph.open(pg_url) as g2:
        one = json.loads(g1.build("Alpha", lens="research", format="json", max_tokens=1500).text)
        two = json.loads(g2.build("Alpha", lens="research", format="json", max_tokens=1500).text)
        assert [n["id"] for n in one["nodes"]] == [n["id"] for n in two["nodes"]]
        assert one["meta"]["freshness"]["vectors"] == two["meta"]["freshness"]["vectors"]
        # A free-text build embeds the question and reaches the note that answers it.
        found = g2.build("who reviews salaries of the launch team", format="json", max_tokens=1500)
        assert found.found and "Secret" not in {n["id"] for n in json.loads(found.text)["nodes"]}


def test_the_first_stage_on_postgres_answers_by_candidates_as_sqlite_does(pg_url, tmp_path, run_cli):
    """`ctx embed --fast` (static vectors only), then a question: its candidates get the model's
    vectors, stored in pgvector by content hash, and the answer is SQLite's."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    from ctx.semantic import first_stage, two_stage

    vault = _team_vault(tmp_path)
    lite = tmp_path / "g.db"
    reports = []
    for target in (lite, pg_url):
        assert run_cli("import", str(vault), db=target).exit_code == 0  # type: ignore[arg-type]
        done = run_cli("embed", "--fast", "--output", "json", "--quiet", db=target)  # type: ignore[arg-type]
        assert done.exit_code == 0, done.stderr
        reports.append(json.loads(done.stdout))
    a, b = reports
    assert a["static_passages"] == b["static_passages"] > 0 and a["passages_embedded"] == b["passages_embedded"] == 0
    question = "who reviews salaries of the launch team"
    answers, embedded = [], []
    for target in (lite, pg_url):
        with Graph.open(target) as g:
            model = g.reader.active_model()
            assert g.reader.setting(first_stage.SETTING) == first_stage.name_for(str(model))
            # Every passage has its static vector: the graph is not stale (freshness counts these).
            assert g.reader.nodes_without_static_vectors(first_stage.name_for(str(model))) == 0
            assert g.reader.nodes_without_static_vectors("a model nothing was embedded with") > 0
            found = g.build(question, format="json", max_tokens=1500)
            embedded.append(two_stage.LAST["embedded"])
            answers.append(json.loads(found.text))
            assert found.found and "Secret" not in {n["id"] for n in answers[-1]["nodes"]}
            _, _, stored = g.reader.passage_vector_matrix(str(model))
            assert len(stored) == embedded[-1] > 0  # the candidates', kept
    assert embedded[0] == embedded[1]
    assert [n["id"] for n in answers[0]["nodes"]][:3] == [n["id"] for n in answers[1]["nodes"]][:3]


# ---------------------------------------------------------------------------------------------
# ctx watch: a database URL kept fresh while the notes change


class _Watcher:
    def __init__(self, url: str) -> None:
        from ctx.watch import watch

        self.reports: list[object] = []
        self.problems: list[str] = []
        self.cond = threading.Condition()
        self.stop = threading.Event()
        self.thread = threading.Thread(
            target=watch, args=(url,),
            kwargs={"on_sync": self._note(self.reports), "on_problem": self._note(self.problems),
                    "stop_event": self.stop, "debounce_ms": 100, "embed": False},
        )

    def _note(self, into: list[Any]):  # type: ignore[no-untyped-def]
        def add(item: Any) -> None:
            with self.cond:
                into.append(item)
                self.cond.notify_all()

        return add

    def wait(self, predicate, timeout: float = 20) -> bool:  # type: ignore[no-untyped-def]
        with self.cond:
            return self.cond.wait_for(predicate, timeout=timeout)

    def until(self, predicate, edit, timeout: float = 40) -> bool:  # type: ignore[no-untyped-def]
        """Make ``edit`` (again, in case inotify was not ready) until ``predicate`` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            edit()
            end = time.monotonic() + 3
            while time.monotonic() < end:
                if predicate():
                    return True
                with self.cond:
                    self.cond.wait(timeout=0.2)
        return False

    def __enter__(self) -> _Watcher:
        self.thread.start()
        assert self.wait(lambda: len(self.reports) >= 1), "the first sync never came"
        time.sleep(0.5)  # inotify's watches in place
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


def _body(url: str, node_id: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT body FROM nodes WHERE id = %s", (node_id,)).fetchone()
    return row[0] if row else ""


def test_watch_keeps_a_postgresql_graph_fresh_and_outlives_a_busy_lock(pg_url, tmp_path, monkeypatch):
    pytest.importorskip("watchfiles", reason="ctx watch needs the watch extra")
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "200")
    vault = _team_vault(tmp_path)
    with Graph.open(pg_url, create=True) as graph:
        graph.import_path(vault)
    note = vault / "Beta.md"
    with _Watcher(pg_url) as w:
        # An edit reaches the database.
        assert w.until(lambda: "edited once." in _body(pg_url, "Beta"),
                       lambda: note.write_text("Beta, edited once. [[Alpha]]\n")), w.problems
        # A new note too, linked from an old one.
        new = vault / "Epsilon.md"
        assert w.until(lambda: "Fifth letter" in _body(pg_url, "Epsilon"),
                       lambda: new.write_text("Fifth letter, after [[Delta]].\n")), w.problems
        # Another writer holds the graph's write lock (another machine's sync): the batch is
        # reported, the watcher lives on and syncs on its own once the lock is free.
        holder = psycopg.connect(pg_url)
        try:
            holder.execute("SELECT pg_advisory_xact_lock(%s, %s)", (pgdb.LOCK_CLASS, pgdb.GRAPH_WRITE_LOCK))
            assert w.until(lambda: bool(w.problems), lambda: note.write_text("Beta, edited while locked.\n"))
            assert "not synced" in w.problems[0] and "busy" in w.problems[0] and w.thread.is_alive()
            assert "edited while locked" not in _body(pg_url, "Beta")
        finally:
            holder.rollback()
            holder.close()
        assert w.wait(lambda: "edited while locked" in _body(pg_url, "Beta"), timeout=30)
        assert w.thread.is_alive()
    assert not w.thread.is_alive()
    with Graph.open(pg_url) as graph:
        assert [e.other_id for e in graph.reader.edges_of("Epsilon") if e.type == "link"] == ["Projects/Delta"]


# ---------------------------------------------------------------------------------------------
# ctx mcp: a live session over stdio, the SDK's own client, against the database


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CTX_HOME": str(home / "ctx"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "120"}


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    assert CTX, "the ctx console script is not installed"
    return subprocess.run([CTX, *args], cwd=cwd, env=env, capture_output=True, timeout=120)


def test_a_live_mcp_session_on_postgresql_answers_as_the_cli_does(pg_url, tmp_path):
    pytest.importorskip("mcp", reason="the MCP SDK is an optional extra")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = _env(tmp_path)
    vault = _team_vault(tmp_path)
    assert _cli(env, tmp_path, "import", str(vault), "--db", pg_url, "--quiet").returncode == 0
    calls = [
        ("context", {"topic": "Alpha", "max_tokens": 900}, ["build", "Alpha", "--max-tokens", "900"]),
        ("context", {"topic": "launch risks", "format": "json", "max_tokens": 900},
         ["build", "launch risks", "--format", "json", "--max-tokens", "900"]),
        ("search", {"query": "launch slips"}, ["search", "launch slips"]),
        ("show", {"node": "Bee"}, ["show", "Bee"]),
        ("search", {"query": "Initech"}, ["search", "Initech"]),  # only a private note says it
    ]
    answers: list[list[str]] = []
    printed_out: list[bytes] = []
    later: list[str] = []

    async def scenario(client: Client) -> None:
        listing = await client.list_tools()
        assert {"context", "search", "show"} <= {tool.name for tool in listing.tools}
        for name, arguments, argv in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, result.content
            answers.append([block.text for block in result.content])
            # The CLI on the same graph state, from another process.
            printed = await anyio.to_thread.run_sync(partial(_cli, env, tmp_path, *argv, "--db", pg_url))
            assert printed.returncode == 0, printed.stderr
            printed_out.append(printed.stdout)
        # Several calls at once on the server's one connection.
        async with anyio.create_task_group() as group:
            for topic in ("Alpha", "Beta", "Projects/Delta", "launch"):
                group.start_soon(client.call_tool, "context", {"topic": topic, "max_tokens": 400})
        # An import from another process while the session runs: the next answer has it.
        (vault / "Zeta.md").write_text("Zeta: the zeppelin option for [[Alpha]].\n")
        done = await anyio.to_thread.run_sync(lambda: _cli(env, tmp_path, "import", str(vault), "--db", pg_url, "--quiet"))
        assert done.returncode == 0, done.stderr
        later.append((await client.call_tool("search", {"query": "zeppelin"})).content[0].text)

    params = StdioServerParameters(command=CTX or "ctx", args=["mcp", "--db", pg_url], env=env, cwd=tmp_path)
    errlog_path = tmp_path / "server-stderr.log"

    async def main() -> None:
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
                await scenario(client)

    anyio.run(main)
    assert "Traceback" not in errlog_path.read_text()
    for (name, arguments, _), (text, *_notices), printed in zip(calls, answers, printed_out, strict=True):
        assert text.encode("utf-8") == printed, (name, arguments)
    assert answers[-1][0] == "no matches for 'Initech'\n"
    assert "Zeta" in later[0]


def test_a_sync_into_a_busy_graph_stops_at_once_in_one_line(pg_url, tmp_path, monkeypatch):
    """Another machine is writing: ``ctx sync`` says so once, rather than waiting out the lock
    for each of its sources and calling every one of them failed."""
    from ctx.store.errors import GraphBusyError, is_lock_busy
    from ctx.sync import sync

    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "200")
    first, second = _team_vault(tmp_path / "one"), _team_vault(tmp_path / "two")
    with Graph.open(pg_url, create=True) as graph:
        graph.import_path(first)
        graph.import_path(second)
        (first / "Beta.md").write_text("Beta, changed.\n")
        (second / "Beta.md").write_text("Beta, changed too.\n")
        holder = psycopg.connect(pg_url)
        try:
            holder.execute("SELECT pg_advisory_xact_lock(%s, %s)", (pgdb.LOCK_CLASS, pgdb.GRAPH_WRITE_LOCK))
            with pytest.raises(GraphBusyError, match="is busy: being written by another ctx") as caught:
                sync(graph.store, embed=False)
            assert is_lock_busy(caught.value) and "\n" not in str(caught.value)
        finally:
            holder.rollback()
            holder.close()
        report = sync(graph.store, embed=False)
        assert [s.status for s in report.sources] == ["changed", "changed"]
