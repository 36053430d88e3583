"""The MCP server's connections: calls take the first whenever it is free, what a warm process keeps
is shared by the pool's connections (``warm_state``, ``share_warm_state``) but not by one that wrote,
and closing waits for the connections in use."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import FIXTURES

from ctx import Graph
from ctx.mcp_server import CtxTools


def _demo_graph(tmp_path: Path) -> Path:
    """The demo vault copied to ``tmp_path/vault`` and imported into ``tmp_path/g.db``."""
    shutil.copytree(FIXTURES / "demo-vault", tmp_path / "vault")
    with Graph.open(tmp_path / "g.db", create=True) as graph:
        graph.import_path(tmp_path / "vault")
    return tmp_path / "g.db"


def test_calls_take_the_first_connection_when_it_is_free(tmp_path):
    _demo_graph(tmp_path)
    tools = CtxTools(tmp_path / "g.db")
    try:
        first = tools._checkout()  # the warm-up's
        other = tools._checkout()  # a call that came meanwhile
        assert first is tools.handle and other is not first
        tools._checkin(first)  # the warm-up ends first, then the call
        tools._checkin(other)
        for _ in range(3):
            handle = tools._checkout()
            assert handle is tools.handle
            tools._checkin(handle)
        assert not tools.context("Project Apollo", depth=1).is_error
    finally:
        tools.close()


def test_a_call_on_another_connection_finds_what_the_first_kept(tmp_path, warm_process, monkeypatch):
    """A call that comes while the warm-up holds the first connection runs on a second; later
    calls run on the first again. What the second call kept (its answer and its pool) serves them:
    once, every first call of a topic made during the warm-up was built again afterwards."""
    from ctx.assemble import pipeline

    _demo_graph(tmp_path)
    tools = CtxTools(tmp_path / "g.db")
    try:
        busy = tools._checkout()  # the warm-up's
        busy.graph()
        first = tools.context("Project Apollo", depth=2, max_tokens=1200)
        assert not first.is_error and len(tools._all) == 2  # built on the second connection
        tools._checkin(busy)

        def walked_again(*args, **kwargs):
            raise AssertionError("what the other connection kept was not used")

        monkeypatch.setattr(pipeline, "collect", walked_again)
        assert tools.context("Project Apollo", depth=2, max_tokens=1200).text == first.text  # the kept answer
        as_json = tools.context("Project Apollo", depth=2, max_tokens=1200, format="json")  # the kept pool
        assert not as_json.is_error and as_json.text.startswith("{")
        readers = [handle.graph().reader for handle in tools._all]
        assert readers[0].warm_state() == readers[1].warm_state()
    finally:
        tools.close()


def test_a_connection_that_wrote_keeps_its_own_state(tmp_path, warm_process):
    """Connections of one family share a state only while neither changed rows itself; and two
    servers (two families) never share one, even on one file."""
    from ctx.mcp_server import _Family

    _demo_graph(tmp_path)
    vault = tmp_path / "vault"
    family = _Family()
    writer, reader = Graph.open(tmp_path / "g.db"), Graph.open(tmp_path / "g.db")
    other_server = Graph.open(tmp_path / "g.db")
    try:
        for graph in (writer, reader):
            graph.store.share_warm_state(family)
        other_server.store.share_warm_state(_Family())
        before = reader.reader.warm_state()
        assert writer.reader.warm_state() == before != other_server.reader.warm_state()
        (vault / "Apollo harbour.md").write_text("# Apollo harbour\n\nLinked to [[Project Apollo]]: cranes.\n")
        writer.import_path(vault)
        after = reader.reader.warm_state()
        assert after != before and writer.reader.warm_state() not in (after, before)
        assert "Apollo harbour" in reader.build("Project Apollo", max_tokens=1500).text
    finally:
        for graph in (writer, reader, other_server):
            graph.close()


def test_closing_waits_for_a_connection_in_use(tmp_path):
    """The server closes its connections when the client goes. One the warm-up (or a call) is
    still reading through must not be closed under it -- that crashed `ctx mcp` with SIGSEGV when
    stdin closed during the warm-up: close waits until it comes back."""
    import threading

    _demo_graph(tmp_path)
    tools = CtxTools(tmp_path / "g.db")
    busy = tools._checkout()  # the warm-up's, reading
    reader = busy.graph().reader
    closing = threading.Thread(target=tools.close)
    closing.start()
    closing.join(timeout=0.5)
    assert closing.is_alive()  # still waiting for the reader
    assert busy.is_open and reader.stats()["nodes"] > 0  # and the connection still reads
    tools._checkin(busy)
    closing.join(timeout=10)
    assert not closing.is_alive() and not busy.is_open


def test_closing_leaves_a_connection_still_in_use_after_the_wait_open(tmp_path):
    _demo_graph(tmp_path)
    tools = CtxTools(tmp_path / "g.db")
    busy = tools._checkout()
    busy.graph()
    tools.close(wait=0.1)
    assert busy.is_open  # never closed under its reader; the process's exit releases it
    tools._checkin(busy)
    tools.close()
    assert not busy.is_open


def test_a_server_that_dies_of_a_fatal_signal_says_where_on_stderr(tmp_path):
    """`ctx mcp` runs threads over C code; were one to crash it (a SIGSEGV), its log names every
    thread's Python line instead of the empty stderr a CI run once showed."""
    import json
    import signal
    import subprocess
    import sys

    _demo_graph(tmp_path)
    ctx = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")
    assert ctx
    proc = subprocess.Popen([ctx, "mcp", "--db", str(tmp_path / "g.db")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2025-11-25"}}).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1  # serving
    proc.send_signal(signal.SIGSEGV)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGSEGV
    text = err.decode(errors="replace")
    assert "Fatal Python error: Segmentation fault" in text and "most recent call first" in text
