"""MCP start-up to first answer, measured the way an agent starts the server.

    python bench/bench_mcp_startup.py                 # dwarves-brain from ../shared, else the demo vault
    python bench/bench_mcp_startup.py --db graph.db --topic "Project Apollo" --runs 10

The command and arguments come from `ctx mcp --print-config --format json` (what a user pastes into
their agent's config), the server is spawned and spoken to by the MCP SDK's own stdio client, and
each run times one session from spawn to the first `context` answer (handshake included), then
closes it. Reported: the median and range of those wall times over ``--runs`` sessions, the median
CPU time (user + sys) of the server processes (from the children's rusage), and the load average
before and after, since this machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CTX_SHARED_DIR", REPO.parent / "shared"))
DWARVES = SHARED / "corpora" / "obsidian-dwarves-brain"
CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx") or "ctx"


def server_command(db: Path) -> tuple[str, list[str]]:
    """The command and arguments `ctx mcp --print-config` tells an agent to run."""
    out = subprocess.run([CTX, "mcp", "--print-config", "--format", "json", "--db", str(db)],
                         capture_output=True, text=True, check=True)
    server = json.loads(out.stdout)["mcpServers"]["ctx"]
    return server["command"], list(server["args"])


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def one_session(command: str, args: list[str], topic: str, max_tokens: int) -> tuple[float, str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    started = time.perf_counter()
    async with Client(StdioServerParameters(command=command, args=args), read_timeout_seconds=120) as client:
        result = await client.call_tool("context", {"topic": topic, "max_tokens": max_tokens})
        elapsed = time.perf_counter() - started
        if result.is_error:
            raise SystemExit(f"context {topic!r} failed: {result.content[0].text}")
        return elapsed, result.content[0].text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="an existing graph (default: import a vault into a temporary one)")
    parser.add_argument("--source", type=Path, help="vault to import (default: dwarves-brain, else fixtures/demo-vault)")
    parser.add_argument("--topic", help="the first call's topic (default: the first note's title)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=2000)
    options = parser.parse_args()
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        db = options.db
        if db is None:
            source = options.source or (DWARVES if DWARVES.exists() else REPO / "fixtures" / "demo-vault")
            db = Path(tmp) / "graph.db"
            subprocess.run([CTX, "import", str(source), "--db", str(db), "--quiet"], check=True, capture_output=True)
        topic = options.topic
        if topic is None:
            import sqlite3

            conn = sqlite3.connect(db)
            topic = conn.execute("SELECT title FROM nodes WHERE type != 'tag' ORDER BY id LIMIT 1").fetchone()[0]
            conn.close()
        command, args = server_command(db)
        load_before = os.getloadavg()
        walls, cpus = [], []
        for _ in range(options.runs):
            cpu = children_cpu()
            wall, _text = anyio.run(one_session, command, args, topic, options.max_tokens)
            walls.append(wall)
            cpus.append(children_cpu() - cpu)
        load_after = os.getloadavg()
    report = {
        "command": [command, *args],
        "topic": topic,
        "runs": options.runs,
        "spawn_to_first_answer_ms": {
            "median": round(statistics.median(walls) * 1000, 1),
            "min": round(min(walls) * 1000, 1),
            "max": round(max(walls) * 1000, 1),
        },
        "server_cpu_ms_median": round(statistics.median(cpus) * 1000, 1),
        "load_average_1m": {"before": round(load_before[0], 2), "after": round(load_after[0], 2)},
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
