"""Benchmark `ctx build` on obsidian-dwarves-brain (884 notes): cold time, imports, budget use.

    python bench/bench_build.py                 # uses ../shared/corpora/obsidian-dwarves-brain
    python bench/bench_build.py --runs 15 --pairs 200
    python bench/bench_build.py --no-utilisation --typer   # start-up figures only, both CLI paths
    python bench/bench_build.py --no-utilisation --plain   # and with every start-up device off
    python bench/bench_build.py --no-utilisation --pieces  # and where a cold build's time goes

Prints:
* the floor: a new `python -c 'import sqlite3'` process with the same interpreter;
* cold `ctx build` in a new process (process start included), median (and min) of --runs, wall
  time and CPU time (user + system of the process: on a shared machine the figure that says what
  the command cost), for depth 2 and depth 5 at 4,000 tokens on an ID topic (the most linked-to
  note), and for a free-text question; with --typer, the same through the Typer command
  (CTX_NO_FAST_PATH=1) beside it;
* with --pieces, where a cold build's time goes, in a fresh process per run (the fast path's steps
  in its order, timed between them): importing the entry and reading the arguments, importing the
  build's modules, building the tokenizer (from its cache), opening the graph (and the freshness
  check), the build itself, printing and closing; the interpreter's own start is the floor above;
* whether `python -X importtime` shows torch (or sentence-transformers, numpy, rich, pydantic, mcp,
  sqlite-utils, typer) on that path, for the ID topic and the free-text one (the graph has no
  embeddings, so neither needs numpy), with a WARNING line naming any that is;
* budget utilisation over --pairs random (topic, budget) pairs, both formats: min and median of
  used/budget where the candidates exceeded the budget, and overruns (must be 0). Budgets are drawn
  log-uniformly from 500..16,000 (the summary-first range below 500 is reported separately).
Never a timed test: figures depend on the machine and its load (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-dwarves-brain"


def ctx_executable() -> str:
    found = shutil.which("ctx")
    if found is None:
        sys.exit("ctx is not on PATH (pip install -e . first)")
    return found


def import_corpus(corpus: Path, db: Path) -> None:
    subprocess.run([ctx_executable(), "import", str(corpus), "--db", str(db)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def hub_topic(db: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(db)
    row = conn.execute(
        "SELECT e.dst FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.type = 'link' AND n.type != 'tag'"
        " AND n.private = 0 GROUP BY e.dst ORDER BY COUNT(*) DESC, e.dst LIMIT 1"
    ).fetchone()
    return row[0]


def cold_runs(argv: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``runs`` fresh processes of ``argv``, after one
    unmeasured run that warms the page cache and ctx's own caches.

    PYTHONDONTWRITEBYTECODE is dropped, as a user's shell does not set it: with it, a source
    checkout without byte code compiles every ctx module again in every run."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) not in (0, 3):
            sys.exit(f"{argv} failed with status {status}")
    return walls, cpus


def describe(label: str, walls: list[float], cpus: list[float]) -> str:
    return (f"{label}: wall median {statistics.median(walls) * 1000:.0f} ms (min {min(walls) * 1000:.0f}),"
            f" CPU median {statistics.median(cpus) * 1000:.0f} ms (min {min(cpus) * 1000:.0f}), n={len(walls)}")


# The fast path's steps (ctx.entry, build_run.run_build) with a clock read between them; prints the
# readings as JSON on stderr. The same calls in the same order, so the pieces add up to a build.
PIECES_PROBE = r"""
import json, os, sys, time
readings = [("start", time.perf_counter(), time.process_time())]
def reading(name):
    readings.append((name, time.perf_counter(), time.process_time()))
from ctx import dataclass_code
from ctx.commands.build_argv import parse_build
dataclass_code.install()
options = parse_build(sys.argv[1:])
reading("imports: ctx.entry and reading the arguments")
import ctx.assemble.pipeline, ctx.commands.build_run, ctx.config, ctx.freshness, ctx.graph, ctx.tokens
reading("imports: the build's modules")
from ctx.assemble import BuildRequest
from ctx.commands.console import write_stdout
from ctx.config import resolve_db_path
lens, max_tokens, encoding = ctx.assemble.build_defaults(options["lens"], options["max_tokens"], options["encoding"])
ctx.tokens.get_encoding(encoding)
reading("tokenizer (from its cache)")
graph = ctx.graph.Graph.open(resolve_db_path(options["db"]))
ctx.freshness.refresh_if_enabled(graph.store)
reading("graph open + freshness check")
result = graph.build(BuildRequest(topics=options["topics"], lens=lens, depth=options["depth"],
                                  max_tokens=max_tokens, encoding=encoding))
reading("the build")
write_stdout(result.text)
graph.close()
dataclass_code.save()
reading("printing + closing")
os.write(2, ("\n" + json.dumps(readings) + "\n").encode())
sys.stdout.flush()
os._exit(0)
"""


def pieces(db: Path, request: list[str], runs: int) -> list[tuple[str, float, float, float]]:
    """(piece, median wall, median CPU, min CPU) over ``runs`` fresh processes of PIECES_PROBE."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-c", PIECES_PROBE, "build", *request, "--max-tokens", "4000", "--db", str(db)]
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    samples = []
    for _ in range(runs):
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=True)
        samples.append(json.loads(proc.stderr.strip().splitlines()[-1]))
    out = []
    for i in range(1, len(samples[0])):
        walls = [s[i][1] - s[i - 1][1] for s in samples]
        cpus = [s[i][2] - s[i - 1][2] for s in samples]
        out.append((samples[0][i][0], statistics.median(walls), statistics.median(cpus), min(cpus)))
    return out


# Modules a cold build must not load: each costs tens to thousands of milliseconds (pydantic ~0.1 s:
# typer 0.29 loads it whenever it is installed, which is why typer is bounded below 0.29).
HEAVY_MODULES = ("torch", "sentence_transformers", "numpy", "rich", "pydantic", "mcp", "sqlite_utils", "typer")


def heavy_imports(db: Path, topic: str) -> dict[str, bool]:
    code = (
        "import sys; sys.argv = ['ctx', 'build', %r, '--db', %r]\n"
        "from ctx.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    ) % (topic, str(db))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    names = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return {mod: any(n == mod or n.startswith(mod + ".") for n in names)
            for mod in HEAVY_MODULES}


def utilisation(db: Path, pairs: int, seed: int) -> dict[str, object]:
    from ctx.assemble import BuildRequest, build_context
    from ctx.store import open_graph
    from ctx.tokens import count_tokens

    conn = open_graph(db)
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 0 ORDER BY id")]
    rng = random.Random(seed)
    ratios: list[float] = []
    small: list[float] = []
    overruns = 0
    worst = None
    for i in range(pairs):
        topic = rng.choice(ids)
        fmt = ("markdown", "json")[i % 2]
        budget = int(math.exp(rng.uniform(math.log(500), math.log(16000))))
        result = build_context(conn, BuildRequest((topic,), max_tokens=budget, format=fmt))
        used = count_tokens(result.text)
        overruns += used > budget
        if result.meta.get("store_tokens", 0) > budget:
            ratios.append(used / budget)
            if worst is None or used / budget < worst[0]:
                worst = (used / budget, topic, budget, fmt)
        tiny = rng.randint(50, 499)
        result = build_context(conn, BuildRequest((topic,), max_tokens=tiny, format=fmt))
        used = count_tokens(result.text)
        overruns += used > tiny
        if result.meta.get("store_tokens", 0) > tiny:
            small.append(used / tiny)
    return {
        "pairs": pairs,
        "exceeded": len(ratios),
        "min": min(ratios) if ratios else None,
        "median": statistics.median(ratios) if ratios else None,
        "worst": worst,
        "small_min": min(small) if small else None,
        "small_median": statistics.median(small) if small else None,
        "overruns": overruns,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--typer", action="store_true", help="also time the Typer command (CTX_NO_FAST_PATH=1)")
    parser.add_argument("--plain", action="store_true",
                        help="also time the plain path: every start-up device off (CTX_PLAIN=1, ctx.speedups)")
    parser.add_argument("--no-utilisation", action="store_true", help="only the start-up figures")
    parser.add_argument("--pieces", action="store_true", help="where a cold build's time goes, piece by piece")
    parser.add_argument("--question", default="how do we run a retrospective",
                        help="the free-text topic of the third row")
    args = parser.parse_args()
    if not args.corpus.exists():
        sys.exit(f"corpus not found: {args.corpus}")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "graph.db"
        import_corpus(args.corpus, db)
        topic = hub_topic(db)
        print(f"corpus: {args.corpus.name}; topic: {topic!r}; load average: {os.getloadavg()[0]:.2f}")
        walls, cpus = cold_runs([sys.executable, "-c", "import sqlite3"], args.runs)
        print(describe("floor: python -c 'import sqlite3'", walls, cpus))
        rows = [(f"depth {depth}, 4000 tokens", [topic, "--depth", str(depth)]) for depth in (2, 5)]
        rows.append((f"free text {args.question!r}, 4000 tokens", [args.question]))
        typer_env = {**os.environ, "CTX_NO_FAST_PATH": "1"}
        plain_env = {**os.environ, "CTX_PLAIN": "1"}
        for label, request in rows:
            argv = [ctx_executable(), "build", *request, "--max-tokens", "4000", "--db", str(db)]
            walls, cpus = cold_runs(argv, args.runs)
            print(describe(f"cold ctx build, {label}", walls, cpus))
            if args.typer:
                walls, cpus = cold_runs(argv, args.runs, env=typer_env)
                print(describe("  the same through Typer (CTX_NO_FAST_PATH=1)", walls, cpus))
            if args.plain:
                walls, cpus = cold_runs(argv, args.runs, env=plain_env)
                print(describe("  the same with every start-up device off (CTX_PLAIN=1)", walls, cpus))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        if args.pieces:
            for label, request in rows[::2]:
                print(f"where the time of a cold build goes, {label} (medians of {args.runs}; load average"
                      f" {os.getloadavg()[0]:.2f}):")
                for name, wall, cpu, cpu_min in pieces(db, request, args.runs):
                    print(f"  {name}: wall {wall * 1000:.1f} ms, CPU {cpu * 1000:.1f} ms (min {cpu_min * 1000:.1f})")
        for kind, request_topic in (("ID topic", topic), ("free text", args.question)):
            imports = heavy_imports(db, request_topic)
            print(f"imports on the build path ({kind}): "
                  + ", ".join(f"{m}={'yes' if v else 'no'}" for m, v in imports.items()))
            flagged = [m for m, loaded in imports.items() if loaded]
            if flagged:
                print(f"WARNING: the build path ({kind}) imports {', '.join(flagged)}")
        if args.no_utilisation:
            return
        u = utilisation(db, args.pairs, args.seed)
        print(f"budget utilisation over {u['pairs']} random (topic, budget 500..16000) pairs, both formats:"
              f" {u['exceeded']} exceeded their budget; used/budget min {u['min']:.3f},"
              f" median {u['median']:.3f}; worst {u['worst']}")
        print(f"budgets 50..499 (summary-first): min {u['small_min']:.3f}, median {u['small_median']:.3f}")
        print(f"overruns (stdout tokens > budget): {u['overruns']}")


if __name__ == "__main__":
    main()
