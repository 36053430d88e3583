"""A call reads the graph's warm state once (``GraphView.one_state``) and the user's settings once
(``config.settings_read_once``); what changes between two calls is seen by the second."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from conftest import FIXTURES

from ctx import Graph
from ctx.assemble import BuildRequest, warm


def _vault_graph(tmp_path: Path) -> tuple[Path, Path, Graph]:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    db = tmp_path / "g.db"
    graph = Graph.open(db, create=True)
    graph.import_path(vault)
    return vault, db, graph


def _state_reads(conn) -> list[str]:
    """Each statement that reads the content counter, as SQLite runs it on ``conn``."""
    seen: list[str] = []
    conn.set_trace_callback(lambda sql: seen.append(sql) if "content_version" in sql else None)
    return seen


def test_one_state_reads_the_graph_once_and_sees_its_own_writes(tmp_path):
    vault, db, graph = _vault_graph(tmp_path)
    reader = graph.store.reader()
    reads = _state_reads(reader.conn)
    outside = reader.warm_state()
    assert reader.warm_state() == outside and len(reads) == 2  # outside a call: read each time
    with reader.one_state():
        first = reader.warm_state()
        assert first == outside
        assert all(reader.warm_state() == first for _ in range(5))
        assert graph.store.reader(include_private=True).warm_state() == first  # views of one connection
        assert len(reads) == 3
        # Another connection's import is not read within the call ...
        (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nLinked to [[Project Apollo]].\n")
        with Graph.open(db) as other:
            other.import_path(vault)
        assert reader.warm_state() == first and len(reads) == 3
        # ... but a row this connection writes (not a quiet one) is, at once.
        reader.conn.execute("UPDATE nodes SET title = title WHERE id = (SELECT MIN(id) FROM nodes)")
        own = reader.warm_state()
        assert own != first and len(reads) == 4
        assert reader.warm_state() == own and len(reads) == 4
    after = reader.warm_state()
    assert after != first and after[1] != first[1] and len(reads) == 5  # the other import, once out


def test_a_server_call_after_another_connections_import_sees_it(tmp_path, warm_process):
    from ctx.mcp_server import CtxTools

    vault, db, graph = _vault_graph(tmp_path)
    graph.close()
    tools = CtxTools(db)
    before = tools.context("Project Apollo", max_tokens=1500).text
    assert tools.context("Project Apollo", max_tokens=1500).text == before
    (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nLinked to [[Project Apollo]]: cranes.\n")
    with Graph.open(db) as other:
        other.import_path(vault)
    after = tools.context("Project Apollo", max_tokens=1500).text
    assert "Apollo harbour" in after and after != before
    with Graph.open(db) as fresh, warm.paused():
        assert after == fresh.build(BuildRequest(("Project Apollo",), max_tokens=1500)).text


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user"
    user.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("CTX_HOME", str(user))
    monkeypatch.delenv("CTX_DB", raising=False)
    monkeypatch.chdir(project)
    return user / "config.yaml"


def test_settings_edited_between_two_server_calls_are_seen_by_the_second(user_config, demo_db):
    from ctx.mcp_server import CtxTools

    tools = CtxTools(demo_db)

    def meta() -> dict:
        return json.loads(tools.context("Project Apollo", format="json").text)["meta"]

    user_config.write_text("build:\n  lens: planning\n  max_tokens: 1200\n", encoding="utf-8")
    assert (meta()["lens"], meta()["tokens"]["budget"]) == ("planning", 1200)
    user_config.write_text("build:\n  lens: writing\n  max_tokens: 900\n", encoding="utf-8")
    assert (meta()["lens"], meta()["tokens"]["budget"]) == ("writing", 900)
    user_config.unlink()
    assert (meta()["lens"], meta()["tokens"]["budget"]) == ("general", 4000)


def test_settings_are_read_once_within_a_call_and_per_thread(user_config):
    from ctx.config import load_settings, settings_read_once

    user_config.write_text("build:\n  max_tokens: 1200\n", encoding="utf-8")
    with settings_read_once():
        assert load_settings().max_tokens == 1200
        user_config.write_text("build:\n  max_tokens: 900\n", encoding="utf-8")
        with settings_read_once():  # nested: still the call's first answer
            assert load_settings().max_tokens == 1200
        assert load_settings().max_tokens == 1200
        # Another thread's call is its own: it reads the file as it is now.
        seen: list[int | None] = []
        worker = threading.Thread(target=lambda: seen.append(load_settings().max_tokens))
        worker.start()
        worker.join()
        assert seen == [900]
    assert load_settings().max_tokens == 900
    with pytest.raises(RuntimeError), settings_read_once():
        load_settings()
        raise RuntimeError("a call that fails")
    user_config.write_text("build:\n  max_tokens: 700\n", encoding="utf-8")
    with settings_read_once():
        assert load_settings().max_tokens == 700
