"""A warm process's answers after other processes used the same graph file.

    python bench/bench_warm_after_writes.py GRAPH.db [--topics 10] [--depth 3]

An agent's MCP server keeps pools and answers between calls, keyed by the graph's state; the user
meanwhile runs `ctx build` in a terminal, which records its manifest in the graph (for `--since`).
This asks --topics notes once each in this (warm) process, then, for each, runs a `ctx build` of
another note in a separate process and asks the note again: printed is the CPU time of those
repeated asks (p50 / max), beside the same asks with nothing in between. Equal figures mean the
other process's build left the kept state alone. The graph is used as given: pass a copy (it is
migrated to this ctx's schema and gains manifests). The load average is printed.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import time

from ctx import Graph
from ctx.assemble import BuildRequest, warm


def ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples):.1f} ms, max {max(samples):.1f} ms CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("graph")
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=2000)
    args = parser.parse_args()
    warm.enable()
    graph = Graph.open(args.graph)
    with sqlite3.connect(f"file:{args.graph}?mode=ro", uri=True) as conn:
        count = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        step = max(1, count // (args.topics * 2))  # notes spread over the whole graph
        notes = [r[0] for r in conn.execute(
            "SELECT id FROM nodes WHERE rowid % ? = 0 ORDER BY rowid LIMIT ?", (step, args.topics * 2))]
    asked, others = notes[: args.topics], notes[args.topics :]
    requests = [BuildRequest((note,), depth=args.depth, max_tokens=args.max_tokens) for note in asked]
    for request in requests:
        graph.build(request)

    def timed(request: BuildRequest) -> float:
        start = time.process_time()
        graph.build(request)
        return (time.process_time() - start) * 1000

    untouched = [timed(r) for r in requests]
    after = []
    for request, other in zip(requests, others, strict=False):
        subprocess.run(
            [sys.executable, "-c", "from ctx.entry import main; main()", "build", other, "--db", args.graph,
             "--max-tokens", "300"], capture_output=True, check=True)
        after.append(timed(request))
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{len(requests)} notes at depth {args.depth}, asked again in a warm process")
    print(f"  nothing in between:               {ms(untouched)}")
    print(f"  after another process's ctx build: {ms(after)}")


if __name__ == "__main__":
    main()
