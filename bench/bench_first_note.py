"""Which note comes first for a free-text question without embeddings (issue 20 item 3)?

    python bench/bench_first_note.py                      # both question sets, 2,000 tokens
    python bench/bench_first_note.py --sets first_note    # only the held-out set
    python bench/bench_first_note.py --list               # every question's ranks
    python bench/bench_first_note.py --misses             # why the first note beat the answer

Two question sets: bench/facts/questions.yaml (bench_facts' 87 questions over four vaults, split
dev / holdout) and bench/facts/first_note.yaml (held out: questions over a vault bench_facts does
not use, written before any ranking change was measured on them). Each question names the notes
that answer it. For each question, graph without embeddings, in-process:

* seed rank: where the first answering note comes in the topic's passage ranking
  (``passage_rank.rank_passages``: a note ranked by its best passage), which picks the walk's seed
  and feeds the relevance term; absent past the 50th note;
* context rank: where the first answering note comes among the build's notes (JSON ``nodes``, in
  reading order: the ranking's, opened by the shown note holding the question best, see
  ``ctx.assemble.opening``; at ``--max-tokens``); absent when the context does not hold it.

``--misses`` compares, for every question whose first note is not an answering one, the first note's
best passage with the first answering note's: how many of the question's content words each holds
(stemmed index; ``^`` marks a word found in the title, ancestors' titles or heading path) and the sum
of their idf over passages. Where the first note holds at least as many of the words with at least
as much idf, no re-weighting of the matched words (coverage, idf, title caps) can put the answer
first without also demoting a note that matched the question better by its words.

Reported per set (and per split for bench_facts): mean rank where present, how many first, how many
absent. bench_facts' own "first answer rank" is the position of the first markdown block drawing on
an answer note, which a question about time reads oldest first; the ranks here are the ranking's,
before any reading order. Graphs are the ones bench_facts builds (bench/out/graphs), imported when
missing or stale.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from factcheck import CORPORA, load_questions  # noqa: E402

SETS = {"facts": HERE / "facts" / "questions.yaml", "first_note": HERE / "facts" / "first_note.yaml"}
SEED_DEPTH = 50


@dataclass(frozen=True)
class Item:
    set: str
    id: str
    corpus: str
    split: str
    question: str
    notes: tuple[str, ...]  # node ids or source paths


def load(name: str) -> list[Item]:
    if name == "facts":
        return [Item(name, q.id, q.corpus, q.split, q.question, q.notes) for q in load_questions(SETS[name])]
    import yaml

    data = yaml.safe_load(SETS[name].read_text(encoding="utf-8"))
    return [Item(name, x["id"], corpus, "holdout", x["question"], tuple(x["notes"]))
            for corpus, items in data.items() for x in items]


def answer_ids(conn, notes: tuple[str, ...]) -> set[str]:
    out = set()
    for note in notes:
        rows = conn.execute("SELECT id FROM nodes WHERE id = ? OR source_path = ?", (note, note)).fetchall()
        out.update(r[0] for r in rows)
    return out


def first(order: list[str], wanted: set[str]) -> int | None:
    return next((i for i, node in enumerate(order, start=1) if node in wanted), None)


def summary(ranks: list[int | None]) -> str:
    present = [r for r in ranks if r is not None]
    if not present:
        return f"- (0 first, {len(ranks)} absent)"
    ones = sum(1 for r in present if r == 1)
    return f"{statistics.mean(present):.2f} ({ones} first, {len(ranks) - len(present)} absent)"


@dataclass(frozen=True)
class Match:
    count: int
    idf: float
    words: tuple[str, ...]


def matched(conn, question: str, ranking, node: str) -> Match:
    """Which of the question's content words the node's best passage holds (stemmed index)."""
    import math

    from ctx.assemble.passage_rank import query_terms

    best = max((p for p, n in ranking.node_of.items() if n == node and p in ranking.passages),
               key=lambda p: (ranking.passages[p], -p))
    total = conn.execute("SELECT COUNT(*) FROM passages_fts").fetchone()[0]
    words, idf = [], 0.0
    for term in query_terms(question):
        phrase = '"' + term.replace('"', '""') + '"'
        df = conn.execute("SELECT COUNT(*) FROM passages_fts WHERE passages_fts MATCH ?", (phrase,)).fetchone()[0]
        if not df or not conn.execute("SELECT 1 FROM passages_fts WHERE passages_fts MATCH ? AND rowid = ?",
                                      (phrase, best)).fetchone():
            continue
        where = conn.execute("SELECT 1 FROM passages_fts WHERE passages_fts MATCH ? AND rowid = ?",
                             ("{title context heading} : " + phrase, best)).fetchone()
        words.append(term + ("^" if where else ""))
        idf += math.log((total - df + 0.5) / (df + 0.5)) if df < total / 2 else 0.0
    return Match(len(words), idf, tuple(words))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="facts,first_note")
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--list", action="store_true", help="print every question's ranks")
    parser.add_argument("--misses", action="store_true", help="compare each miss's first note with the answer")
    parser.add_argument("--json", type=Path, help="write per-question ranks here")
    args = parser.parse_args()

    import bench_facts

    from ctx.assemble import BuildRequest, build_context
    from ctx.assemble.passage_rank import rank_passages
    from ctx.store import open_graph
    from ctx.store.view import GraphView

    home = bench_facts.OUT / "ctx-home"
    env = {**os.environ, "CTX_HOME": str(home), **bench_facts.OFFLINE}
    env.pop("CTX_DB", None)
    os.environ.update({"CTX_HOME": str(home)})
    items = [item for name in args.sets.split(",") if name for item in load(name)]
    missing = sorted({i.corpus for i in items if not (CORPORA / i.corpus).is_dir()})
    if missing:
        sys.exit(f"bench_first_note: corpora not found under {CORPORA}: {', '.join(missing)}")
    started, cpu = time.perf_counter(), time.process_time()
    load_before = os.getloadavg()[0]
    ctx = bench_facts.ctx_command()
    conns = {}
    rows = []
    misses: list[tuple[Item, int, Match, Match]] = []
    for item in items:
        if item.corpus not in conns:
            db = bench_facts.prepare_graph(ctx, item.corpus, False, False, env)
            conns[item.corpus] = open_graph(db)
        conn = conns[item.corpus]
        wanted = answer_ids(conn, item.notes)
        if not wanted:
            sys.exit(f"bench_first_note: {item.id}: no node is {item.notes}")
        ranking = rank_passages(GraphView(conn), item.question, None)
        seed = first(ranking.node_order()[:SEED_DEPTH], wanted)
        built = build_context(conn, BuildRequest(topics=(item.question,), max_tokens=args.max_tokens,
                                                 format="json"))
        nodes = [n["id"] for n in json.loads(built.text)["nodes"]] if built.text else []
        rows.append((item, seed, first(nodes, wanted)))
        if args.misses and seed is not None and seed > 1:
            order = ranking.node_order()
            misses.append((item, seed, *(matched(conn, item.question, ranking, node)
                                         for node in (order[0], order[seed - 1]))))

    print(f"# bench_first_note: {len(items)} questions, sets {args.sets}, --max-tokens {args.max_tokens},"
          " no embeddings")
    print(f"load average before {load_before:.2f} / after {os.getloadavg()[0]:.2f} (1 min);"
          f" CPU {time.process_time() - cpu:.1f}s, wall {time.perf_counter() - started:.1f}s\n")
    print("| set | split | questions | seed rank (first, absent) | context rank (first, absent) |")
    print("|---|---|---:|---:|---:|")
    for name in args.sets.split(","):
        chosen = [r for r in rows if r[0].set == name]
        splits = ("dev", "holdout", "all") if name == "facts" else ("all",)
        for split in splits:
            part = [r for r in chosen if split in ("all", r[0].split)]
            if part:
                print(f"| {name} | {split} | {len(part)} | {summary([r[1] for r in part])}"
                      f" | {summary([r[2] for r in part])} |")
    if args.list:
        print()
        for item, seed, context in rows:
            print(f"{item.id:14} seed {seed!s:>4} context {context!s:>4}  {item.question}")
    if args.misses:
        print("\n| question | answer at | first note: words (idf) | answering note: words (idf) |")
        print("|---|---:|---|---|")
        for item, seed, win, ans in misses:
            print(f"| {item.id} | {seed} | {win.count} ({win.idf:.1f}) {' '.join(win.words)}"
                  f" | {ans.count} ({ans.idf:.1f}) {' '.join(ans.words)} |")
        held = sum(1 for _, _, win, ans in misses if win.count >= ans.count and win.idf >= ans.idf)
        print(f"\nIn {held} of {len(misses)} misses the first note's best passage holds at least as many of"
              " the question's words as the answering note's, with at least as much idf.")
    if args.json:
        args.json.write_text(json.dumps([{"id": i.id, "set": i.set, "seed": s, "context": c}
                                         for i, s, c in rows], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
