"""Scale: import, store size, stats, search and cold builds on generated graphs of 10k to 1M nodes.

    python bench/bench_scale.py                          # 10k and 100k
    python bench/bench_scale.py --sizes 1k,10k,100k,1M --runs 3
    python bench/bench_scale.py --sizes 1M --formats jsonl --runs 1 --no-mcp

For each size, ``scale_graph.py`` writes (once; reused from ``bench/out/data/``) a markdown vault
and the same graph as ``.json`` and ``.jsonl``, all with the shape of a real graph: power-law
in-degree with hubs of thousands of links, typed edges, 50-400-word bodies in sections, tags, three
years of dates. Then, every figure taken in a fresh `ctx` process (process start included) with
its CPU time (user + system: what it cost, whatever else the machine ran) and its own peak RSS
(``ru_maxrss`` from ``wait4`` in a small launcher):

* import of each format into a new graph: seconds, nodes/s, peak RSS; graph file size (after a WAL
  checkpoint) against the raw input; a no-op re-import;
* ``ctx stats``, ``ctx search`` for a common and a rare word;
* cold ``ctx build`` at depth 1, 2, 3, 5 (``--max-tokens 4000``) for a typical node (median
  degree), the biggest hub and a free-text topic, median of ``--runs`` after one warm-up run
  (the OS file cache is warm, the process is new);
* the same builds through one `ctx mcp` session: the first call of each request in the warm server,
  then the median and p95 of ``--mcp-runs`` repeats (``--mcp-only``: these figures alone); with
  ``--mcp-new-topics N``, one call for each of N notes spread over the graph at each depth, and with
  ``--mcp-new-questions N``, for each of N free-text questions made of words of their titles. Each
  depth asks its own N, never asked before at any depth (until 2026-11-27 every depth re-asked the
  depth-1 ones, so the deeper rows measured a topic asked again deeper, which kept state can serve:
  ``--mcp-deeper`` adds that series back as "deeper topics" / "deeper questions"). Each row also
  gives the client's own CPU a call (the SDK's request, the reply's parsing and validation).
  By default each request goes out as soon as the last answer is read, so a call also waits for
  what the server does once the previous answer is out (its manifest, the answer kept for a
  repeat, the collection of its objects: 1-5 ms at 100k), which an agent, whose model reads an
  answer before it asks again, never waits for; ``--mcp-pause MS`` leaves MS (untimed) between
  calls, as that agent does, and is the figure of what an agent waits for. Report which.

Results go to stdout as tables and to ``bench/out/scale-<time>.json``. The load average is printed
with every size: on a shared machine it says how far to trust the figures. Never a timed test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_graph import generate, parse_size  # noqa: E402

OUT = HERE / "out"
CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx") or "ctx"
DEPTHS = (1, 2, 3, 5)


@dataclass
class Run:
    seconds: float
    cpu: float  # user + system seconds: what the command cost, whatever else the machine ran
    rss_mb: float
    returncode: int
    stdout: str
    stderr: str


# Peak RSS must be the command's own. A child forked from this (large) process and then exec'd
# inherits this process's RSS as its high-water mark (Linux keeps the pre-exec maximum), so a
# small launcher forks the command instead and reports the child's wait4() rusage and wall time.
_LAUNCHER = """
import json, os, sys, time
report, argv = sys.argv[1], sys.argv[2:]
began = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - began
with open(report, "w") as handle:
    json.dump({"seconds": seconds, "cpu": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss,
               "code": os.waitstatus_to_exitcode(status)}, handle)
"""


def run(argv: list[str]) -> Run:
    """Run ``argv`` to completion: its wall time and its own peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, report.name, *argv],
                       stdout=out, stderr=err, stdin=subprocess.DEVNULL, check=False)
        figures = json.loads(Path(report.name).read_text())
        out.seek(0)
        err.seek(0)
        return Run(figures["seconds"], figures["cpu"], figures["maxrss_kb"] / 1024.0, figures["code"],
                   out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def checked(argv: list[str]) -> Run:
    result = run(argv)
    if result.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    return result


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def graph_bytes(db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def node_count(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0])
    finally:
        conn.close()


def bench_import(fmt: str, source: dict[str, Any], db: Path) -> dict[str, Any]:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    argv = [CTX, "import", source["path"], "--db", str(db), "--quiet"]
    if fmt != "markdown":
        argv += ["--format", "json"]
    first = checked(argv)
    nodes = node_count(db)
    again = checked(argv)
    size = graph_bytes(db)
    return {
        "format": fmt,
        "seconds": round(first.seconds, 2),
        "cpu": round(first.cpu, 2),
        "nodes": nodes,
        "nodes_per_s": round(nodes / first.seconds),
        "rss_mb": round(first.rss_mb),
        "raw_mb": round(source["bytes"] / 1e6, 1),
        "graph_mb": round(size / 1e6, 1),
        "ratio": round(size / source["bytes"], 2),
        "noop_seconds": round(again.seconds, 3),
        "noop_cpu": round(again.cpu, 3),
        "noop_rss_mb": round(again.rss_mb),
    }


def median_run(argv: list[str], runs: int) -> dict[str, Any]:
    checked(argv)  # warm the OS file cache; the timed processes are still new processes
    results = [checked(argv) for _ in range(runs)]
    return {
        "seconds": round(statistics.median(r.seconds for r in results), 3),
        "cpu": round(statistics.median(r.cpu for r in results), 3),
        # The slowest run too: a goal such as "every 1M build under 0.5 s CPU" is about each run.
        "cpu_max": round(max(r.cpu for r in results), 3),
        "rss_mb": round(max(r.rss_mb for r in results)),
    }


def build_topics(manifest: dict[str, Any], fmt: str) -> dict[str, str]:
    key = "markdown" if fmt == "markdown" else "json"
    return {
        "typical": manifest["typical"][key],
        "hub": manifest["hub"][key],
        "free text": manifest["free_text"],
    }


def bench_queries(db: Path, manifest: dict[str, Any], fmt: str, runs: int, depths: tuple[int, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "stats": median_run([CTX, "stats", "--db", str(db)], runs),
        "search_common": median_run([CTX, "search", manifest["common_word"], "--db", str(db)], runs),
        "search_rare": median_run([CTX, "search", manifest["rare_word"], "--db", str(db)], runs),
        "builds": {},
    }
    for name, topic in build_topics(manifest, fmt).items():
        for depth in depths:
            argv = [CTX, "build", topic, "--depth", str(depth), "--max-tokens", "4000", "--db", str(db)]
            result = median_run(argv, runs)
            meta = json.loads(checked([*argv, "--format", "json"]).stdout)["meta"]
            counts = meta.get("counts")
            # Every candidate is shown whole, shortened, summarized or omitted. A context that fills
            # its budget drops meta's counts before the nodes' own fields: then it is not known.
            result["candidates"] = (
                counts.get("candidates", sum(v for v in counts.values() if isinstance(v, int))) if counts else None
            )
            out["builds"][f"{name} d{depth}"] = result
            print(f"    build {name:9} depth {depth}: {result['seconds']:.3f} s ({result['cpu']:.3f} s cpu,"
                  f" slowest {result['cpu_max']:.3f}),"
                  f" {result['rss_mb']} MB,"
                  f" {result['candidates'] if result['candidates'] is not None else 'n/a (meta trimmed)'} candidates"
                  f"  (load {load()})", flush=True)
    return out


async def _mcp_session(
    db: Path, calls: list[tuple[str, str, int]], runs: int, new_topics: list[str], depths: tuple[int, ...],
    new_questions: list[str], deeper: bool = False, pause: float = 0.0,
) -> dict[str, Any]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    # The server gets this environment whole (the SDK passes only a safe few variables by default):
    # PYTHONPATH then picks the ctx under test, e.g. another checkout's for a before/after figure.
    params = StdioServerParameters(command=CTX, args=["mcp", "--db", str(db)], env=dict(os.environ))
    out: dict[str, Any] = {}
    cpu: list[float] = []  # the client's own CPU of each call in the row being timed

    async def call(arguments: dict[str, Any]) -> tuple[float, Any]:
        """One call's wall time (what the caller waits for) and its result."""
        if pause:
            await anyio.sleep(pause)  # an agent's model reading the last answer: not timed
        began, cpu_began = time.perf_counter(), time.process_time()
        result = await client.call_tool("context", arguments)
        seconds = time.perf_counter() - began
        cpu.append(time.process_time() - cpu_began)
        return seconds, result

    async with Client(params, read_timeout_seconds=600) as client:
        await call({"topic": calls[0][1], "depth": 1, "max_tokens": 4000})  # loads the assembler
        for label, topic, depth in calls:
            arguments = {"topic": topic, "depth": depth, "max_tokens": 4000}
            seconds = []
            cpu.clear()
            for _ in range(runs + 1):  # the first call of a topic in a warm server, then repeats
                took, result = await call(arguments)
                seconds.append(took)
                if result.is_error and "not found" not in result.content[-1].text:
                    raise SystemExit(f"mcp context {topic!r} failed: {result.content[-1].text}")
            first, repeats = seconds[0], sorted(seconds[1:])
            out[label] = {
                "first_ms": round(first * 1000, 1),
                "p50_ms": round(statistics.median(repeats) * 1000, 1),
                "p95_ms": round(repeats[min(len(repeats) - 1, round(0.95 * (len(repeats) - 1)))] * 1000, 1),
                "client_cpu_ms": round(statistics.median(cpu) * 1000, 2),
            }
            print(f"    mcp {label}: first {out[label]['first_ms']} ms, then p50 {out[label]['p50_ms']} ms"
                  f" p95 {out[label]['p95_ms']} ms; client CPU {out[label]['client_cpu_ms']} ms"
                  f" (load {load()})", flush=True)
        # What an agent asking about one note after another sees: each call a topic the server
        # has not answered yet at any depth (its caches hold only what other topics left, e.g.
        # hubs' lists). Then free-text questions, each asked once.
        for name, depth, asked in fresh_series(new_topics, new_questions, depths, deeper):
            seconds = []
            cpu.clear()
            for topic in asked:
                seconds.append((await call({"topic": topic, "depth": depth, "max_tokens": 4000}))[0])
            seconds.sort()
            label = f"{name} d{depth}"
            out[label] = {
                "first_ms": round(seconds[-1] * 1000, 1),  # the slowest, in this row
                "p50_ms": round(statistics.median(seconds) * 1000, 1),
                "p95_ms": round(seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))] * 1000, 1),
                "client_cpu_ms": round(statistics.median(cpu) * 1000, 2),
            }
            print(f"    mcp {label} ({len(seconds)}, one call each): p50 {out[label]['p50_ms']} ms"
                  f" p95 {out[label]['p95_ms']} ms, slowest {out[label]['first_ms']} ms;"
                  f" client CPU {out[label]['client_cpu_ms']} ms (load {load()})", flush=True)
    return out


def bench_mcp(
    db: Path, manifest: dict[str, Any], fmt: str, runs: int, depths: tuple[int, ...], new_topics: int = 0,
    new_questions: int = 0, deeper: bool = False, pause_ms: float = 0.0,
) -> dict[str, Any]:
    import anyio

    calls = [(f"{name} d{d}", topic, d) for name, topic in build_topics(manifest, fmt).items() for d in depths]
    groups = len(depths)
    return anyio.run(
        _mcp_session, db, calls, runs, spread_ids(db, new_topics * groups), depths,
        spread_questions(db, new_questions * groups), deeper, pause_ms / 1000,
    )


def fresh_series(
    topics: list[str], questions: list[str], depths: tuple[int, ...], deeper: bool = False,
) -> list[tuple[str, int, list[str]]]:
    """(label, depth, asked) for the new-topic and new-question rows: ``topics`` and ``questions``
    hold one equal share per depth, so no depth's row asks what another row asked; with ``deeper``,
    the first share again at every depth after the first (an agent asking one topic deeper)."""
    out: list[tuple[str, int, list[str]]] = []
    for name, items in (("topics", topics), ("questions", questions)):
        share = len(items) // len(depths) if depths else 0
        if not share:
            continue
        for i, depth in enumerate(depths):
            out.append((f"new {name}", depth, items[i * share:(i + 1) * share]))
        if deeper:
            out.extend((f"deeper {name}", depth, items[:share]) for depth in depths[1:])
    return out


def _spread_rows(db: Path, column: str, offset: int, wanted: int, stride: int) -> list[str]:
    """``wanted`` values of ``column`` from non-tag nodes by id, every ``stride``-th from
    ``offset`` -- a smaller stride where the graph is too small for it -- the same on every run."""
    conn = sqlite3.connect(db)
    rows = [r[0] for r in conn.execute(
        f"SELECT {column} FROM nodes WHERE type != 'tag' ORDER BY id LIMIT ? OFFSET ?", (wanted * stride, offset)
    )]
    conn.close()
    if len(rows) < wanted * stride:
        stride = max(1, len(rows) // max(wanted, 1))
    return rows[::stride][:wanted]


def spread_ids(db: Path, count: int) -> list[str]:
    """``count`` node ids spread over the graph (every 100th by id), the same on every run."""
    return _spread_rows(db, "id", 17, count, 100) if count else []


def spread_questions(db: Path, count: int) -> list[str]:
    """``count`` free-text questions, the same on every run: three words of two titles of notes
    spread over the graph (the first of one, the last two of the next), like the manifest's."""
    if not count:
        return []
    titles = [t.lower().split() for t in _spread_rows(db, "title", 57, 2 * count + 1, 50)]
    pairs = zip(titles[::2], titles[1::2])
    return [" ".join([a[0], *b[-2:]]) for a, b in pairs if a and len(b) >= 2][:count]


def size_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def print_tables(results: list[dict[str, Any]]) -> None:
    print("\n| nodes | format | import s (cpu) | nodes/s | peak RSS MB | graph MB / raw MB | no-op s (cpu) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        for i in r["imports"]:
            print(f"| {r['label']} | {i['format']} | {i['seconds']} ({i['cpu']}) | {i['nodes_per_s']:,} | {i['rss_mb']} |"
                  f" {i['graph_mb']} / {i['raw_mb']} ({i['ratio']}x) | {i['noop_seconds']} ({i['noop_cpu']}) |")
    queried = [r for r in results if r.get("queries")]
    if queried:
        print("\n| figure | " + " | ".join(r["label"] for r in queried) + " |")
        print("|---|" + "---|" * len(queried))
        for key in ("stats", "search_common", "search_rare"):
            cells = [f"{r['queries'][key]['seconds']} s ({r['queries'][key]['cpu']} cpu)" for r in queried]
            print(f"| `ctx {key.replace('_', ' ')}` | " + " | ".join(cells) + " |")
        for key in queried[0]["queries"]["builds"]:
            cells = []
            for r in queried:
                b = r["queries"]["builds"].get(key)
                cells.append(f"{b['seconds']} s ({b['cpu']} cpu), {b['rss_mb']} MB" if b else "")
            print(f"| build {key} | " + " | ".join(cells) + " |")
    served = [r for r in results if r.get("mcp")]
    if served:
        print("\n| mcp warm (repeats p50, p95; first call of the topic, or the slowest new topic) | " + " | ".join(r["label"] for r in served) + " |")
        print("|---|" + "---|" * len(served))
        for key in served[0]["mcp"]:
            cells = [
                f"{r['mcp'][key]['p50_ms']} ms (p95 {r['mcp'][key]['p95_ms']}, first {r['mcp'][key]['first_ms']})"
                for r in served
            ]
            print(f"| {key} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10k,100k", help="comma-separated node counts: 1k,10k,100k,1M")
    parser.add_argument("--formats", default=None,
                        help="markdown,json,jsonl (default: all three up to 100k, jsonl above)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query (median)")
    parser.add_argument("--mcp-runs", type=int, default=3)
    parser.add_argument("--no-mcp", action="store_true")
    parser.add_argument("--mcp-new-topics", type=int, default=0,
                        help="then, at each depth, one call for each of N topics the server has not answered")
    parser.add_argument("--mcp-new-questions", type=int, default=0,
                        help="then, at each depth, one call for each of N free-text questions the server has not answered")
    parser.add_argument("--mcp-deeper", action="store_true",
                        help="then the first depth's new topics and questions asked again at each deeper depth")
    parser.add_argument("--mcp-pause", type=float, default=0.0, metavar="MS",
                        help="wait MS (untimed) before each MCP call, as an agent's model reads an answer before"
                             " asking again; 0 (default): at once, so each call also waits for the server's work"
                             " after the previous answer")
    parser.add_argument("--mcp-only", action="store_true",
                        help="only the MCP session's figures (with --no-import: on the graphs already imported)")
    parser.add_argument("--no-builds", action="store_true",
                        help="imports, stats and search only (no ctx build, no MCP session)")
    parser.add_argument("--no-import", action="store_true",
                        help="query the graphs a previous run imported (bench/out/graphs) where they exist")
    parser.add_argument("--depths", default=",".join(map(str, DEPTHS)))
    parser.add_argument("--seed", type=int, default=7,
                        help="the generator's seed; another than 7 names its files SIZE-sSEED (e.g. 100k-s11)")
    args = parser.parse_args()
    depths = tuple(int(d) for d in args.depths.split(","))
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    print(f"ctx: {CTX}; {os.cpu_count()} cores; load {load()}", flush=True)
    results = []
    for n in sizes:
        formats = tuple(args.formats.split(",")) if args.formats else (
            ("markdown", "json", "jsonl") if n <= 100_000 else ("jsonl",))
        # Another seed is another graph (a held-out one for speed work): its data and graph files
        # carry the seed, so --no-import never queries seed 7's graph under its name.
        label = size_label(n) + ("" if args.seed == 7 else f"-s{args.seed}")
        began = time.perf_counter()
        manifest = generate(n, OUT / "data" / label, args.seed, formats)
        print(f"\n== {label} nodes ({manifest['links']:,} links; data ready in"
              f" {time.perf_counter() - began:.0f} s; load {load()})", flush=True)
        entry: dict[str, Any] = {"label": label, "nodes": n, "imports": [], "load_start": load()}
        query_db = None
        for fmt in formats:
            db = OUT / "graphs" / f"{label}-{fmt}.db"
            db.parent.mkdir(parents=True, exist_ok=True)
            if args.no_import and db.exists():
                print(f"  import {fmt}: reusing {db}", flush=True)
                query_db = query_db or (db, fmt)
                continue
            result = bench_import(fmt, manifest["files"][fmt], db)
            result["load"] = load()
            entry["imports"].append(result)
            print(f"  import {fmt}: {result}", flush=True)
            query_db = query_db or (db, fmt)
        db, fmt = query_db
        entry["queried_format"] = fmt
        if not args.mcp_only:
            entry["queries"] = bench_queries(db, manifest, fmt, args.runs, () if args.no_builds else depths)
        if not args.no_mcp and not args.no_builds:
            print(f"  mcp: {'a pause of ' + str(args.mcp_pause) + ' ms before each call' if args.mcp_pause else 'each request sent as soon as the last answer is read'}", flush=True)
            entry["mcp_pause_ms"] = args.mcp_pause
            entry["mcp"] = bench_mcp(
                db, manifest, fmt, args.mcp_runs, depths, args.mcp_new_topics, args.mcp_new_questions, args.mcp_deeper,
                args.mcp_pause,
            )
        entry["load_end"] = load()
        results.append(entry)
    print_tables(results)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = OUT / f"scale-{stamp}.json"
    path.write_text(json.dumps({"load_end": load(), "results": results}, indent=2))
    print(f"\nresults: {path}")


if __name__ == "__main__":
    main()
