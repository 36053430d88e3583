"""MuSiQue gold recall: how much of the evidence a question needs does `ctx build` put in context?

    python bench/bench_musique.py                       # all 100 questions, budgets 300/500/1000
    python bench/bench_musique.py --questions 20 --budgets 1000 --configs hybrid+graph
    python bench/bench_musique.py --subprocess          # run the real `ctx build` per question

Imports ../shared/eval/musique/notes (plain) and notes-autolinked into two graphs, embeds both
(`ctx embed`, default model), then for every question and budget builds the markdown context an
agent would receive and counts the share of the question's gold notes whose whole paragraph text
appears in it (wikilink brackets ignored, whitespace normalised; a shortened note does not count).
Because a context that shows a long note's relevant passages loses a gold note by that rule even when
it carries the answer, a second table reports answer presence: the share of questions whose answer
(or one of its aliases) appears in the context, and the share of each question's hop answers (the
answers of its decomposition's sub-questions: the evidence chain) that appear, case-insensitively.

Configurations are lenses (no per-question rules, nothing special-cased in ctx): the first three in
bench/lenses/, hybrid+graph is the built-in `question` lens that users get:
  fts            BM25 only, plain notes, no walk
  vector         nearest vectors only, plain notes, no walk
  hybrid         BM25 + vectors fused by RRF, plain notes, no walk
  hybrid+graph   hybrid seeds, then the lens-weighted walk over the auto-linked notes + similarity
  default        no --lens at all (what a user types), auto-linked notes, embedded
  question-noemb the `question` lens on the auto-linked notes imported but never embedded
  default-noemb  no --lens, auto-linked notes, never embedded

In-process builds call the same `build_context` as the CLI and print byte-identical text; use
--subprocess to include process start and argument parsing as well (about 0.3 s per build).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("CTX_SHARED_DIR", REPO.parent / "shared"))
MUSIQUE = SHARED / "eval" / "musique"
LENSES = HERE / "lenses"

QUESTION_LENS = str(REPO / "lenses" / "question.yaml")
CONFIGS = {  # name -> (note set, lens file or None for the default lens, embedded?)
    "fts": ("plain", "musique-fts.yaml", True),
    "vector": ("plain", "musique-vector.yaml", True),
    "hybrid": ("plain", "musique-hybrid.yaml", True),
    "hybrid+graph": ("autolinked", QUESTION_LENS, True),
    "default": ("autolinked", None, True),
    "question-noemb": ("autolinked", QUESTION_LENS, False),
    "default-noemb": ("autolinked", None, False),
}
FOLDERS = {"plain": "notes", "autolinked": "notes-autolinked"}
BASELINES = {  # the plain-script baselines: whole notes packed in rank order
    300: {"fts": 0.451, "vector": 0.486, "hybrid": 0.483},
    500: {"fts": 0.520, "vector": 0.589, "hybrid": 0.578},
    1000: {"fts": 0.594, "vector": 0.661, "hybrid": 0.674},
}

_FRONTMATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def normalise(text: str) -> str:
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    return " ".join(text.split())


def paragraph_text(note: Path) -> str:
    """The note's evidence: its text without frontmatter and without the `# Title` heading."""
    text = _FRONTMATTER.sub("", note.read_text(encoding="utf-8"), count=1).strip()
    first, _, rest = text.partition("\n")
    if first.startswith("# "):
        text = rest
    return normalise(text)


def answer_presence(question: dict, context: str) -> tuple[float, float]:
    """(1.0 if the answer or an alias is in ``context`` else 0.0, share of hop answers in it)."""
    lowered = context.lower()
    names = [question["answer"], *question.get("answer_aliases", [])]
    answered = float(any(normalise(n).lower() in lowered for n in names if n.strip()))
    hops = [normalise(step["answer"]).lower() for step in question.get("question_decomposition", [])]
    return answered, (sum(h in lowered for h in hops) / len(hops) if hops else answered)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def prepare(workdir: Path, env: dict[str, str], graphs: set[tuple[str, bool]]) -> dict[tuple[str, bool], Path]:
    """Import (and embed) the note sets the chosen configurations need (incremental: a second run
    does almost nothing). A graph that is never embedded shows how ctx does without vectors."""
    dbs = {}
    for variant, embedded in sorted(graphs):
        db = workdir / f"{variant}{'' if embedded else '-noemb'}.db"
        started = time.perf_counter()
        run(["ctx", "import", str(MUSIQUE / FOLDERS[variant]), "--db", str(db), "-q"], env=env)
        note = f"import {time.perf_counter() - started:.1f}s"
        if embedded:
            started = time.perf_counter()
            out = run(["ctx", "embed", "--db", str(db), "-q", "--output", "json"], env=env)
            summary = json.loads(out.stdout)
            note += f"; embed {summary['embedded']} nodes in {time.perf_counter() - started:.1f}s"
        print(f"- {db.name}: {note}", file=sys.stderr)
        dbs[(variant, embedded)] = db
    return dbs


def build_in_process(db: Path, lens: Path | None, question: str, budget: int) -> str:
    from ctx.assemble import BuildRequest, build_context
    from ctx.store import open_graph

    conn = _connections.setdefault(db, open_graph(db))
    chosen = {"lens": str(lens)} if lens else {}  # no lens: whatever the default is today
    request = BuildRequest(topics=(question,), max_tokens=budget, include_fields=False, **chosen)
    return build_context(conn, request).text


_connections: dict[Path, object] = {}


def build_subprocess(db: Path, lens: Path | None, question: str, budget: int, env: dict[str, str]) -> str:
    chosen = ["--lens", str(lens)] if lens else []
    out = subprocess.run(
        ["ctx", "build", question, "--db", str(db), *chosen, "--max-tokens", str(budget),
         "--no-include-fields"],
        capture_output=True, text=True, env=env,
    )
    if out.returncode not in (0, 3):
        raise RuntimeError(out.stderr)
    return out.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Per checkout (bench/out is ignored by git): a graph imported by one checkout's code is never
    # read by another's.
    parser.add_argument("--workdir", type=Path, default=HERE / "out" / "musique")
    parser.add_argument("--budgets", default="300,500,1000")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--questions", type=int, default=0, help="only the first N questions")
    parser.add_argument("--subprocess", action="store_true", help="run `ctx build` as a process")
    parser.add_argument("--json", type=Path, help="also write per-question results here")
    parser.add_argument("--lens", action="append", default=[], metavar="CONFIG=FILE",
                        help="use another lens file for a configuration (for tuning)")
    args = parser.parse_args()

    if not MUSIQUE.exists():
        print(f"{MUSIQUE} not found (set CTX_SHARED_DIR)", file=sys.stderr)
        return 2
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    args.workdir.mkdir(parents=True, exist_ok=True)
    budgets = [int(b) for b in args.budgets.split(",")]
    configs = [c for c in args.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        print(f"unknown configuration(s): {', '.join(unknown)} (known: {', '.join(CONFIGS)})", file=sys.stderr)
        return 2
    dbs = prepare(args.workdir, env, {(CONFIGS[c][0], CONFIGS[c][2]) for c in configs})
    overrides = dict(item.split("=", 1) for item in args.lens)
    questions = [json.loads(line) for line in (MUSIQUE / "questions.jsonl").read_text().splitlines() if line]
    if args.questions:
        questions = questions[: args.questions]
    gold_text = {
        name: paragraph_text(MUSIQUE / "notes" / name) for q in questions for name in q["gold_files"]
    }

    recall: dict[tuple[str, int], list[float]] = {}
    answers: dict[tuple[str, int], list[tuple[float, float]]] = {}
    seconds: dict[str, list[float]] = {}
    rows = []
    for config in configs:
        variant, lens_file, embedded = CONFIGS[config]
        db = dbs[(variant, embedded)]
        lens = Path(overrides[config]) if config in overrides else (LENSES / lens_file if lens_file else None)
        for q in questions:
            for budget in budgets:
                started = time.perf_counter()
                if args.subprocess:
                    text = build_subprocess(db, lens, q["question"], budget, env)
                else:
                    text = build_in_process(db, lens, q["question"], budget)
                seconds.setdefault(config, []).append(time.perf_counter() - started)
                context = normalise(text)
                found = [name for name in q["gold_files"] if gold_text[name] in context]
                share = len(found) / len(q["gold_files"])
                answered, hops = answer_presence(q, context)
                recall.setdefault((config, budget), []).append(share)
                answers.setdefault((config, budget), []).append((answered, hops))
                rows.append({"config": config, "budget": budget, "id": q["id"], "recall": share,
                             "found": found, "gold": q["gold_files"], "answer": answered, "hops": hops})

    print(f"\nMuSiQue gold recall ({len(questions)} questions; markdown context; "
          f"{'subprocess' if args.subprocess else 'in-process'} builds)\n")
    print("| budget | " + " | ".join(configs) + " | best baseline |")
    print("|---|" + "---|" * (len(configs) + 1))
    for budget in budgets:
        cells = [f"{statistics.mean(recall[(c, budget)]):.3f}" for c in configs]
        base = BASELINES.get(budget)
        best = f"{max(base.values()):.3f}" if base else "-"
        print(f"| {budget} | " + " | ".join(cells) + f" | {best} |")
    print("\nAnswer presence (answer / hop answers in the context)\n")
    print("| budget | " + " | ".join(configs) + " |")
    print("|---|" + "---|" * len(configs))
    for budget in budgets:
        cells = [
            f"{statistics.mean(a for a, _ in answers[(c, budget)]):.3f} / "
            f"{statistics.mean(h for _, h in answers[(c, budget)]):.3f}"
            for c in configs
        ]
        print(f"| {budget} | " + " | ".join(cells) + " |")
    print("\nmedian build time: " + ", ".join(
        f"{c} {statistics.median(seconds[c]) * 1000:.0f} ms" for c in configs))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
