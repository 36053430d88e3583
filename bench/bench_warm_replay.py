"""Warm answers in one process: bench_scale's MCP sequence replayed through ``CtxTools``, with CPU.

    python bench/bench_warm_replay.py --size 100k                 # the graph bench_scale imported
    python bench/bench_warm_replay.py --size 100k --stages        # and CPU per pipeline stage
    PYTHONPATH=OTHER/cli python bench/bench_warm_replay.py ...    # another checkout, for a before

Through the server (``bench_scale.py --mcp-only``) a call's wall time on this shared 2-core machine
is 2-4x its CPU and moves by tens of ms between runs; here the same calls run in this process as the
server runs them (warmed up, the collector tuned: ``warm.settle``), and each call's CPU time is that
of its thread. The sequence is bench_scale's: one first call, the manifest's topics (typical, hub,
free text) at each depth asked ``--runs`` + 1 times, then ``--topics`` notes and ``--questions``
free-text questions the server has not answered, each depth its own (what an agent moving from
note to note asks; ``--deeper`` also asks the first depth's again at each deeper depth, as an agent
going deeper into one topic does: bench_scale's ``fresh_series``). ``--profile LABEL`` (e.g. "new
topics d3") samples that series with pyinstrument (when installed) into
bench/out/warm-replay-profile.txt. Each series also prints a call's system CPU (its mean), its
voluntary context switches (the thread blocked: I/O, a lock), involuntary ones (preempted) and
read system calls.

Against bench_scale's figures through the server: ask the manifest's topics as it does (``--runs``
equal to its ``--mcp-runs``, 3): with ``--runs 0`` the new calls come after 48 fewer calls, and
their CPU p50 came out lower in every pair measured (docs/scale.md, serve15). Here a call's wall
includes what the server does only once its answer is written (the manifest, the answer kept for
a repeat, the collection of its objects): a client through the server that asks again at once
pays it at its next call instead; bench_mcp_stamps.py shows each part of a served call.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scale import OUT, build_topics, fresh_series, spread_ids, spread_questions  # noqa: E402

STAGES = ("find_seeds", "collect", "rank", "prepare_text", "pack_and_report")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="100k", help="bench_scale's graph: 1k, 100k, 1M, or another seed's (100k-s11)")
    parser.add_argument("--db", type=Path, help="the graph (default: bench/out/graphs/SIZE-json[l].db)")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--deeper", action="store_true",
                        help="also the first depth's topics and questions asked again at each deeper depth")
    parser.add_argument("--runs", type=int, default=3, help="repeats of each manifest topic (0: none)")
    parser.add_argument("--depths", default="1,2,3,5")
    parser.add_argument("--stages", action="store_true", help="CPU per pipeline stage, per call")
    parser.add_argument("--profile", help="series to sample with pyinstrument, e.g. 'new topics d3'")
    args = parser.parse_args()
    db = args.db or next(
        (p for p in (OUT / "graphs" / f"{args.size}-json.db", OUT / "graphs" / f"{args.size}-jsonl.db") if p.exists()),
        None,
    )
    if db is None:
        raise SystemExit(f"no {args.size} graph under {OUT / 'graphs'}: run bench_scale.py --sizes {args.size} first")
    manifest = json.loads((OUT / "data" / args.size / "manifest.json").read_text())
    depths = [int(d) for d in args.depths.split(",")]

    import ctx
    import ctx.assemble.pipeline as pipeline
    from ctx.assemble import warm
    from ctx.mcp_server import CtxTools

    print(f"ctx from {Path(ctx.__file__).parent}; {db}; load {os.getloadavg()[0]:.1f}", flush=True)
    stage_cpu: dict[str, float] = {}
    if args.stages:
        for name in STAGES:
            stage = getattr(pipeline, name, None)
            if stage is not None:
                setattr(pipeline, name, _timed(stage, name, stage_cpu))
    warm.enable()
    tools = CtxTools(db)
    began = time.process_time()
    tools.warm_up()
    warm.settle()
    print(f"warm-up: {time.process_time() - began:.2f} s CPU", flush=True)
    profiler: Any = None
    if args.profile:
        try:
            from pyinstrument import Profiler
        except ImportError:
            raise SystemExit("--profile needs pyinstrument (pip install pyinstrument)") from None
        profiler = Profiler(interval=0.0005)

    # Each call's thread system CPU (sampled at the clock tick: a series' mean is the figure), its
    # voluntary switches (the thread blocked: I/O, a lock), involuntary ones (preempted) and read
    # system calls (SQLite reads each page its cache does not hold with one).
    rusage: list[tuple[float, int, int, int]] = []

    def reads() -> int:
        with open("/proc/thread-self/io") as io:
            return next(int(line.split()[1]) for line in io if line.startswith("syscr:"))

    def call(topic: str, depth: int) -> tuple[float, float]:
        read = reads()
        ru, cpu, wall = resource.getrusage(resource.RUSAGE_THREAD), time.thread_time(), time.perf_counter()
        reply = tools.context(topic, depth=depth, max_tokens=4000)
        if reply.is_error and "not found" not in (reply.extra[-1] if reply.extra else reply.text):
            raise SystemExit(f"context {topic!r} failed: {reply.text}")
        cpu, wall = (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000
        now = resource.getrusage(resource.RUSAGE_THREAD)
        rusage.append(((now.ru_stime - ru.ru_stime) * 1000, now.ru_nvcsw - ru.ru_nvcsw, now.ru_nivcsw - ru.ru_nivcsw,
                       reads() - read))
        return cpu, wall

    topics = build_topics(manifest, "json")
    call(topics["typical"], 1)
    if args.runs:
        for name, topic in topics.items():
            for depth in depths:
                cpus = [call(topic, depth)[0] for _ in range(args.runs + 1)]
                print(f"{name} d{depth}: first {cpus[0]:.0f} ms CPU, then p50 {statistics.median(cpus[1:]):.1f}", flush=True)
    fresh = fresh_series(spread_ids(db, args.topics * len(depths)),
                         spread_questions(db, args.questions * len(depths)), depths, args.deeper)
    for name, depth, asked in fresh:
        label = f"{name} d{depth}"
        stage_cpu.clear()
        rusage.clear()
        cpus, walls = [], []
        for topic in asked:
            if profiler is not None and label == args.profile:
                profiler.start()
            cpu, wall = call(topic, depth)
            if profiler is not None and label == args.profile:
                profiler.stop()
            cpus.append(cpu)
            walls.append(wall)
        print(f"{label} ({len(asked)}): CPU p50 {statistics.median(cpus):.0f} p95 {percentile(cpus, 0.95):.0f} ms,"
              f" wall p50 {statistics.median(walls):.0f} p95 {percentile(walls, 0.95):.0f} ms"
              f" (load {os.getloadavg()[0]:.1f})", flush=True)
        print(f"    a call: system CPU mean {statistics.mean(r[0] for r in rusage):.1f} ms; p50 voluntary switches"
              f" {statistics.median(r[1] for r in rusage):.0f}, involuntary {statistics.median(r[2] for r in rusage):.0f},"
              f" read system calls {statistics.median(r[3] for r in rusage):.0f}")
        if stage_cpu:
            print("    CPU per call: " + ", ".join(f"{k} {v * 1000 / len(asked):.1f}" for k, v in stage_cpu.items()) + " ms")
    if profiler is not None:
        path = OUT / "warm-replay-profile.txt"
        path.write_text(profiler.output_text(unicode=False, color=False))
        print(f"profile: {path}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


def _timed(stage: Any, name: str, into: dict[str, float]) -> Any:
    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time()
        try:
            return stage(*args, **kwargs)
        finally:
            into[name] = into.get(name, 0.0) + time.thread_time() - began

    return timed


if __name__ == "__main__":
    main()
