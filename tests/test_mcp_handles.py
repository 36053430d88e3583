"""The MCP server hands calls its first connection whenever it is free: what a warm process keeps
is per connection (``warm_state``), and its warm-up read every node's details on that one."""

from __future__ import annotations

import shutil

from conftest import FIXTURES

from ctx import Graph
from ctx.mcp_server import CtxTools


def test_calls_take_the_first_connection_when_it_is_free(tmp_path):
    shutil.copytree(FIXTURES / "demo-vault", tmp_path / "vault")
    with Graph.open(tmp_path / "g.db", create=True) as graph:
        graph.import_path(tmp_path / "vault")
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
