"""Figures for the seed lenses (issue 6).

1. `ctx build --lens claims` on a generated claims graph of 10,000 claims (layered support DAG
   shaped like fixtures/claims.jsonl, with a few support cycles): wall time of the whole process,
   start-up included, median of N runs; plus import time.
2. Near-duplicate removal: a vault made of the demo vault plus an exact copy and an edited copy of
   every note; the same build with dedup off, exact only, and exact + near: tokens of the output
   when everything fits (tokens saved), and distinct notes shown under a 4,000-token budget.
   Also: duplicates found among the notes of a real corpus (obsidian-dwarves-brain), if present.

    python bench/bench_seed_lenses.py [--runs 10] [--claims 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CTX = str(Path(sys.executable).parent / "ctx")
SUBJECTS = ["street trees", "cool pavements", "green roofs", "cooling centres", "tree wardens", "soil cells",
            "canopy cover", "heat alerts", "drinking fountains", "shade sails", "urban wind corridors"]
VERBS = ["lowers", "raises", "reduces", "improves", "predicts", "depends on", "is limited by", "justifies"]
OBJECTS = ["summer surface temperatures", "heat-related admissions", "energy demand", "property values",
           "maintenance costs", "pedestrian comfort", "the planting budget", "neighbourhood equity"]
STATES = ["validated", "explore", "dirty", "orphaned"]
TYPES = ["reference", "concept", "thesis", "goal", "example"]


def generate_claims(n: int, path: Path, seed: int = 7) -> str:
    """A layered support DAG (roots = evidence, leaves = goals); returns a mid-layer claim id."""
    rnd = random.Random(seed)
    layers = 12
    per_layer = n // layers
    ids = [[f"L{layer:02d}-{i:05d}" for i in range(per_layer)] for layer in range(layers)]
    with path.open("w", encoding="utf-8") as out:
        for layer in range(layers):
            for i, cid in enumerate(ids[layer]):
                text = (f"{rnd.choice(SUBJECTS).capitalize()} {rnd.choice(VERBS)} {rnd.choice(OBJECTS)}"
                        f" in district {rnd.randint(1, 40)} (claim {cid}).")
                rec = {"id": cid, "content": text, "type": TYPES[min(layer // 3, 4)],
                       "confidence": round(rnd.uniform(0.3, 0.95), 2), "state": rnd.choice(STATES),
                       "tags": rnd.sample(["heat", "health", "budget", "equity", "soil", "energy"], 2),
                       "updated": f"2026-0{1 + layer % 9}-{1 + i % 28:02d}T09:00:00Z"}
                if layer:
                    rec["supported_by"] = sorted(set(rnd.choice(ids[layer - 1]) for _ in range(rnd.randint(1, 3))))
                out.write(json.dumps(rec) + "\n")
        # A few support loops across three layers (seed 000: cycles are reported, never followed).
        for k in range(5):
            a, b, c = ids[4][k], ids[5][k], ids[6][k]
            for src, dst in ((a, b), (b, c), (c, a)):
                out.write(json.dumps({"source": src, "target": dst, "type": "supports"}) + "\n")
    return ids[6][0]


def run(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run([CTX, *args], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, proc.stdout


def bench_claims(runs: int, n: int, work: Path) -> None:
    path = work / "claims10k.jsonl"
    target = generate_claims(n, path)
    db = work / "claims.db"
    seconds, _ = run(["import", str(path), "--db", str(db)])
    print(f"claims graph: {n} claims generated; ctx import {seconds:.2f} s")
    for budget, fmt in ((8000, "markdown"), (8000, "json"), (4000, "markdown")):
        args = ["build", target, "--lens", "claims", "--max-tokens", str(budget), "--format", fmt, "--db", str(db)]
        run(args)  # warm the page cache once; every timed run is still a fresh process
        times = []
        out = ""
        for _ in range(runs):
            seconds, out = run(args)
            times.append(seconds)
        doc = json.loads(run([*args[:-4], "--format", "json", "--db", str(db)])[1])
        candidates = len(doc["nodes"]) + len(doc.get("also_related", [])) + doc.get("omitted_count", 0)
        print(f"  ctx build {target} --lens claims --max-tokens {budget} --format {fmt}:"
              f" median {statistics.median(times):.3f} s, min {min(times):.3f} s, max {max(times):.3f} s"
              f" ({runs} runs; {candidates} candidates,"
              f" {len(doc['meta'].get('cycles', []))} cycle(s) reported)")


DEDUP_LENSES = {
    "off": "dedup: {exact: false, near: false}",
    "exact": "dedup: {exact: true, near: false}",
    "exact+near": "dedup: {exact: true, near: true}",
}


def duplicated_vault(work: Path) -> Path:
    vault = work / "dup-vault"
    shutil.copytree(REPO / "fixtures" / "demo-vault", vault)
    for note in sorted(vault.rglob("*.md")):
        text = note.read_text(encoding="utf-8")
        (note.parent / f"{note.stem} (copy).md").write_text(text, encoding="utf-8")
        lines = text.splitlines()
        # An edited copy: one line changed near the end, like a note duplicated and touched up.
        if len(lines) > 3:
            lines[-2] = lines[-2] + " (edited)"
        (note.parent / f"{note.stem} (edited).md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return vault


def bench_dedup(work: Path) -> None:
    vault = duplicated_vault(work)
    db = work / "dup.db"
    run(["import", str(vault), "--db", str(db)])
    print("near-duplicate removal: demo vault + an exact and an edited copy of each of its 31 notes")
    for topic in ("Project Apollo", "Apollo Launch Plan"):
        used_all: dict[str, int] = {}
        for name, line in DEDUP_LENSES.items():
            lens = work / f"dedup-{name}.yaml"
            lens.write_text(f"name: dedup-{name}\ndepth: 2\n{line}\noutput: {{also_related: false}}\n", encoding="utf-8")
            big = json.loads(run(["build", topic, "--lens", str(lens), "--max-tokens", "200000",
                                  "--format", "json", "--db", str(db)])[1])
            small = json.loads(run(["build", topic, "--lens", str(lens), "--max-tokens", "4000",
                                    "--format", "json", "--db", str(db)])[1])
            distinct = {n["id"].replace(" (copy)", "").replace(" (edited)", "") for n in small["nodes"]}
            used_all[name] = big["meta"]["tokens"]["used"]
            print(f"  {topic!r} dedup {name:>10}: everything-fits output {big['meta']['tokens']['used']:>6} tokens"
                  f" ({len(big['nodes'])} nodes); at 4,000 tokens {len(small['nodes'])} nodes,"
                  f" {len(distinct)} distinct notes")
        saved = used_all["off"] - used_all["exact+near"]
        print(f"  {topic!r}: tokens saved by exact+near dedup {saved} ({saved / used_all['off']:.0%});"
              f" by exact alone {used_all['off'] - used_all['exact']}")


def bench_real_corpus() -> None:
    corpus = REPO.parent / "shared" / "corpora" / "obsidian-dwarves-brain"
    if not corpus.exists():
        print("real corpus obsidian-dwarves-brain absent: skipped")
        return
    sys.path.insert(0, str(REPO / "cli"))
    from ctx.assemble.dedup import find_duplicates
    from ctx.tokens import count_many

    notes = sorted(corpus.rglob("*.md"))
    texts = [(str(p.relative_to(corpus)), p.read_text(encoding="utf-8", errors="replace")) for p in notes]
    tokens = dict(zip((t[0] for t in texts), count_many([t[1] for t in texts])))
    start = time.perf_counter()
    found = find_duplicates(texts, exact=True, near=True)
    seconds = time.perf_counter() - start
    exact = [d for d in found.values() if d.kind == "exact"]
    near = [d for d in found.values() if d.kind == "near"]
    print(f"obsidian-dwarves-brain: {len(notes)} notes, {sum(tokens.values())} tokens;"
          f" {len(exact)} exact and {len(near)} near duplicates ({sum(tokens[d.id] for d in found.values())}"
          f" tokens) found in {seconds:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--claims", type=int, default=10000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bench_claims(args.runs, args.claims, work)
        bench_dedup(work)
    bench_real_corpus()


if __name__ == "__main__":
    main()
