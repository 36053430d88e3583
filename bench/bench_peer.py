"""Cold `ctx` beside compiled supertag-cli on the same Tana export, side by side.

    python bench/bench_peer.py --supertag /path/to/supertag     # or SUPERTAG_BIN=/path/to/supertag
    python bench/bench_peer.py --supertag ... --runs 31 --topic 'Chapter 22: Roles' --question 'weekly review'

supertag-cli (TypeScript on Bun, compiled with `bun build src/index.ts --compile`) indexes Tana
JSON exports and answers `supertag context`, the nearest peer to `ctx build`. It is not shipped
with ctx: build it yourself from its repository (`bun install`, then `bun build src/index.ts
--compile --outfile supertag`; its `resona` dependency is a GitHub URL, which a `file:` path to a
local copy can replace) and pass the binary. Without one, this script says so and prints ctx's rows
alone beside the floor.

Both index the same export: supertag with `sync index` into a workspace of its own under a
temporary XDG home (it reads only files named ``<name>@YYYY-MM-DD.json``), ctx with `ctx import`
into a temporary graph. Then each request runs as fresh processes, ctx and supertag interleaved
(the order alternates every round, so neither always follows the other), after one unmeasured run
of each that warms the page cache and each tool's own caches:

* the process-start floors: `python -c 'import sqlite3'` and `supertag --version`;
* a named topic, depth 2, 4,000 tokens: `ctx build T --depth 2 --max-tokens 4000` beside
  `supertag context T --depth 2 --max-tokens 4000 --offline` (--offline: the SQLite index, never
  a Tana desktop app's local API);
* a free-text topic, the same options;
* a full-text search: `ctx search W` beside `supertag search W --offline`.

Prints median and min wall time, median and min CPU time (user + system of the process and all its
threads), the ctx/supertag ratio of the medians, and the load average at the start and after each
request. A request that fails or prints nothing ends the run (a fast error is no figure). Never a
timed test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_EXPORT = REPO.parent / "shared" / "corpora" / "tana-books" / "sample-workspace.json"
WORKSPACE = "bench"
FLOORS = ("import sqlite3", "--version")  # the floors' last arguments: they print nothing / a line


def ctx_executable() -> str:
    found = shutil.which("ctx")
    if found is None:
        sys.exit("ctx is not on PATH (pip install -e . first)")
    return found


def load() -> str:
    return "load average " + " / ".join(f"{x:.2f}" for x in os.getloadavg())


def supertag_home(root: Path) -> dict[str, str]:
    """An environment whose XDG folders (supertag's config, index, caches, logs) are under ``root``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update({
        "HOME": str(root),
        "XDG_CONFIG_HOME": str(root / "config"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CACHE_HOME": str(root / "cache"),
        "XDG_STATE_HOME": str(root / "state"),
    })
    return env


def index_supertag(binary: str, export: Path, env: dict[str, str]) -> None:
    def run(*args: str) -> None:
        proc = subprocess.run([binary, *args], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"supertag {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")

    run("workspace", "add", WORKSPACE, "--alias", WORKSPACE)
    run("workspace", "set-default", WORKSPACE)
    exports = Path(env["XDG_DATA_HOME"]) / "supertag" / "exports" / WORKSPACE
    exports.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(export, exports / f"{WORKSPACE}@2026-01-01.json")
    run("sync", "index", "--workspace", WORKSPACE)


def index_ctx(export: Path, db: Path, env: dict[str, str]) -> None:
    proc = subprocess.run([ctx_executable(), "import", str(export), "--format", "tana", "--db", str(db)],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"ctx import failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def one_run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, all threads) and stdout bytes of one process;
    ends the run if it fails, or prints nothing when it is a request (not a floor)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None
    size = len(proc.stdout.read())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or (size == 0 and argv[-1] not in FLOORS):
        sys.exit(f"{' '.join(argv)} exited {code} with {size} bytes on stdout: no figure")
    return wall, usage.ru_utime + usage.ru_stime, size


def interleaved(commands: dict[str, tuple[list[str], dict[str, str]]], runs: int) -> dict[str, list[tuple[float, float, int]]]:
    """``runs`` measured processes of each command, alternating which goes first each round."""
    names = list(commands)
    for name in names:
        one_run(*commands[name])  # warm-up, not measured
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    for i in range(runs):
        for name in names if i % 2 == 0 else names[::-1]:
            results[name].append(one_run(*commands[name]))
    return results


def summary(samples: list[tuple[float, float, int]]) -> tuple[float, float, float, float]:
    walls = [s[0] for s in samples]
    cpus = [s[1] for s in samples]
    return statistics.median(walls), min(walls), statistics.median(cpus), min(cpus)


def print_row(results: dict[str, list[tuple[float, float, int]]]) -> None:
    medians = {}
    for name, samples in results.items():
        wall, wall_min, cpu, cpu_min = summary(samples)
        medians[name] = (wall, cpu)
        print(f"  {name:9s} wall median {wall * 1000:4.0f} ms (min {wall_min * 1000:4.0f}),"
              f" CPU median {cpu * 1000:4.0f} ms (min {cpu_min * 1000:4.0f}),"
              f" stdout {samples[-1][2]:,} bytes, n={len(samples)}")
    if "ctx" in medians and "supertag" in medians:
        (cw, cc), (sw, sc) = medians["ctx"], medians["supertag"]
        print(f"  ctx / supertag: wall {cw / sw:.2f}, CPU {cc / sc:.2f}")
    print(f"  ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--supertag", default=os.environ.get("SUPERTAG_BIN"),
                        help="the compiled supertag binary (default: $SUPERTAG_BIN)")
    parser.add_argument("--export", type=Path, default=DEFAULT_EXPORT, help="a Tana JSON export")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--topic", default="Chapter 22: Roles", help="a node's exact name")
    parser.add_argument("--question", default="weekly review", help="free text (supertag needs its words adjacent)")
    parser.add_argument("--search", default="roles", help="the search request's word")
    args = parser.parse_args()
    if not args.export.is_file():
        sys.exit(f"export not found: {args.export}")
    binary = args.supertag
    if binary and not (shutil.which(binary) or Path(binary).is_file()):
        sys.exit(f"supertag binary not found: {binary}")
    if not binary:
        print("supertag: no binary given (--supertag PATH or $SUPERTAG_BIN): the side-by-side is skipped,"
              " ctx's rows are printed alone")

    with tempfile.TemporaryDirectory(prefix="ctx-bench-peer-") as tmp:
        root = Path(tmp)
        ctx_env = {k: v for k, v in os.environ.items()
                   if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("CTX_")}
        db = root / "graph.db"
        index_ctx(args.export, db, ctx_env)
        st_env = supertag_home(root / "supertag-home")
        if binary:
            index_supertag(binary, args.export, st_env)
        print(f"export: {args.export} ({args.export.stat().st_size:,} bytes); {load()}")

        ctx = ctx_executable()
        budget = ["--depth", "2", "--max-tokens", "4000"]
        rows: list[tuple[str, dict[str, tuple[list[str], dict[str, str]]]]] = [
            ("process start", {
                "python": ([sys.executable, "-c", "import sqlite3"], ctx_env),
                "supertag": ([binary or "", "--version"], st_env),
            }),
            (f"named topic {args.topic!r}, depth 2, 4,000 tokens", {
                "ctx": ([ctx, "build", args.topic, *budget, "--db", str(db)], ctx_env),
                "supertag": ([binary or "", "context", args.topic, *budget, "--offline"], st_env),
            }),
            (f"free text {args.question!r}, depth 2, 4,000 tokens", {
                "ctx": ([ctx, "build", args.question, *budget, "--db", str(db)], ctx_env),
                "supertag": ([binary or "", "context", args.question, *budget, "--offline"], st_env),
            }),
            (f"search {args.search!r}", {
                "ctx": ([ctx, "search", args.search, "--db", str(db)], ctx_env),
                "supertag": ([binary or "", "search", args.search, "--offline"], st_env),
            }),
        ]
        for label, commands in rows:
            if not binary:
                commands.pop("supertag")
            print(label)
            print_row(interleaved(commands, args.runs))


if __name__ == "__main__":
    main()
