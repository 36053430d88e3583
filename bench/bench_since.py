"""What `ctx build --since last` costs beside a full build, and what a diff saves, on a large vault.

    python bench/bench_since.py [--notes 13000] [--runs 7] [--max-tokens 4000]

Uses bench_freshness's generated vault (``--notes`` linked markdown notes under bench/out/, made
once and reused; seeded, so every run has the same notes), imported into its own graph. Then, as a
user runs them (the installed `ctx`, subprocesses, a scratch CTX_HOME), medians of CPU time
(user+sys of the child) and wall time of:

* a full build of a topic (which records its manifest, as every build does), and the same
  with recording turned off (config ``contexts.keep: 0``), interleaved;
* `--since last` right after it, nothing changed (the same id: answered without building);
* `--since last` after one note the context shows was edited and re-imported (a real diff);

and the tokens of that diff beside the full context's. The machine is shared: the load average
is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench_freshness import OUT, ctx_executable, make_vault

from ctx.tokens import count_tokens

TOPIC = "Note 00042"


def run(argv: list[str], env: dict[str, str]) -> tuple[str, float, float]:
    """(stdout, CPU seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(argv, check=True, capture_output=True, env=env, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result.stdout, cpu, wall


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=13_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--max-tokens", type=int, default=4000)
    args = parser.parse_args()

    vault = OUT / f"vault-{args.notes}"
    make_vault(vault, args.notes)
    db = OUT / f"since-{args.notes}.db"
    ctx = ctx_executable()
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, CTX_HOME=home)
        started = time.perf_counter()
        subprocess.run([ctx, "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
        print(f"vault: {args.notes} notes in {vault}; import (or no-op re-import) {time.perf_counter() - started:.1f} s")
        print(f"load average before: {load()}")
        build = [ctx, "build", TOPIC, "--db", str(db), "--max-tokens", str(args.max_tokens)]
        since = [*build, "--since", "last"]
        run(build, env)  # warm the OS cache

        full = [run(build, env) for _ in range(args.runs)]
        # The same build recording nothing (config contexts.keep: 0), interleaved: what the
        # manifest every build records costs.
        with tempfile.TemporaryDirectory() as bare_home:
            Path(bare_home, "config.yaml").write_text("contexts:\n  keep: 0\n", encoding="utf-8")
            bare_env = dict(os.environ, CTX_HOME=bare_home)
            recorded, bare = [], []
            for _ in range(args.runs):
                recorded.append(run(build, env))
                bare.append(run(build, bare_env))
        same = [run(since, env) for _ in range(args.runs)]
        assert all("unchanged since" in out for out, _, _ in same), same[0][0][:300]

        # One note the context shows, edited: a sentence added to its text.
        context = full[0][0]
        shown = re.findall(r"^### (Note \d{5})", context, flags=re.MULTILINE)
        target = next(n for n in shown if n != TOPIC)
        note = next(vault.glob(f"area-*/{target}.md"))
        original = note.read_text(encoding="utf-8")
        diffs = []
        try:
            for i in range(args.runs):
                run(build, env)  # the context the reader has, recorded
                note.write_text(original.replace("\n\nSee ", f"\n\nEdited {i}: the CORMORANT-{i} figure.\n\nSee ", 1),
                                encoding="utf-8")
                subprocess.run([ctx, "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
                diffs.append(run(since, env))
                full_after = run(build, env)[0]
        finally:
            note.write_text(original, encoding="utf-8")
            subprocess.run([ctx, "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
        diff_text = diffs[-1][0]
        assert f"CORMORANT-{args.runs - 1}" in diff_text, diff_text[:600]

    def med(rows: list[tuple[str, float, float]]) -> str:
        return (f"CPU {statistics.median(r[1] for r in rows) * 1000:.0f} ms,"
                f" wall {statistics.median(r[2] for r in rows) * 1000:.0f} ms")

    print(f"topic {TOPIC!r}, --max-tokens {args.max_tokens}, medians of {args.runs}:")
    print(f"  full build:                          {med(full)}")
    print(f"  full build recording its manifest:   {med(recorded)} (interleaved with the next line)")
    print(f"  full build recording none (keep: 0): {med(bare)}")
    print(f"  --since last, nothing changed:       {med(same)}")
    print(f"  --since last, one shown note edited: {med(diffs)}")
    full_tokens, diff_tokens = count_tokens(full_after), count_tokens(diff_text)
    print(f"  tokens: full context {full_tokens}, diff {diff_tokens}"
          f" ({100 * (1 - diff_tokens / full_tokens):.0f}% fewer), unchanged line {count_tokens(same[0][0])}")
    print(f"  the diff ({target} edited):")
    print("    " + "\n    ".join(diff_text.rstrip("\n").splitlines()[:12]))
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
