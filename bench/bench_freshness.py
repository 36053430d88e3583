"""What the opt-in freshness check (config `sync: before_build: true`) costs on a large vault.

    python bench/bench_freshness.py [--notes 13000] [--runs 7]

Generates a vault of ``--notes`` linked markdown notes under bench/out/ (once; reused), imports it,
then prints medians of:

* the stat-only check in process (list every file, compare size and mtime with the graph):
  what each `ctx build` or MCP call pays when the check is due and nothing changed;
* the same check when it is not due (rate-limited: one read of the graph's meta table);
* `ctx build` as a whole command with the setting off, and on with `interval: 0` (checked on every
  build), so the difference is the check's share of a real build;
* the check plus re-import after one note was edited.

The machine is shared: the load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
WORDS = (
    "launch budget risk review design sync offline cache schema team customer release beta test "
    "plan goal metric latency storage conflict merge query index graph note person meeting task"
).split()


def ctx_executable() -> str:
    local = Path(sys.executable).parent / "ctx"
    return str(local) if local.exists() else "ctx"


def make_vault(root: Path, notes: int) -> None:
    """``notes`` notes in 100 folders, each with frontmatter, a few sentences and 3 wikilinks."""
    marker = root / ".complete"
    if marker.exists() and marker.read_text() == str(notes):
        return
    rng = random.Random(13)
    for i in range(notes):
        folder = root / f"area-{i % 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        links = " ".join(f"[[Note {rng.randrange(notes):05d}]]" for _ in range(3))
        text = " ".join(rng.choice(WORDS) for _ in range(60))
        (folder / f"Note {i:05d}.md").write_text(
            f"---\ntags: [{rng.choice(WORDS)}]\ndate: 2025-{1 + i % 12:02d}-{1 + i % 28:02d}\n---\n"
            f"# Note {i:05d}\n\n{text}.\n\nSee {links}.\n",
            encoding="utf-8",
        )
    marker.write_text(str(notes))


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=13_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    from ctx.freshness import refresh, stale_sources
    from ctx.importers.engine import import_path
    from ctx.store import connect

    vault = OUT / f"vault-{args.notes}"
    make_vault(vault, args.notes)
    db = OUT / f"freshness-{args.notes}.db"
    conn = connect(db, create=True)
    started = time.perf_counter()
    report = import_path(conn, vault)
    print(f"vault: {args.notes} notes in {vault} ({'imported' if report.changed else 'already imported'}"
          f" in {time.perf_counter() - started:.1f} s)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    check = median_seconds(lambda: stale_sources(conn), args.runs)
    print(f"stat-only check, nothing changed: {check * 1000:.0f} ms (median of {args.runs})")
    refresh(conn, interval=3600)
    not_due = median_seconds(lambda: refresh(conn, interval=3600), args.runs)
    print(f"check not due (rate-limited): {not_due * 1000:.2f} ms")

    note = vault / "area-07" / "Note 00007.md"
    original = note.read_text(encoding="utf-8")

    def edit_and_refresh() -> None:
        note.write_text(original + f"\nEdited {time.time()}.\n", encoding="utf-8")
        result = refresh(conn, interval=0)
        assert result.stale == [str(vault.resolve())], result

    edited = median_seconds(edit_and_refresh, args.runs)
    print(f"check + incremental re-import after one edit: {edited * 1000:.0f} ms")
    note.write_text(original, encoding="utf-8")
    refresh(conn, interval=0)
    conn.close()

    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, CTX_HOME=home)
        build = [ctx_executable(), "build", "Note 00042", "--db", str(db), "--max-tokens", "2000"]
        wall(build, env)  # warm the OS cache and the tokenizer cache
        off = statistics.median(wall(build, env) for _ in range(args.runs))
        Path(home, "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n")
        on = statistics.median(wall(build, env) for _ in range(args.runs))
    print(f"`ctx build` whole command: {off * 1000:.0f} ms with the setting off,"
          f" {on * 1000:.0f} ms with it on and checking every build (+{(on - off) * 1000:.0f} ms)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
