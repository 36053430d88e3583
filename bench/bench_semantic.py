"""Semantic layer speed: embedding throughput, cold `ctx build` wall time, vector search at 100k.

    python bench/bench_semantic.py                 # everything
    python bench/bench_semantic.py --skip-embed    # reuse the embedded graph in --workdir
    python bench/bench_semantic.py --embed-only    # only the `ctx embed` figures
    python bench/bench_semantic.py --embed-only --model DIR   # another model, e.g. a static one
                                                              # (bench/static_model.py makes one)
    python bench/bench_semantic.py --fast          # `ctx embed --fast` (the first stage only), then
                                                   # the builds on that graph (questions embed
                                                   # their candidates)

1. `ctx embed` on ../shared/corpora/obsidian-dwarves-brain from scratch: passages and nodes per second,
   wall and CPU (process start and model load included), then a second run (nothing to do).
2. `ctx build` wall time as a subprocess (process start included), median of --runs: an ID topic
   (seed vectors, no model), a free-text topic the first time (numpy encoder) and repeated (query
   cache). Also checks that no run imported torch (`python -X importtime`).
3. Vector search over 100,000 synthetic 384-d unit vectors stored in a graph file: loading the
   matrix from SQLite, from the .npy cache, and one top-10 query.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("CTX_SHARED_DIR", REPO.parent / "shared"))
VAULT = SHARED / "corpora" / "obsidian-dwarves-brain"
ID_TOPIC = "_index"
FREE_TEXT = "how should a team run engineering hiring interviews"


def ctx(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["ctx", *args], capture_output=True, text=True, env=env, check=True)


def timed_build(db: Path, topic: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    ctx("build", topic, "--db", str(db), "--max-tokens", "4000", env=env)
    return time.perf_counter() - started


def heavy_imports(db: Path, topic: str, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ctx.app", "build", topic, "--db", str(db)],
        capture_output=True, text=True, env=env,
    )
    names = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    return sorted(n for n in names if n.split(".")[0] in ("torch", "sentence_transformers", "transformers"))


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bench_embed(workdir: Path, env: dict[str, str], model: str | None = None, fast: bool = False) -> Path:
    db = workdir / "dwarves.db"
    for stale in workdir.glob("dwarves.db*"):
        stale.unlink()
    ctx("import", str(VAULT), "--db", str(db), "-q", env=env)
    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), child_cpu()
    chosen = (["--model", model] if model else []) + (["--fast"] if fast else [])
    first = json.loads(ctx("embed", "--db", str(db), "-q", "--output", "json", *chosen, env=env).stdout)
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    started = time.perf_counter()
    second = json.loads(ctx("embed", "--db", str(db), "-q", "--output", "json", *chosen, env=env).stdout)
    again = time.perf_counter() - started
    texts = first["embedded"] + first["passages_embedded"]
    # .get: an older ctx (A/B runs) does not say how it ran.
    print(f"ctx embed, dwarves-brain: {first['passages_embedded']} passages + {first['embedded']} nodes"
          f" ({first.get('precision', '?')}, {first.get('threads', '?')} thread(s)),"
          f" load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"  {wall:.1f} s wall, {cpu:.1f} s CPU (process start and model load included):"
          f" {texts / wall:.1f} texts/s wall, {texts / cpu:.1f} texts per CPU-second")
    if first.get("static_passages"):
        print(f"  first stage: {first['static_passages']} passages given static vectors,"
              f" searchable by meaning after {first['first_stage_seconds']:.1f} s wall"
              f"{' (then stopped: --fast)' if fast else ''}")
    print(f"ctx embed again: {second['embedded']} embedded, {again:.2f} s wall")
    return db


def bench_build(db: Path, runs: int, env: dict[str, str]) -> None:
    timed_build(db, ID_TOPIC, env)  # warm the page cache; nothing is cached by ctx for an id
    id_times = [timed_build(db, ID_TOPIC, env) for _ in range(runs)]
    first_times, repeat_times = [], []
    for _ in range(runs):
        # A question never asked before: embedded with the numpy encoder...
        question = f"{FREE_TEXT} {uuid.uuid4().hex[:8]}"
        first_times.append(timed_build(db, question, env))
        # ...and asked again: its vector comes from the query cache in the graph.
        repeat_times.append(timed_build(db, question, env))
    for label, times in (("ID topic", id_times), ("free text, first", first_times),
                         ("free text, repeated", repeat_times)):
        print(f"ctx build {label}: median {statistics.median(times):.3f} s, "
              f"max {max(times):.3f} s over {len(times)} runs (process start included)")
    heavy = heavy_imports(db, ID_TOPIC, env) + heavy_imports(db, f"{FREE_TEXT} {uuid.uuid4().hex[:8]}", env)
    print(f"heavy imports on the build path: {heavy or 'none'}")


def bench_vectors(workdir: Path, n: int, dim: int) -> None:
    import numpy as np

    from ctx.semantic import search
    from ctx.store import connect
    from ctx.store import vectors as vector_store
    from ctx.store.view import GraphView

    db = workdir / f"vectors-{n}.db"
    for stale in workdir.glob(f"vectors-{n}.db*"):
        if stale.is_dir():
            for f in stale.iterdir():
                f.unlink()
            stale.rmdir()
        else:
            stale.unlink()
    conn = connect(db, create=True)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"n{i:07d}" for i in range(n)]
    conn.execute("BEGIN")
    conn.execute("INSERT INTO sources (id, root, name, format) VALUES (1, '/bench', 'bench', 'json')")
    conn.executemany(
        "INSERT INTO nodes (id, title, source_id, content_hash) VALUES (?, ?, 1, ?)",
        [(i, i, f"h{i}") for i in ids],
    )
    conn.execute("COMMIT")
    vector_store.write_vectors(conn, "bench", [(i, f"h{i}", v) for i, v in zip(ids, vectors, strict=True)])
    vector_store.set_active_model(conn, "bench")
    conn.close()

    probe = n // 2  # any stored row: its own vector must come back first
    query = vectors[probe]
    results = {}
    for label in ("SQLite blobs (first load, writes the cache)", ".npy cache (memory-mapped)"):
        # A fresh process would start cold; a fresh connection is the closest in-process.
        conn = connect(db)
        started = time.perf_counter()
        index = search.load_index(GraphView(conn), "bench")
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        hits = index.nearest(query, 10)
        queried = time.perf_counter() - started
        assert hits[0][0] == ids[probe]
        results[label] = (loaded, queried)
        conn.close()
    query_times = []
    for _ in range(20):
        started = time.perf_counter()
        index.nearest(rng.standard_normal(dim).astype(np.float32), 10)
        query_times.append(time.perf_counter() - started)
    print(f"vector search, {n:,} x {dim} float32:")
    for label, (loaded, queried) in results.items():
        print(f"  load from {label}: {loaded * 1000:.0f} ms; top-10 query {queried * 1000:.1f} ms")
    print(f"  top-10 query, median of 20: {statistics.median(query_times) * 1000:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ctx-bench-semantic")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--skip-embed", action="store_true")
    parser.add_argument("--embed-only", action="store_true", help="only the `ctx embed` figures")
    parser.add_argument("--model", default=None, help="embed with this model (name or folder) instead of the default")
    parser.add_argument("--fast", action="store_true", help="`ctx embed --fast`: the first stage only")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    if VAULT.exists():
        db = args.workdir / "dwarves.db" if args.skip_embed else bench_embed(args.workdir, env, args.model, args.fast)
        if not db.exists():
            print(f"{db} not found: run once without --skip-embed first", file=sys.stderr)
            return 2
        if args.embed_only:
            return 0
        bench_build(db, args.runs, env)
    else:
        print(f"{VAULT} not found: embed and build figures skipped (set CTX_SHARED_DIR)")
    bench_vectors(args.workdir, args.nodes, 384)
    return 0


if __name__ == "__main__":
    sys.exit(main())
