"""Writers and readers of one graph at once (issue 24): `ctx watch`, `ctx sync`, builds and MCP calls
with `sync: before_build`, while a note's COUNTER goes up every half second.

    python bench/bench_concurrency.py [--seconds 180] [--builders 2] [--notes 300]

Prints, per kind of call: how many, how many failed (exit code not 0, an MCP tool error), p50/p95
latency (wall), and the back-in-time reads: a read whose COUNTER is lower than one a read that
had *finished before it started* already saw (must be 0). Also whether `ctx watch` was still
running at the end, and what it warned about. The load average is printed at the start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or "ctx"
COUNTER = re.compile(r"COUNTER=(\d+)")


@dataclass
class Call:
    kind: str
    started: float
    ended: float
    ok: bool
    counter: int | None
    error: str = ""


@dataclass
class Log:
    calls: list[Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, call: Call) -> None:
        with self.lock:
            self.calls.append(call)


def vault(root: Path, notes: int) -> Path:
    folder = root / "vault"
    folder.mkdir()
    for i in range(notes):
        links = " ".join(f"[[Note {j}]]" for j in (i * 7 % notes, i * 13 % notes) if j != i)
        (folder / f"Note {i}.md").write_text(f"# Note {i}\n\nAbout topic {i % 17}. {links}\n", encoding="utf-8")
    (folder / "Counter.md").write_text("# Counter\n\nCOUNTER=0\n\nSee [[Note 1]].\n", encoding="utf-8")
    return folder


def run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CTX, *argv], env=env, capture_output=True, text=True, timeout=300)


def counter_of(text: str) -> int | None:
    found = COUNTER.findall(text)
    return int(found[0]) if found else None


def writer(folder: Path, stop: threading.Event, written: list[int]) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        (folder / "Counter.md").write_text(f"# Counter\n\nCOUNTER={n}\n\nSee [[Note 1]].\n", encoding="utf-8")
        written.append(n)
        # Another note changes too: syncs have more than one file to read.
        (folder / f"Note {n % 50}.md").write_text(f"# Note {n % 50}\n\nEdited {n}. [[Counter]]\n", encoding="utf-8")
        stop.wait(0.5)


def builder(env: dict[str, str], db: Path, stop: threading.Event, log: Log) -> None:
    while not stop.is_set():
        started = time.monotonic()
        r = run(env, "build", "Counter", "--db", str(db), "--max-tokens", "800", "--depth", "1")
        log.add(Call("build", started, time.monotonic(), r.returncode == 0, counter_of(r.stdout), r.stderr.strip()))


def syncer(env: dict[str, str], db: Path, stop: threading.Event, log: Log) -> None:
    while not stop.is_set():
        started = time.monotonic()
        r = run(env, "sync", "--db", str(db), "--quiet", "--no-embed")
        log.add(Call("sync", started, time.monotonic(), r.returncode == 0, None, r.stderr.strip()))
        stop.wait(3)


def mcp_client(env: dict[str, str], db: Path, cwd: Path, stop: threading.Event, log: Log) -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=CTX, args=["mcp", "--db", str(db)], env=env, cwd=cwd)

    async def one(client: Client, kind: str, name: str, arguments: dict[str, object]) -> None:
        started = time.monotonic()
        try:
            result = await client.call_tool(name, arguments)
            text = result.content[0].text if result.content else ""
            log.add(Call(kind, started, time.monotonic(), not result.is_error, counter_of(text),
                         text if result.is_error else ""))
        except Exception as exc:  # noqa: BLE001 - a failed call is what is counted
            log.add(Call(kind, started, time.monotonic(), False, None, repr(exc)))

    async def main() -> None:
        with (cwd / "mcp-stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
                while not stop.is_set():
                    # Two calls at once: a context and a search, as two agents would.
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(one, client, "mcp context", "context", {"topic": "Counter", "max_tokens": 800, "depth": 1})
                        tg.start_soon(one, client, "mcp search", "search", {"query": "COUNTER", "limit": 3})

    anyio.run(main)


def back_in_time(calls: list[Call]) -> int:
    """Reads whose COUNTER is below the highest one seen by a read that ended before they began."""
    reads = sorted((c for c in calls if c.counter is not None), key=lambda c: c.started)
    finished = sorted(reads, key=lambda c: c.ended)
    count, best, i = 0, -1, 0
    for read in reads:
        while i < len(finished) and finished[i].ended < read.started:
            best = max(best, finished[i].counter or 0)
            i += 1
        if read.counter is not None and read.counter < best:
            count += 1
    return count


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--builders", type=int, default=2)
    parser.add_argument("--notes", type=int, default=300)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    root = Path(tempfile.mkdtemp(prefix="ctx-concurrency-"))
    home = root / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    env = {**os.environ, "CTX_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    env.pop("CTX_DB", None)
    folder = vault(root, args.notes)
    db = root / "graph.db"
    assert run(env, "import", str(folder), "--db", str(db), "--quiet").returncode == 0
    watch_err = (root / "watch-stderr.log").open("w")
    watcher = subprocess.Popen([CTX, "watch", "--db", str(db), "--no-embed"], env=env, stdout=subprocess.DEVNULL,
                               stderr=watch_err)
    stop, log, written = threading.Event(), Log(), []
    threads = [threading.Thread(target=writer, args=(folder, stop, written))]
    threads += [threading.Thread(target=builder, args=(env, db, stop, log)) for _ in range(args.builders)]
    threads += [threading.Thread(target=syncer, args=(env, db, stop, log)),
                threading.Thread(target=mcp_client, args=(env, db, root, stop, log))]
    for t in threads:
        t.start()
    time.sleep(args.seconds)
    stop.set()
    for t in threads:
        t.join(timeout=300)
    alive = watcher.poll() is None
    watcher.terminate()
    watcher.wait(timeout=30)
    watch_err.close()
    warnings = [line for line in (root / "watch-stderr.log").read_text().splitlines() if "warning" in line]
    calls = log.calls
    print(f"{args.seconds:g} s, COUNTER written up to {written[-1] if written else 0}, {len(calls)} calls")
    rows = []
    for kind in sorted({c.kind for c in calls}):
        mine = [c for c in calls if c.kind == kind]
        latencies = [c.ended - c.started for c in mine]
        rows.append({
            "kind": kind, "calls": len(mine), "failed": sum(not c.ok for c in mine),
            "p50_s": round(statistics.median(latencies), 3), "p95_s": round(percentile(latencies, 0.95), 3),
        })
    for row in rows:
        print(f"  {row['kind']:<12} {row['calls']:>5} calls, {row['failed']:>3} failed,"
              f" p50 {row['p50_s']:.3f} s, p95 {row['p95_s']:.3f} s")
    for failed in [c for c in calls if not c.ok][:5]:
        print(f"  failed {failed.kind}: {failed.error[:300]}")
    reads = [c for c in calls if c.counter is not None]
    print(f"back-in-time reads: {back_in_time(calls)} of {len(reads)} reads that saw COUNTER")
    print(f"ctx watch still running at the end: {alive}; its warnings: {len(warnings)}")
    for line in warnings[:5]:
        print(f"  {line}")
    print(f"load average at end: {os.getloadavg()}")
    print(json.dumps({"rows": rows, "back_in_time": back_in_time(calls), "watch_alive": alive}))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
