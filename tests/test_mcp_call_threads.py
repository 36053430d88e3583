"""`ctx mcp` keeps a call's thread for the next call (``mcp_wire.StdioServer._work``): a real
server process over real pipes, its threads read from /proc. A thread started for each call waited
a scheduler slice (~3.6 ms on this 2-core machine with both cores busy) before it ran; a kept one
is woken. Calls still run apart from the reader and beside each other, every answer the same."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from ctx.mcp_wire import KEPT_CALL_THREADS

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are read from /proc")


def _threads(pid: int) -> set[int]:
    return {int(name) for name in os.listdir(f"/proc/{pid}/task")}


def _settled_threads(pid: int) -> set[int]:
    """The process's threads once none has started or ended for a while (the warm-up thread and
    a call's work after its answer are done)."""
    seen, since = _threads(pid), time.monotonic()
    deadline = since + 30
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = _threads(pid)
        if now != seen:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since > 0.5:
            return seen
    raise AssertionError("the server's threads never settled")


class Server:
    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen([CTX or "ctx", "mcp", "--db", str(db)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ident = 0
        self.send({"method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        self.read()
        self.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.stdin.flush()

    @property
    def stdin(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    def send(self, message: dict[str, Any]) -> int:
        self.ident += 1
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.ident, **message}).encode() + b"\n")
        self.stdin.flush()
        return self.ident

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the server closed its stdout"
        return json.loads(line)

    def context(self, topic: str, **arguments: Any) -> int:
        return self.send({"method": "tools/call", "params": {
            "name": "context", "arguments": {"topic": topic, "max_tokens": 400, **arguments}}})

    def close(self) -> str:
        self.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


def _cli(db: Path, topic: str, depth: int) -> bytes:
    return subprocess.run([CTX or "ctx", "build", topic, "-t", "400", "-d", str(depth), "--db", str(db)],
                          capture_output=True, timeout=120, check=True).stdout


def test_calls_one_after_another_run_on_one_kept_thread(demo_db: Path) -> None:
    server = Server(demo_db)
    try:
        server.context("Project Apollo", depth=1)
        first = server.read()
        after_first = _settled_threads(server.proc.pid)
        # Beside the reader (the main thread) the call's thread is still there, waiting.
        assert len(after_first) == 2 and server.proc.pid in after_first
        answers = {}
        for depth in (2, 3, 1):
            answers[depth] = server.read() if server.context("Project Apollo", depth=depth) else None
            assert _settled_threads(server.proc.pid) == after_first  # no thread started, none ended
    finally:
        log = server.close()
    assert "Traceback" not in log
    assert first["result"]["content"][0]["text"].encode() == _cli(demo_db, "Project Apollo", 1)
    for depth, answer in answers.items():
        assert answer is not None and answer["result"]["content"][0]["text"].encode() == _cli(demo_db, "Project Apollo", depth)


def test_calls_at_once_still_run_beside_each_other_and_few_threads_stay(demo_db: Path) -> None:
    server = Server(demo_db)
    try:
        topics = ["Project Apollo", "Maya Chen", "nobody at all", "Project Apollo", "launch risks", "Maya Chen"]
        sent = {server.context(topic, depth=2): topic for topic in topics}  # all before reading any
        ping = server.send({"method": "ping"})
        replies = {reply["id"]: reply for reply in (server.read() for _ in range(len(sent) + 1))}
        assert replies[ping]["result"] == {}
        threads = _settled_threads(server.proc.pid)
        assert 2 <= len(threads) <= 1 + KEPT_CALL_THREADS  # the reader and the kept call threads
        # A later call is taken by one of the kept threads.
        again = server.context("Project Apollo", depth=2)
        late = server.read()
        assert late["id"] == again
        assert _settled_threads(server.proc.pid) == threads
    finally:
        log = server.close()
    assert "Traceback" not in log
    for ident, topic in sent.items():
        result = replies[ident]["result"]
        if topic == "nobody at all":
            assert result["isError"]
        else:
            assert result["content"][0]["text"].encode() == _cli(demo_db, topic, 2)
    assert late["result"]["content"][0]["text"].encode() == _cli(demo_db, "Project Apollo", 2)
