"""Where a warm MCP call's wall time goes: each `context` call of bench_scale's sequence stamped in
the served process and in the client, on one clock (``time.perf_counter`` is CLOCK_MONOTONIC in
both processes).

    python bench/bench_mcp_stamps.py --size 100k               # the SDK's client, as bench_scale
    python bench/bench_mcp_stamps.py --size 100k --client raw  # a minimal client: one JSON line each way
    python bench/bench_mcp_stamps.py --size 100k --pause 50    # 50 ms (untimed) before each call
    python bench/bench_mcp_stamps.py --size 100k --detail      # + each after-answer job, objects unfrozen

The server is `ctx mcp` run by this script (``--serve``) with timers wrapped around the wire's and
the tools' own functions -- nothing else changes, and the stamps are kept in memory and written
when the server ends -- so each call's life reads: request sent -> line read -> call thread
running -> waited for the previous call's work after its answer (``W``) -> build (wall and thread
CPU; its user and system CPU, context switches, page faults and read system calls) -> result
serialised -> written -> client has the result; then that call's own work after the answer (its
manifest, the answer kept for a repeat, then the collection of its objects). The
sequence is bench_scale's ``--mcp-runs 3`` one (the manifest's topics first); the rows are the
new notes and questions. Figures: the median over the row of each part. Never a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import CTX, OUT, build_topics, fresh_series, spread_ids, spread_questions  # noqa: E402

PARTS = (
    ("total", "the client's wall time of the call"),
    ("sent->line", "request sent by the client -> line read by the server"),
    ("line->thread", "-> request parsed, call thread started and running"),
    ("W", "-> waited for the previous call's work after its answer"),
    ("build", "-> the build (wall)"),
    ("build cpu", "the build's thread CPU"),
    ("build user", "the build's thread user CPU (getrusage; sampled at the clock tick: the row's mean)"),
    ("build sys", "the build's thread system CPU (the same, the row's mean)"),
    ("build vcsw", "the build's voluntary context switches (blocked: I/O, locks, the interpreter)"),
    ("build ivcsw", "the build's involuntary context switches (preempted)"),
    ("build minflt", "the build's minor page faults"),
    ("build reads", "the build's read system calls (pages SQLite did not hold)"),
    ("dumps", "the JSON-RPC message serialised (json.dumps, once)"),
    ("to client", "serialised -> the client has the parsed result"),
    ("write back", "serialised -> the server's thread back from write()"),
    ("after", "the call's own work after the answer (jobs, then collection)"),
    ("gc", "of which the collection (warm.after_call)"),
    ("thread cpu", "the call thread's CPU, start to end of its work after the answer"),
    ("bytes", "the JSON-RPC message's size"),
    ("job keep", "the answer kept for a repeat (--detail)"),
    ("job record", "the manifest (--detail)"),
    ("young", "objects not frozen when the collection began (--detail)"),
)
# The kernel splits a thread's CPU into user and system time by sampling at each clock tick (4 ms
# here), so one call's split is 0 or a tick: a row's mean of them is the figure, not its median.
TICK_SAMPLED = {"build user", "build sys"}


def serve(db: str, out: str) -> None:
    """`ctx mcp --db DB` with stamps on each tools/call, written to ``out`` when it ends."""
    import atexit
    import resource
    import signal
    import threading

    import ctx.mcp_server as server
    import ctx.mcp_wire as wire
    from ctx.assemble import warm

    clock, cpu = time.perf_counter, time.thread_time
    records: list[dict[str, float]] = []
    local = threading.local()
    last_line: list[float] = [0.0]

    def write() -> None:
        import resource

        peak = {"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}  # the server's own peak
        Path(out).write_text("".join(json.dumps(r) + "\n" for r in [*records, peak]))

    atexit.register(write)
    signal.signal(signal.SIGTERM, lambda *_: (write(), os._exit(0)))

    def reads() -> int:
        """This thread's read system calls so far (SQLite reads each page it does not hold with one)."""
        with open("/proc/thread-self/io") as io:
            return next(int(line.split()[1]) for line in io if line.startswith("syscr:"))

    original_receive = wire.StdioServer.receive

    def receive(self: Any, line: bytes) -> None:
        last_line[0] = clock()  # the line was just read
        original_receive(self, line)

    def wrap(owner: Any, name: str, before: str | None, after: str | None, with_cpu: bool = False) -> None:
        original = getattr(owner, name)

        def stamped(*args: Any, **kwargs: Any) -> Any:
            s = getattr(local, "s", None)
            if s is not None and before:
                s[before] = clock()
                if with_cpu:
                    s[before + " cpu"] = cpu()
                    s[before + " ru"] = list(resource.getrusage(resource.RUSAGE_THREAD))
                    s[before + " reads"] = reads()
            try:
                return original(*args, **kwargs)
            finally:
                if s is not None and after:
                    s[after] = clock()
                    if with_cpu:
                        s[after + " cpu"] = cpu()
                        s[after + " ru"] = list(resource.getrusage(resource.RUSAGE_THREAD))
                        s[after + " reads"] = reads()

        setattr(owner, name, stamped)

    original_call = wire.StdioServer._call

    def call(self: Any, *args: Any) -> None:
        s = {"line": last_line[0], "thread": clock(), "thread cpu": cpu()}
        local.s = s
        try:
            original_call(self, *args)
        finally:
            s["end"], s["end cpu"] = clock(), cpu()
            local.s = None
            records.append(s)

    def send(self: Any, message: dict[str, Any]) -> None:
        s = getattr(local, "s", None)
        if s is None or "result" not in message:
            return original_send(self, message)
        s["send"] = clock()
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))  # as StdioServer.send
        data = text.encode("utf-8")
        s["dumped"], s["bytes"] = clock(), len(data)
        with self._write_lock:
            self.writer.write(data + b"\n")
            self.writer.flush()
        s["written"] = clock()

    original_send = wire.StdioServer.send
    wire.StdioServer.receive = receive
    wire.StdioServer._call = call
    wire.StdioServer.send = send
    wrap(wire.StdioServer, "_after_reply", "after", "after end")
    wrap(server.CtxApplication, "call_tool", "tool", None)
    original_checkout = server.CtxTools._checkout

    def checkout(self: Any) -> Any:
        s = getattr(local, "s", None)
        if s is not None and "checkout" not in s:
            s["checkout"] = clock()
        return original_checkout(self)

    server.CtxTools._checkout = checkout
    wrap(server.CtxTools, "_context", "build", "built", with_cpu=True)
    wrap(warm, "after_call", "gc", "gc end")
    if os.environ.get("CTX_STAMPS_DETAIL"):  # --detail: what a collection would traverse, the jobs
        import gc

        stamped_after = warm.after_call

        def counted(**kwargs: Any) -> None:
            s = getattr(local, "s", None)
            if s is not None:
                young = gc.get_objects(0) + gc.get_objects(1) + gc.get_objects(2)
                s["young"] = len(young)
                del young
            stamped_after(**kwargs)

        warm.after_call = counted

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "stop" and info["collected"]:
                print(f"call {len(records)}: a collection freed {info}", file=sys.stderr, flush=True)

        gc.callbacks.append(on_gc)
        original_later = warm.later

        def timed_later(job: Any) -> None:
            def timed() -> None:
                s = getattr(local, "s", None)
                t = clock()
                job()
                if s is not None:
                    s["job " + job.__qualname__.split(".")[0]] = (clock() - t) * 1000
            original_later(timed)

        warm.later = timed_later
    sys.argv = ["ctx", "mcp", "--db", db]
    from ctx.entry import main

    main()


def parts(s: dict[str, float], c: dict[str, float]) -> dict[str, float]:
    ms = 1000.0
    return {
        "total": (c["end"] - c["began"]) * ms,
        "sent->line": (s["line"] - c["began"]) * ms,
        "line->thread": (s["thread"] - s["line"]) * ms,
        "W": (s["checkout"] - s["tool"]) * ms,
        "build": (s["built"] - s["build"]) * ms,
        "build cpu": (s["built cpu"] - s["build cpu"]) * ms,
        "build user": (s["built ru"][0] - s["build ru"][0]) * ms,
        "build sys": (s["built ru"][1] - s["build ru"][1]) * ms,
        "build vcsw": s["built ru"][14] - s["build ru"][14],
        "build ivcsw": s["built ru"][15] - s["build ru"][15],
        "build minflt": s["built ru"][6] - s["build ru"][6],
        "build reads": s["built reads"] - s["build reads"],
        "dumps": (s["dumped"] - s["send"]) * ms,
        "to client": (c["end"] - s["dumped"]) * ms,
        "write back": (s["written"] - s["dumped"]) * ms,
        "after": (s["after end"] - s["after"]) * ms,
        "gc": (s["gc end"] - s["gc"]) * ms if "gc" in s else 0.0,
        "thread cpu": (s["end cpu"] - s["thread cpu"]) * ms,
        "bytes": s["bytes"],
        "young": s.get("young", 0),
        "job keep": s.get("job remember_answer", 0.0),
        "job record": s.get("job _run", 0.0),
    }


def requests(db: Path, size: str, runs: int, topics: int, questions: int) -> list[tuple[str, dict[str, Any]]]:
    """bench_scale's MCP sequence: (row, arguments) for each call."""
    manifest = json.loads((OUT / "data" / size / "manifest.json").read_text())
    depths = (1, 2, 3, 5)
    calls = [(f"{name} d{d}", topic, d) for name, topic in build_topics(manifest, "json").items() for d in depths]
    out = [("first", {"topic": calls[0][1], "depth": 1, "max_tokens": 4000})]
    for label, topic, depth in calls:
        out += [(label, {"topic": topic, "depth": depth, "max_tokens": 4000})] * (runs + 1)
    for name, depth, asked in fresh_series(spread_ids(db, topics * 4), spread_questions(db, questions * 4), depths):
        out += [(f"{name} d{depth}", {"topic": topic, "depth": depth, "max_tokens": 4000}) for topic in asked]
    return out


def run_raw(command: list[str], todo: list[tuple[str, dict[str, Any]]], pause: float) -> list[dict[str, Any]]:
    """A minimal client: one JSON line written, one read, ``json.loads``."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=dict(os.environ))
    assert proc.stdin is not None and proc.stdout is not None
    stamps = []

    def rpc(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}})
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    for ident, (label, arguments) in enumerate(todo, start=1):
        if pause:
            time.sleep(pause)
        began = time.perf_counter()
        reply = rpc(ident, "tools/call", {"name": "context", "arguments": arguments})
        stamps.append({"label": label, "began": began, "end": time.perf_counter()})
        if "result" not in reply:
            raise SystemExit(f"context {arguments['topic']!r} failed: {reply}")
    proc.stdin.close()
    proc.wait()
    return stamps


def run_sdk(command: list[str], todo: list[tuple[str, dict[str, Any]]], pause: float) -> list[dict[str, Any]]:
    """The MCP SDK's client, as bench_scale drives it."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    stamps: list[dict[str, Any]] = []

    async def session() -> None:
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with Client(params, read_timeout_seconds=600) as client:
            for label, arguments in todo:
                if pause:
                    await anyio.sleep(pause)
                began = time.perf_counter()
                await client.call_tool("context", arguments)
                stamps.append({"label": label, "began": began, "end": time.perf_counter()})

    anyio.run(session)
    return stamps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="100k")
    parser.add_argument("--client", choices=("sdk", "raw"), default="sdk")
    parser.add_argument("--pause", type=float, default=0.0, metavar="MS", help="untimed wait before each call")
    parser.add_argument("--runs", type=int, default=3, help="repeats of each manifest topic, as bench_scale's --mcp-runs")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--detail", action="store_true",
                        help="also the objects not frozen when a call's collection begins (counting them takes"
                        " time after the answer), each job's time, and any collection that freed something")
    parser.add_argument("--serve", nargs=2, metavar=("DB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(*args.serve)
        return
    db = OUT / "graphs" / f"{args.size}-json.db"
    todo = requests(db, args.size, args.runs, args.topics, args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        stamps_file = Path(tmp) / "server.jsonl"
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", str(db), str(stamps_file)]
        print(f"ctx from {os.environ.get('PYTHONPATH') or CTX}; {db}; {args.client} client;"
              f" pause {args.pause} ms; load {os.getloadavg()[0]:.2f}", flush=True)
        if args.detail:
            os.environ["CTX_STAMPS_DETAIL"] = "1"
        client = (run_sdk if args.client == "sdk" else run_raw)(command, todo, args.pause / 1000)
        server = [json.loads(line) for line in stamps_file.read_text().splitlines()]
    peak_mb = server.pop()["maxrss_kb"] / 1024
    server.sort(key=lambda s: s["line"])
    if len(server) != len(client):
        raise SystemExit(f"{len(server)} calls stamped in the server, {len(client)} in the client")
    rows: dict[str, list[dict[str, float]]] = {}
    for s, c in zip(server, client):
        if c["label"].startswith("new"):
            rows.setdefault(c["label"], []).append(parts(s, c))
    labels = list(rows)
    print(f"load after {os.getloadavg()[0]:.2f}; {len(server)} calls; the server's peak RSS {peak_mb:.0f} MB;"
          " median ms over each row's calls (build user and sys: the mean)")
    print("".ljust(14) + "".join(label.replace("new ", "").replace("topics", "notes")[:12].rjust(13) for label in labels))
    for part, meaning in PARTS:
        middle = statistics.mean if part in TICK_SAMPLED else statistics.median
        values = [middle(r[part] for r in rows[label]) for label in labels]
        print(part.ljust(14) + "".join(f"{v:13.2f}" if part != "bytes" else f"{v:13.0f}" for v in values) + f"   {meaning}")


if __name__ == "__main__":
    main()
