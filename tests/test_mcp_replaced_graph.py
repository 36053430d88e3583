"""A graph file replaced under a running `ctx mcp` -- copied over with `cp` (same inode, other
bytes) or moved into place with `os.replace` (another inode) while the old graph's `-wal` file
stays beside it -- is read afresh on the next call: the new graph's answers, never a mix of the
two (a search finding nothing, "vtable constructor failed: nodes_fts", "database disk image is
malformed"). Through the MCP SDK's own stdio client, as an agent runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp", reason="the MCP SDK's client is the mcp extra")

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx") or "ctx"


def _vault(folder: Path, word: str, notes: int, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(notes):
        body = f"# {word} {i}\n\n{word} body {i}. " + f"{word} filler sentence number {i}. " * 40
        (folder / f"{word} note {i}.md").write_text(body + f"\n\n[[{word} note {(i + 1) % notes}]]\n{extra}")
    return folder


def _ctx(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CTX, *args], capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.parametrize("how", ["cp", "os.replace"])
def test_a_replaced_graph_is_read_afresh(how: str, tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    graph, other = tmp_path / "graph.db", tmp_path / "other.db"
    alpha = _vault(tmp_path / "alpha", "alpha", 60)
    _ctx("import", str(alpha), "--db", str(graph), "--quiet")
    _ctx("import", str(_vault(tmp_path / "beta", "beta", 40)), "--db", str(other), "--quiet")
    expected = {
        "search beta": _ctx("search", "beta", "--db", str(other)).stdout,
        "show": _ctx("show", "beta note 3", "--db", str(other)).stdout,
        "context": _ctx("build", "beta note 3", "-t", "400", "--db", str(other)).stdout,
    }
    answers: dict[str, Any] = {}
    errlog = tmp_path / "server.log"

    async def session() -> None:
        params = StdioServerParameters(command=CTX, args=["mcp", "--db", str(graph)])
        with errlog.open("w") as log:
            async with Client(stdio_client(params, errlog=log), read_timeout_seconds=120) as client:
                assert "alpha note 1" in (await client.call_tool("search", {"query": "alpha"})).content[0].text
                async with anyio.create_task_group() as group:  # several pooled connections open
                    for i in range(4):
                        group.start_soon(client.call_tool, "context", {"topic": f"alpha note {i}", "max_tokens": 300})
                # An import meanwhile: the WAL now holds pages of this (old) graph.
                _vault(alpha, "alpha", 60, extra="edited\n")
                await anyio.to_thread.run_sync(lambda: _ctx("import", str(alpha), "--db", str(graph), "--quiet"))
                wal = Path(f"{graph}-wal")
                assert wal.exists() and wal.stat().st_size > 0
                inode = graph.stat().st_ino
                if how == "cp":
                    subprocess.run(["cp", str(other), str(graph)], check=True)
                    assert graph.stat().st_ino == inode
                else:
                    shutil.copyfile(other, tmp_path / "incoming.db")
                    os.replace(tmp_path / "incoming.db", graph)
                    assert graph.stat().st_ino != inode
                assert wal.exists()  # the old graph's WAL stays beside the new file
                # A search first: on the mixed pages it answered "no matches", with no error.
                answers["search beta"] = await client.call_tool("search", {"query": "beta"})
                answers["search alpha"] = await client.call_tool("search", {"query": "alpha"})
                answers["show"] = await client.call_tool("show", {"node": "beta note 3"})
                answers["context"] = await client.call_tool("context", {"topic": "beta note 3", "max_tokens": 400})

    anyio.run(session)
    for name, result in answers.items():
        assert not result.is_error or name == "search alpha", (name, result.content[0].text)
    for name, text in expected.items():
        assert answers[name].content[0].text == text, name
    assert answers["search alpha"].content[0].text == "no matches for 'alpha'\n"
    assert "Traceback" not in errlog.read_text()
    # The copy on disk was not mixed with the old graph's log either (the server's connections
    # to the old graph were closed without copying that log into the file).
    assert _ctx("search", "beta", "--db", str(graph)).stdout == expected["search beta"]
    assert _ctx("search", "alpha", "--db", str(graph)).stdout == "no matches for 'alpha'\n"


HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT count(*) FROM nodes").fetchone()
print("open", flush=True)
sys.stdin.read()
"""


def test_a_graph_replaced_while_another_process_reads_it_is_a_one_line_error(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    graph, other = tmp_path / "graph.db", tmp_path / "other.db"
    _ctx("import", str(_vault(tmp_path / "alpha", "alpha", 30)), "--db", str(graph), "--quiet")
    _ctx("import", str(_vault(tmp_path / "beta", "beta", 20)), "--db", str(other), "--quiet")
    texts: list[str] = []

    async def session() -> None:
        params = StdioServerParameters(command=CTX, args=["mcp", "--db", str(graph)])
        async with Client(params, read_timeout_seconds=120) as client:
            assert not (await client.call_tool("search", {"query": "alpha"})).is_error
            holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(graph)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
            try:
                assert holder.stdout is not None and holder.stdout.readline() == "open\n"
                subprocess.run(["cp", str(other), str(graph)], check=True)
                for _ in range(2):
                    result = await client.call_tool("search", {"query": "beta"})
                    assert result.is_error
                    texts.append(result.content[0].text)
            finally:
                holder.communicate("", timeout=60)

    anyio.run(session)
    for text in texts:
        assert len(text.splitlines()) == 1 and text.startswith("ctx: error: ")
        assert "was replaced while another process had the graph open" in text


def test_a_connection_closed_without_checkpoint_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    """What the server's abandoned connections rely on: SQLite's close-time checkpoint skipped
    (Python 3.12's setconfig, or sqlite3_db_config through ctypes on 3.11)."""
    from ctx.store.db import close_without_checkpoint, connect

    graph = tmp_path / "graph.db"
    _ctx("import", str(_vault(tmp_path / "alpha", "alpha", 5)), "--db", str(graph), "--quiet")
    before = graph.read_bytes()
    conn = connect(graph)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', 'written')")
    assert close_without_checkpoint(conn)
    assert graph.read_bytes() == before  # nothing copied into the file
    assert Path(f"{graph}-wal").stat().st_size > 0  # the commit is still in the log
    conn = connect(graph)
    assert conn.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone()[0] == "written"
    conn.close()  # an ordinary last close: the log is copied in and removed
    assert not Path(f"{graph}-wal").exists() and graph.read_bytes() != before
