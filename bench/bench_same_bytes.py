"""Same bytes: record what a corpus of imports and builds gives, then check another ctx gives the same.

    python bench/bench_same_bytes.py --record bench/out/same-bytes.json    # at the commit before a change
    python bench/bench_same_bytes.py --compare bench/out/same-bytes.json   # after it: differences listed

A refactor that must not change answers (the store's face, a faster query) is checked here rather
than by eye: every corpus is imported into a fresh graph (its rows are digested: nodes, edges, name
keys, passages, files, settings other than times), then built for every built-in lens and "auto"
over title topics picked from the graph (and at tiny budgets, where packing does most), the
corpus's fact questions (bench/facts) as free text in markdown and JSON, a few budgets, --explain
and --include-private, and answered by search, show and stats. Each output's SHA-256 is recorded
under a stable name (the time of the last sync a JSON answer states is masked: it is when the
import ran, not what the graph holds); --compare re-runs them all and lists every name whose digest
differs or that appeared or disappeared.

To record the starting commit without checking it out: ``git archive <commit> cli lenses | tar -x -C DIR``,
then ``PYTHONPATH=DIR/cli python bench/bench_same_bytes.py --record FILE`` (the same venv; without
``lenses`` in the archive the built-in lenses are not found and every build fails alike). Reports
leave out what names the run rather than the graph: the graph's path, import times.

The corpora are the fixtures and ../shared/corpora (absent ones are skipped, and said so);
``--embed`` also embeds the demo vault with the default model and builds its topics with vectors.
``--warm`` builds as the MCP server does (``ctx.assemble.warm``: candidate pools kept between builds
under the graph's state): each request is built cold, then twice warm (the second takes the pool the
first kept), and every warm build whose bytes differ from the cold one's is listed (WARM DIFFERS).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from factcheck import CORPORA, load_questions  # noqa: E402

FIXTURES = REPO / "fixtures"
SOURCES = {
    "demo-vault": FIXTURES / "demo-vault",
    "outline-logseq": FIXTURES / "outline-logseq",
    "claims": FIXTURES / "claims.jsonl",
    "foam-docs": CORPORA / "foam-docs",
    "dendron-site": CORPORA / "dendron-site",
    "logseq-docs": CORPORA / "logseq-docs",
    "obsidian-dwarves-brain": CORPORA / "obsidian-dwarves-brain",
    "tana-books": CORPORA / "tana-books",
    "tana-basic": CORPORA / "tana-basic",
    "roam-fixtures": CORPORA / "roam-fixtures",
    "notion-export": CORPORA / "notion-export",
}
# An undated note is dated by its file's time, and no source's file times are content: the fixtures'
# are when the checkout was made, the shared corpora's when ../shared was last copied onto the
# machine (it is re-made between sessions). Each run imports a copy whose files all carry this one
# time, so that two checkouts, or two days, of the same code give the same digests.
FIXED_MTIME_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
TITLES = 12  # title topics per corpus, spread over the graph's ids
WARM = False  # --warm: build as a warm process does (ctx.assemble.warm), each request twice
# Times of the import itself are not the graph's content, nor is the file's inode ("birth").
SKIPPED_META = {"last_import", "sources_checked_at", "birth"}
TIMED_META = {"sources_pending": "at"}  # meta values whose JSON carries when they were written
# A fresh answer's JSON says when the graph was last synced (the import just made): a time, not
# content. It is masked in the digest; its length stays the same, so does the token count.
LAST_SYNC = re.compile(r'"last_sync": ?"[0-9T:Z-]*"')
TABLES = {  # table -> columns left out of the digest
    "nodes": set(),
    "edges": set(),
    "node_keys": set(),
    "passages": set(),
    "files": set(),
    "sources": {"imported_at", "checked_at", "root"},
}


def digest(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def untimed(key: str, value: str) -> str:
    field = TIMED_META.get(key)
    if field is None:
        return value
    data = json.loads(value)
    data.pop(field, None)
    return json.dumps(data, sort_keys=True)


def timeless(text: str) -> str:
    return LAST_SYNC.sub('"last_sync":"-"', text)


def lens_names() -> list[str]:
    import ctx

    found = set()
    for folder in (Path(ctx.__file__).parent / "_builtin_lenses", REPO / "lenses"):
        found.update(p.stem for p in folder.glob("*.yaml"))
    return ["auto", *sorted(found)]


def graph_rows(corpus: str, db: Path) -> Iterator[tuple[str, str]]:
    """(name, digest) of each table's rows, in a fixed order; then the settings."""
    conn = sqlite3.connect(db)
    try:
        for table, skipped in TABLES.items():
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in skipped]
            if not columns:
                continue
            listed = ", ".join(f'"{c}"' for c in columns)
            rows = conn.execute(f"SELECT {listed} FROM {table} ORDER BY {listed}").fetchall()
            yield f"rows/{corpus}/{table}", digest([list(r) for r in rows])
        meta = sorted((k, untimed(k, v)) for k, v in conn.execute("SELECT key, value FROM meta") if k not in SKIPPED_META)
        yield f"rows/{corpus}/meta", digest(meta)
    finally:
        conn.close()


def title_topics(db: Path, count: int) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        titles = [
            r[0]
            for r in conn.execute(
                "SELECT title FROM nodes WHERE private = 0 AND type != 'tag' AND title != '' ORDER BY id"
            )
        ]
    finally:
        conn.close()
    if len(titles) <= count:
        return titles
    step = len(titles) / count
    return [titles[int(i * step)] for i in range(count)]


def builds(corpus: str, db: Path, questions: list[str], lenses: list[str]) -> Iterator[tuple[str, str]]:
    from ctx import Graph
    from ctx.errors import CtxError
    from ctx.inspection import search_report, show_report, stats_report

    def built(name: str, graph: Graph, topics: tuple[str, ...], **options: object) -> tuple[str, str]:
        try:
            if WARM:
                return name, warm_outcome(graph, topics, options, name)
            result = graph.build(list(topics), **options)
        except CtxError as exc:
            return name, digest(["error", exc.__class__.__name__, str(exc)])
        return name, digest([timeless(result.text), result.found, result.warnings, result.candidates])

    titles = title_topics(db, TITLES)
    with Graph.open(db) as graph:
        for title in titles:
            for lens in lenses:
                yield built(f"build/{corpus}/{lens}/{title}", graph, (title,), lens=lens, max_tokens=2000)
            yield built(f"build-json/{corpus}/{title}", graph, (title,), format="json", max_tokens=2000)
            yield built(f"build-small/{corpus}/{title}", graph, (title,), max_tokens=600, depth=3)
            # Where packing does most: summary-only, compact seeds, the smaller headers.
            for tiny in (120, 300):
                yield built(f"build-tiny/{corpus}/{tiny}/{title}", graph, (title,), max_tokens=tiny)
            yield built(f"build-json-tiny/{corpus}/{title}", graph, (title,), format="json", max_tokens=450)
        yield built(f"build-many/{corpus}", graph, tuple(titles[:4]), max_tokens=4000, explain=True)
        for i, question in enumerate(questions):
            for lens in ("auto", "question"):
                yield built(f"question/{corpus}/{lens}/{i}", graph, (question,), lens=lens, max_tokens=2000)
            yield built(f"question-json/{corpus}/{i}", graph, (question,), format="json", max_tokens=2000, explain=True)
        for topic in [*titles[:4], *questions[:4]]:
            yield f"search/{corpus}/{topic[:40]}", digest(timeless(search_report(graph, topic, limit=20, fmt="json").text))
        for title in titles[:6]:
            try:
                shown = show_report(graph, title, fmt="json").text
            except CtxError as exc:
                shown = str(exc)
            yield f"show/{corpus}/{title}", digest(shown)
        yield f"stats/{corpus}", digest(stats_report(graph, fmt="json").data | {"sources": None, "last_import": None, "graph": None})
    with Graph.open(db, include_private=True) as graph:
        for title in titles[:4]:
            yield built(f"private/{corpus}/{title}", graph, (title,), max_tokens=2000)
        yield f"private-stats/{corpus}", digest(stats_report(graph, fmt="json").data | {"sources": None, "last_import": None, "graph": None})


WARM_DIFFERS: list[str] = []
WARM_REQUESTS: list[str] = []


def warm_outcome(graph: Any, topics: tuple[str, ...], options: dict[str, Any], name: str) -> str:
    """The cold build's digest; a warm build of the same request (twice: the second takes the pool
    the first kept) that gives other bytes is listed in WARM_DIFFERS."""
    from ctx.assemble import warm

    with warm.paused():
        cold = graph.build(list(topics), **options)
    cold_digest = digest([timeless(cold.text), cold.found, cold.warnings, cold.candidates])
    # Every other request with every node's walk details read at once, as the MCP server's
    # warm-up reads them; the others with those details read as walks meet them.
    WARM_REQUESTS.append(name)
    if len(WARM_REQUESTS) % 2 and hasattr(warm, "preload"):
        warm.preload(graph.reader)
    elif hasattr(warm, "_details"):
        warm._details.clear()
    for attempt in ("first", "kept"):
        again = graph.build(list(topics), **options)
        if digest([timeless(again.text), again.found, again.warnings, again.candidates]) != cold_digest:
            WARM_DIFFERS.append(f"{name} ({attempt} warm build)")
    return cold_digest


def fixed_time_copy(source: Path, work: Path) -> Path:
    """A copy of a source under work/sources whose every file and folder has FIXED_MTIME_NS."""
    copy = work / "sources" / source.name
    if copy.exists():
        shutil.rmtree(copy) if copy.is_dir() else copy.unlink()
    copy.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, copy)
        paths = sorted(copy.rglob("*"), reverse=True)  # children before their folder
    else:
        shutil.copy2(source, copy)
        paths = []
    for path in [*paths, copy]:
        os.utime(path, ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))
    return copy


def run(work: Path, embed: bool, only: list[str] | None) -> tuple[dict[str, str], list[str]]:
    from ctx import Graph

    lenses = lens_names()
    questions: dict[str, list[str]] = {}
    for q in load_questions():
        questions.setdefault(q.corpus, []).append(q.question)
    results: dict[str, str] = {}
    notes: list[str] = []
    for corpus, source in SOURCES.items():
        if only and corpus not in only:
            continue
        if not source.exists():
            notes.append(f"{corpus}: skipped ({source} is absent)")
            continue
        db = work / f"{corpus}.db"
        for stale in work.glob(f"{corpus}.db*"):
            stale.unlink() if stale.is_file() else shutil.rmtree(stale)
        started = time.perf_counter()
        source = fixed_time_copy(source, work)
        with Graph.open(db, create=True) as graph:
            report = graph.import_path(source)
        results[f"import/{corpus}"] = digest([report.nodes_written, report.edges_written, sorted(report.warnings)])
        results.update(graph_rows(corpus, db))
        results.update(builds(corpus, db, questions.get(corpus, []), lenses))
        if embed and corpus == "demo-vault":
            with Graph.open(db) as graph:
                graph.embed()
            for name, value in builds(f"{corpus}+emb", db, [
                "what is blocking the launch?", "who owns the budget", "notes about writing",
            ], lenses):
                results[name] = value
        notes.append(f"{corpus}: {sum(1 for k in results if f'/{corpus}' in k)} outputs, {time.perf_counter() - started:.1f} s")
    return results, notes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--record", type=Path, help="write the digests here")
    group.add_argument("--compare", type=Path, help="compare with digests recorded here")
    parser.add_argument("--work", type=Path, default=HERE / "out" / "same-bytes", help="where the graphs go")
    parser.add_argument("--embed", action="store_true", help="also embed the demo vault (needs the embed extra)")
    parser.add_argument("--only", help="comma-separated corpus names")
    parser.add_argument("--warm", action="store_true",
                        help="build as the MCP server does: pools kept between builds, each request built twice"
                        " (compare with a record made without it)")
    args = parser.parse_args()
    if args.warm:
        global WARM
        from ctx.assemble import warm

        warm.enable()
        WARM = True
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("CTX_HOME", str(args.work / "ctx-home"))  # no user configuration changes defaults
    args.work.mkdir(parents=True, exist_ok=True)
    import ctx

    print(f"ctx from {Path(ctx.__file__).parent}; load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    results, notes = run(args.work, args.embed, args.only.split(",") if args.only else None)
    for note in notes:
        print(note, file=sys.stderr)
    builds_count = sum(1 for k in results if not k.startswith(("rows/", "import/")))
    if WARM:
        for name in WARM_DIFFERS:
            print(f"WARM DIFFERS  {name}")
        print(f"warm builds: {len(WARM_DIFFERS)} differ from the cold build of the same request")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(results, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {len(results)} digests ({builds_count} builds and reports) in {args.record}")
        return 0
    recorded = json.loads(args.compare.read_text(encoding="utf-8"))
    differ = sorted(k for k in results.keys() & recorded.keys() if results[k] != recorded[k])
    missing = sorted(recorded.keys() - results.keys())
    added = sorted(results.keys() - recorded.keys())
    for name in differ:
        print(f"DIFFERS  {name}")
    for name in missing:
        print(f"MISSING  {name}")
    for name in added:
        print(f"NEW      {name}")
    same = len(results.keys() & recorded.keys()) - len(differ)
    print(f"same bytes on {same} of {len(recorded)} recorded outputs ({builds_count} builds and reports);"
          f" {len(differ)} differ, {len(missing)} missing, {len(added)} new")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
