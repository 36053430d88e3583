"""Outline importers: cold `ctx import` time and nodes/s for tana-books and logseq-docs.

    python bench/bench_outline_import.py [--runs 5] [--corpora ../shared/corpora]

Every run is cold: a fresh process and a fresh database, so each import pays for loading the
tokenizer exactly as a user's first import does. Three figures per corpus, medians over the runs:

* import — ``report.seconds`` of ``ctx import --output json``: stat, read, parse, token counts,
  the write transaction and link resolution (everything but interpreter start-up);
* command — wall time of the whole ``ctx import`` process;
* nodes/s — nodes written / import seconds. For Tana also the export's docs/s (tana-books holds
  5,243 docs, of which the content nodes are imported; the rest are schema, tuples and trash).

Target (issue 4): >= 20,000 nodes/s for tana-books.
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
CORPORA = {"tana-books": "sample-workspace.json", "logseq-docs": None}


def ctx_executable() -> str:
    local = Path(sys.executable).parent / "ctx"
    return str(local) if local.exists() else (shutil.which("ctx") or "ctx")


def cold_import(corpus: Path, db: Path) -> tuple[float, float, int]:
    started = time.perf_counter()
    out = subprocess.run(
        [ctx_executable(), "import", str(corpus), "--db", str(db), "--output", "json", "--quiet"],
        check=True, capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    report = json.loads(out.stdout)
    return float(report["seconds"]), wall, int(report["nodes_written"])


def source_docs(corpus: Path, export: str | None) -> int | None:
    if export is None:
        return None
    return len(json.loads((corpus / export).read_text(encoding="utf-8"))["docs"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        for name, export in CORPORA.items():
            corpus = args.corpora / name
            if not corpus.exists():
                print(f"{name}: skipped ({corpus} not found)")
                continue
            imports, walls, nodes = [], [], 0
            for run in range(args.runs):
                seconds, wall, nodes = cold_import(corpus, Path(scratch) / f"{name}-{run}.db")
                imports.append(seconds)
                walls.append(wall)
            seconds = statistics.median(imports)
            line = (
                f"{name}: import {seconds:.3f} s (median of {args.runs} cold runs), "
                f"command {statistics.median(walls):.3f} s, {nodes} nodes -> {nodes / seconds:,.0f} nodes/s"
            )
            docs = source_docs(corpus, export)
            if docs:
                line += f"; {docs:,} export docs -> {docs / seconds:,.0f} docs/s"
            print(line)


if __name__ == "__main__":
    main()
