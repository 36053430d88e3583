"""Latency of `ctx mcp` tool calls, as an agent sees them: the SDK client, stdio, a real graph.

    python bench/bench_mcp.py                       # dwarves-brain from ../shared/corpora
    python bench/bench_mcp.py --source PATH --format obsidian --runs 20

Imports the source into a temporary database, starts `ctx mcp` in a subprocess and reports:
the session start (spawn + handshake), the first `context` call, then the median (and p90) of
``--runs`` further calls — once repeating the same topic, once over as many distinct topics (the
best-connected notes), so that a result cache, if any, cannot flatter the figure. For reference
it also times `ctx build` as a fresh process per call, which is what the server saves an agent.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO.parent / "shared" / "corpora" / "obsidian-dwarves-brain"
CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx") or "ctx"


def best_connected_titles(db: Path, count: int) -> list[str]:
    """Titles of the notes with the most edges: topics that make the assembler do real work."""
    conn = sqlite3.connect(db)
    rows = conn.execute(
        """
        SELECT n.title, COUNT(*) AS degree FROM nodes n
        JOIN edges e ON e.src = n.id OR e.dst = n.id
        WHERE n.type != 'tag'
        GROUP BY n.id ORDER BY degree DESC, n.id LIMIT ?
        """,
        (count,),
    ).fetchall()
    conn.close()
    return [row[0] for row in rows]


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 1),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))] * 1000, 1),
        "min_ms": round(ordered[0] * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


async def time_session(db: Path, topics: list[str], runs: int, arguments: dict[str, Any]) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=CTX, args=["mcp", "--db", str(db)])
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        session_start = time.perf_counter() - started

        async def call(topic: str) -> float:
            begin = time.perf_counter()
            result = await client.call_tool("context", {"topic": topic, **arguments})
            elapsed = time.perf_counter() - begin
            if result.is_error:
                raise SystemExit(f"context {topic!r} failed: {result.content[0].text}")
            return elapsed

        first = await call(topics[0])
        same = [await call(topics[0]) for _ in range(runs)]
        distinct = [await call(topic) for topic in topics[1 : runs + 1]]
    return {
        "session_start_ms": round(session_start * 1000, 1),
        "first_call_ms": round(first * 1000, 1),
        "same_topic": summary(same),
        "distinct_topics": summary(distinct),
    }


def time_cli(db: Path, topics: list[str], arguments: dict[str, Any]) -> dict[str, float]:
    argv = ["--max-tokens", str(arguments["max_tokens"]), "--depth", str(arguments["depth"])]
    seconds = []
    for topic in topics:
        begin = time.perf_counter()
        subprocess.run([CTX, "build", topic, *argv, "--db", str(db)], capture_output=True, check=True)
        seconds.append(time.perf_counter() - begin)
    return summary(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--format", default="obsidian", help="importer format of --source")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=4000)
    parser.add_argument("--cli-runs", type=int, default=5, help="fresh `ctx build` processes to time")
    options = parser.parse_args()
    if not options.source.exists():
        raise SystemExit(f"{options.source} does not exist (pass --source)")

    import anyio

    arguments = {"depth": options.depth, "max_tokens": options.max_tokens}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "graph.db"
        subprocess.run(
            [CTX, "import", str(options.source), "--format", options.format, "--db", str(db), "--quiet"],
            check=True,
            capture_output=True,
        )
        topics = best_connected_titles(db, options.runs + 1)
        if len(topics) < options.runs + 1:
            raise SystemExit(f"the graph has only {len(topics)} connected notes; lower --runs")
        report: dict[str, Any] = {
            "source": str(options.source),
            "arguments": arguments,
            "runs": options.runs,
            "first_topic": topics[0],
        }
        report["mcp"] = anyio.run(time_session, db, topics, options.runs, arguments)
        report["cli_fresh_process"] = time_cli(db, topics[: options.cli_runs], arguments)
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
