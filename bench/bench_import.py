"""Import throughput, no-op re-import and `ctx stats` latency on the real corpora.

    python bench/bench_import.py [--runs 5] [--corpora ../shared/corpora]

Every figure is a median over ``--runs`` runs. "Cold" means a fresh process and a fresh database
each run: the import time includes loading the tokenizer, as a user's first import would.
Targets (issue 2): import >= 2,000 notes/s; unchanged re-import < 0.3 s; `ctx stats` < 0.25 s.
It also times making an empty graph (schema created, connection closed), which every first import
and every test's fresh graph pays: wall beside CPU, since waiting for the disk is most of it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"

# Runs in a fresh interpreter: times import_path alone, without interpreter start-up.
_TIMED_IMPORT = """
import json, sys, time
from ctx.store import connect
from ctx.importers.engine import import_path
conn = connect(sys.argv[1], create=True)
started = time.perf_counter()
report = import_path(conn, sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - started, "files": report.files_parsed,
                  "nodes": report.nodes_written}))
"""


def ctx_executable() -> str:
    local = Path(sys.executable).parent / "ctx"
    return str(local) if local.exists() else (shutil.which("ctx") or "ctx")


def timed_import(db: Path, corpus: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _TIMED_IMPORT, str(db), str(corpus)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - started


def bench_cold(corpus: Path, runs: int, scratch: Path) -> None:
    in_process, whole_command, files = [], [], 0
    for i in range(runs):
        db = scratch / f"{corpus.name}-cold-{i}.db"
        result = timed_import(db, corpus)
        in_process.append(result["seconds"])
        files = int(result["files"])
        db2 = scratch / f"{corpus.name}-cli-{i}.db"
        whole_command.append(wall([ctx_executable(), "import", str(corpus), "--db", str(db2), "--quiet"]))
    seconds = statistics.median(in_process)
    command = statistics.median(whole_command)
    print(
        f"cold import {corpus.name}: {files} notes in {seconds:.3f} s = {files / seconds:,.0f} notes/s"
        f" (whole `ctx import` command incl. process start: {command:.3f} s = {files / command:,.0f} notes/s)"
    )


def bench_reimport(corpus: Path, runs: int, scratch: Path) -> Path:
    db = scratch / f"{corpus.name}-warm.db"
    timed_import(db, corpus)
    in_process = [timed_import(db, corpus)["seconds"] for _ in range(runs)]
    command = [wall([ctx_executable(), "import", str(corpus), "--db", str(db), "--quiet"]) for _ in range(runs)]
    print(
        f"unchanged re-import {corpus.name}: {statistics.median(in_process):.3f} s in process,"
        f" {statistics.median(command):.3f} s for the whole `ctx import` command"
    )
    return db


def bench_stats(db: Path, runs: int) -> None:
    wall([ctx_executable(), "stats", "--db", str(db)])  # warm the OS file cache once
    times = [wall([ctx_executable(), "stats", "--db", str(db)]) for _ in range(runs)]
    print(f"`ctx stats` wall time incl. process start: {statistics.median(times):.3f} s (median of {runs})")


def bench_new_graph(runs: int, scratch: Path) -> None:
    from ctx.store import connect

    walls, cpus = [], []
    for i in range(runs):
        started, cpu = time.perf_counter(), time.process_time()
        connect(scratch / f"empty-{i}.db", create=True).close()
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    print(f"new empty graph (schema + close): wall {statistics.median(walls) * 1000:.1f} ms, "
          f"CPU {statistics.median(cpus) * 1000:.1f} ms (median of {runs})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--new-graph-only", action="store_true", help="only time making an empty graph")
    args = parser.parse_args()
    if args.new_graph_only:
        with tempfile.TemporaryDirectory(prefix="ctx-bench-") as tmp:
            bench_new_graph(args.runs * 4, Path(tmp))
        return
    if not args.corpora.exists():
        sys.exit(f"no corpora at {args.corpora}; pass --corpora")
    with tempfile.TemporaryDirectory(prefix="ctx-bench-") as tmp:
        scratch = Path(tmp)
        bench_new_graph(args.runs * 4, scratch)
        for name in ("obsidian-dwarves-brain", "dendron-site"):
            bench_cold(args.corpora / name, args.runs, scratch)
        db = bench_reimport(args.corpora / "obsidian-dwarves-brain", args.runs, scratch)
        bench_stats(db, args.runs * 2)


if __name__ == "__main__":
    main()
