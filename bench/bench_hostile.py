"""Hostile inputs: how many cases each importer survives, how long the worst line takes, and how
long a pasted page takes as a query (issue 11's figures).

    python bench/bench_hostile.py [--examples 100] [--size 1000000] [--corpus PATH] [--runs 3]

1. Cases per importer: hypothesis-generated hostile sources (tests/fuzz_sources.py, ``--examples``
   per importer, a fixed seed), the fixed bad-file sources and one import per adversarial line
   pattern (tests/hostile.py). For each: how many ended in an internal error (an exception that is
   not one of ctx's own), and how many broke another promise (a good note lost, a bad file or
   record not named in a warning, the graph unusable afterwards).
2. The worst whole-import time (detection, parse, tokens, SQLite) of a ``--size`` adversarial line,
   per importer, with the pattern that took it.
3. A 1,500-word query: ``ctx search`` and ``ctx build`` on ``--corpus`` (default: the Obsidian
   corpus in ../shared, else the demo vault), in-process with a warm graph (median of ``--runs``)
   and as cold CLI processes.

Every timing is taken on whatever else the machine is doing: the load average is printed with it.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

import fuzz_sources  # noqa: E402
import hostile  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "corpora" / "obsidian-dwarves-brain"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def fuzz_counts(fmt: str, examples: int) -> tuple[int, int, int, list[str]]:
    """(cases run, internal errors, other broken promises, first few problems) for ``fmt``."""
    from hypothesis import HealthCheck, given, seed, settings

    counts = Counter()
    problems: list[str] = []

    @seed(11)
    @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(files=fuzz_sources.hostile_files(fmt))
    def run(files: dict[str, str]) -> None:
        counts["cases"] += 1
        with tempfile.TemporaryDirectory() as workdir:
            try:
                outcome = fuzz_sources.check_example(Path(workdir), fmt, files)
            except AssertionError as exc:
                kind = "internal" if "internal error" in str(exc) else "promise"
                counts[kind] += 1
                if len(problems) < 3:
                    problems.append(f"{kind}: {str(exc).splitlines()[0][:160]}")
                return
            if outcome.internal_error:
                counts["internal"] += 1

    run()
    return counts["cases"], counts["internal"], counts["promise"], problems


def fixed_counts(fmt: str, size: int) -> tuple[int, int, float, str]:
    """(cases, internal errors, worst seconds, worst pattern) for the bad-file source and every
    adversarial line pattern of ``fmt`` at ``size`` characters."""
    cases = internal = 0
    worst, worst_case = 0.0, ""
    with tempfile.TemporaryDirectory() as workdir:
        source = hostile.build_bad_source(Path(workdir) / "bad", fmt)
        _, _, error = hostile.import_in_process(Path(workdir) / "bad.db", source.path, fmt)
        cases += hostile.bad_case_count(fmt)  # one import holds them all: an error counts once
        internal += bool(error and error.startswith("internal error"))
    for case in hostile.ADVERSARIAL_LINES[fmt]:
        with tempfile.TemporaryDirectory() as workdir:
            src = hostile.write_line_source(Path(workdir) / "src", fmt, case, size)
            started = time.perf_counter()
            _, _, error = hostile.import_in_process(Path(workdir) / "g.db", src, fmt)
            seconds = time.perf_counter() - started
        cases += 1
        internal += bool(error and error.startswith("internal error"))
        if seconds > worst:
            worst, worst_case = seconds, case
    return cases, internal, worst, worst_case


def long_query(corpus: Path, words: int = 1500) -> str:
    text = " ".join(p.read_text(encoding="utf-8", errors="ignore") for p in sorted(corpus.rglob("*.md"))[:200])
    vocabulary = re.findall(r"[A-Za-z]{3,}", text)
    rng = random.Random(7)
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def query_times(corpus: Path, runs: int) -> None:
    from ctx import Graph
    from ctx.inspection import search_report

    query = long_query(corpus)
    with tempfile.TemporaryDirectory() as workdir:
        db = Path(workdir) / "graph.db"
        graph = Graph.open(db, create=True)
        graph.import_path(corpus)
        search_report(graph, "warm up", limit=20, fmt="text")
        graph.build("warm up")
        searches, builds = [], []
        for _ in range(runs):
            started = time.perf_counter()
            search_report(graph, query, limit=20, fmt="text")
            searches.append(time.perf_counter() - started)
            started = time.perf_counter()
            graph.build(query, max_tokens=4000)
            builds.append(time.perf_counter() - started)
        graph.close()
        print(f"  in-process, warm (median of {runs}): search {statistics.median(searches):.3f} s,"
              f" build {statistics.median(builds):.3f} s   [load {load()}]")
        ctx = str(Path(sys.executable).parent / "ctx") if (Path(sys.executable).parent / "ctx").exists() else "ctx"
        for command in (["search", query], ["build", query]):
            started = time.perf_counter()
            done = subprocess.run([ctx, *command, "--db", str(db)], capture_output=True, check=False, timeout=600)
            seconds = time.perf_counter() - started
            outcome = f"exit {done.returncode}" + (f": {done.stderr.decode()[:120]}" if done.returncode else "")
            print(f"  cold `ctx {command[0]}` process: {seconds:.3f} s ({outcome})   [load {load()}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100, help="generated sources per importer")
    parser.add_argument("--size", type=int, default=1_000_000, help="characters in an adversarial line")
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", nargs="*", default=list(hostile.FORMATS))
    args = parser.parse_args()
    os.environ.setdefault("CTX_HOME", tempfile.mkdtemp(prefix="ctx-bench-home-"))

    from ctx.tokens import get_encoding

    get_encoding("cl100k_base")
    print(f"load average at start: {load()}")
    print(f"\n1-2. hostile cases per importer ({args.examples} generated + bad files + "
          f"{args.size:,}-character lines), internal errors, worst line")
    total_cases = total_internal = 0
    worst_overall = (0.0, "", "")
    for fmt in args.formats:
        cases, internal, promise, problems = fuzz_counts(fmt, args.examples)
        fixed, fixed_internal, worst, worst_case = fixed_counts(fmt, args.size)
        total_cases += cases + fixed
        total_internal += internal + fixed_internal
        if worst > worst_overall[0]:
            worst_overall = (worst, fmt, worst_case)
        print(f"  {fmt:9s} cases {cases + fixed:5d} (generated {cases}, fixed {fixed})"
              f"  internal errors {internal + fixed_internal}  other broken promises {promise}"
              f"  worst line {worst:.2f} s ({worst_case})   [load {load()}]")
        for problem in problems:
            print(f"      {problem}")
    print(f"  all: {total_cases} cases, {total_internal} internal errors;"
          f" worst {args.size:,}-character line {worst_overall[0]:.2f} s ({worst_overall[1]}: {worst_overall[2]})")

    corpus = args.corpus or (DEFAULT_CORPUS if DEFAULT_CORPUS.exists() else REPO / "fixtures" / "demo-vault")
    print(f"\n3. a 1,500-word query on {corpus.name}")
    query_times(corpus, args.runs)
    print(f"\nload average at end: {load()}")


if __name__ == "__main__":
    main()
