"""How a memory set's questions get their evidence into a context without embeddings, or why not.

    python bench/memory_paths.py --sets 24,27 --kinds open
    python bench/memory_paths.py --sets 1 --kinds open,multi --budgets 4000 --json out.json

For each question of the kinds asked (bench_memory's sets, graphs without embeddings, built with
the default lens in-process as bench_memory does), it reads:

* ``passage``: the evidence passage's rank in full text's passage ranking (``passage_rank``; ``-``
  when no word of the question is in it: it is not among the ranked passages at all);
* ``note``: its note's rank in the passage ranking's node order, and ``feedback``: in the lens's
  feedback ranking (whole notes searched by the question's words plus the names in the first
  seed's text, ``relevance.feedback_query``), the two rankings fused into the notes' relevance;
* at each budget, whether the evidence is in the context (``1``, ``0``, a share for several
  paragraphs), beside the same build with the lens's feedback off (``nofb``): where the two differ,
  the feedback ranking brought the evidence (or cost it);
* for evidence missed whose passage full text ranked, what the packer did with it: ``not offered`` (its
  note is no candidate: neither among the fused relevance's first notes nor the owners of the
  passages a budget of this size can use), ``rest`` (its passage's core, the paragraphs holding
  the question's words, leaves the evidence out, and the rest of the passage came too late),
  ``below`` (offered, but worth less than the last passage the budget took); with the unit's
  place and value, the last unit won, and how many units the first note won.

The packer is observed, not changed: ``plan.win_passages`` is wrapped to keep the units it was
offered and what it won, and returns what it returned.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_memory as bm  # noqa: E402
from factcheck import normalise  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="24", help="comma-separated set seeds (their graphs must exist)")
    parser.add_argument("--kinds", default="open")
    parser.add_argument("--budgets", default="1000,2000,4000")
    parser.add_argument("--json", type=Path, help="write one row per question here")
    args = parser.parse_args()
    os.environ.update(bm.OFFLINE)
    os.environ["CTX_HOME"] = str(bm.OUT / "ctx-home")

    from ctx.assemble import BuildRequest, build_context, packing_order, plan, warm
    from ctx.assemble.passage_rank import rank_passages
    from ctx.assemble.relevance import feedback_query
    from ctx.lenses.lookup import load_lens
    from ctx.store import as_store, open_graph

    seen: dict[str, Any] = {}
    win = plan.win_passages

    def observed(p: Any, members: list[Any], room: int) -> Any:
        seen["units"] = packing_order.shown_units([c for c in members if c.id in p.has_body])
        seen["won"] = won = win(p, members, room)
        return won

    plan.win_passages = observed  # type: ignore[assignment]
    lens = load_lens(bm_lens())
    nofb = dataclasses.replace(lens, semantic=dataclasses.replace(lens.semantic, feedback=0))
    budgets = [int(b) for b in args.budgets.split(",")]
    kinds = set(args.kinds.split(","))
    rows: list[dict[str, Any]] = []
    for seed in (int(s) for s in args.sets.split(",")):
        root = bm.OUT / f"set{seed}"
        db = root / "graph.db"
        if not db.exists():
            print(f"set {seed}: no graph (run bench_memory.py --sets {seed} --only ctx first)", file=sys.stderr)
            continue
        conn = open_graph(db)
        graph = as_store(conn).reader(include_private=False)
        questions = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines() if line]
        for q in (q for q in questions if q["kind"] in kinds):
            evidence = [normalise(e) for e in q["evidence"]]
            notes = [f.removesuffix(".md") for f in q["files"]]
            ranking = rank_passages(graph, q["question"], None, mode="fts")
            order = sorted(ranking.passages, key=lambda pid: (-ranking.passages[pid], pid))
            found = warm.passages_of(graph, sorted(set(ranking.node_of.values())))
            text = {p.id: normalise(p.text) for rows_ in found.values() for p in rows_}
            holder = [next((pid for pid in order if e in text.get(pid, "")), None) for e in evidence]
            node_order = ranking.node_order()
            query = feedback_query(graph, q["question"], node_order[:1], lens.semantic.feedback)
            feedback = [h.id for h in graph.search(query, limit=200, mode="or", snippets=False)]
            row: dict[str, Any] = {
                "set": seed, "id": q["id"], "kind": q["kind"],
                "passage": [order.index(pid) + 1 if pid is not None else None for pid in holder],
                "note": [node_order.index(n) + 1 if n in node_order else None for n in notes],
                "feedback": [feedback.index(n) + 1 if n in feedback else None for n in notes],
            }
            for budget in budgets:
                for name, chosen in (("", lens), ("nofb", nofb)):
                    seen.clear()
                    context = normalise(build_context(conn, BuildRequest(topics=(q["question"],), max_tokens=budget,
                                                                         lens=chosen)).text)
                    row[f"{name}{budget}"] = sum(e in context for e in evidence) / len(evidence)
                    if not name:
                        row[f"why{budget}"] = [why(seen, e, pid) for e, pid in zip(evidence, holder)
                                               if e not in context]
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary(rows, budgets)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def bm_lens() -> str:
    from ctx.defaults import QUESTION_LENS

    return QUESTION_LENS


def why(seen: dict[str, Any], evidence: str, holder: int | None) -> str:
    """What the packer did with a missed evidence paragraph (see the module's docstring)."""
    if holder is None:
        return "unranked"
    units, won = seen.get("units", []), seen.get("won", {})

    def took(ord_: int, part: int, c: Any) -> bool:  # part: packing_order's CORE, WIDE or REST
        return c.id in won and ord_ in won[c.id] and won[c.id][ord_] >= part

    taken = [i for i, (_, _, ord_, part, c) in enumerate(units) if took(ord_, part, c)]
    last = taken[-1] if taken else -1
    first = units[0][4].id if units else None
    firsts = sum(1 for i in taken if units[i][4].id == first)
    tail = f"last won #{last} at {-units[last][0]:.3f}, first note won {firsts}" if taken else "nothing won"
    for i, (value, _, ord_, part, c) in enumerate(units):
        piece = next(p for p in c.pieces if p.ord == ord_)
        if evidence not in normalise(piece.text):
            continue
        if part:  # a wider core or the rest
            return f"rest: #{i} at {-value:.3f}; {tail}"
        if piece.core is None or evidence in normalise(piece.core):
            return f"below: #{i} at {-value:.3f}; {tail}"
        # The core leaves it out: its rest, further down, is the unit that would show it.
    return f"not offered; {tail}"


def summary(rows: list[dict[str, Any]], budgets: list[int]) -> None:
    def band(rank: int | None) -> str:
        if rank is None:
            return "unranked"
        return next(b for limit, b in ((5, "1-5"), (15, "6-15"), (50, "16-50"), (200, "51-200")) if rank <= limit)

    print(f"\n{len(rows)} questions; evidence passage's rank in full text -> found at "
          + " / ".join(f"{b:,}" for b in budgets) + " (with the feedback ranking off)")
    for name in ("1-5", "6-15", "16-50", "51-200", "unranked"):
        sel = [r for r in rows if band(r["passage"][0]) == name]
        if sel:
            cells = [f"{sum(r[str(b)] for r in sel):.1f} ({sum(r[f'nofb{b}'] for r in sel):.1f})" for b in budgets]
            print(f"- {name}: {len(sel)} questions, " + " / ".join(cells))
    for b in budgets:
        causes: dict[str, int] = {}
        for r in rows:
            for w in r[f"why{b}"]:
                key = w.split(":")[0].split(";")[0]
                causes[key] = causes.get(key, 0) + 1
        print(f"- missed at {b:,}: " + ", ".join(f"{k} {v}" for k, v in sorted(causes.items())))


if __name__ == "__main__":
    sys.exit(main())
