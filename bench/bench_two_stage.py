"""Issue 21, "paraphrase-ready fast": would MiniLM vectors for a question's candidates only hold
the fact recall of MiniLM vectors for every passage? Measured before building it (built since:
``ctx.semantic.two_stage``; its end-to-end figure is bench_facts.py's ``ctx-default+fast``).

    python bench/bench_facts.py --only ctx-default+emb      # first: the embedded graphs (MiniLM)
    python bench/static_model.py --out bench/out/static-minilm
    python bench/bench_two_stage.py --static bench/out/static-minilm --configs full,nonode,two200,two50b50

Runs the default lens in process over bench_facts' embedded graphs (2,000 tokens, the same 87
questions; ``full`` reproduces bench_facts' ``ctx-default+emb``) with the passage ranking's vector
half replaced. Today it is the nearest of every passage's MiniLM vector; ``twoKbB`` makes it the
nearest among the question's *candidates* only -- the BM25 top B (default 200, the passage pool)
plus the static model's nearest K passages -- ranked by their MiniLM vectors, which a two-stage
graph would compute at question time and cache by content hash. Every configuration but ``full``
also leaves out the node-vector ranking (a graph embedded per question has no node vectors).
Prints recall per configuration and how many distinct passage texts each question's candidates
hold: what a cold build would have to embed with MiniLM.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from factcheck import load_questions, normalise  # noqa: E402

GRAPHS = HERE / "out" / "graphs"


class Candidates:
    """One graph's two-stage vector ranking: static vectors of every passage to propose, the
    stored MiniLM vectors of the proposed ones to rank (what a build would embed and cache)."""

    def __init__(self, reader: Any, table: Any, static_k: int, lexical: int) -> None:
        from ctx.semantic.passage_index import load_passage_index
        from ctx.store.passage_reads import embed_text

        model = reader.active_model()
        assert model is not None, "run bench_facts --only ctx-default+emb first"
        self.index = load_passage_index(reader, model)
        self.position = {pid: i for i, pid in enumerate(self.index.ids)}
        self.hashes = dict(reader.conn.execute("SELECT id, hash FROM passages").fetchall())
        rows = reader.conn.execute("SELECT id, title, context, heading, text FROM passage_texts ORDER BY id").fetchall()
        self.ids = [r[0] for r in rows]
        self.table, self.static_k, self.lexical = table, static_k, lexical
        self.statics = table.encode([embed_text(*r[1:]) for r in rows])
        self.question = ""
        self.texts: list[int] = []  # distinct passage texts among each question's candidates

    def dense(self, graph: Any, topic: Any, pool: int, text: str = "", lexical: Any = None) -> dict[int, str]:  # noqa: ARG002
        import numpy as np

        from ctx.assemble import passage_rank

        if topic is None or topic.vector is None:
            return {}
        bm25 = graph.search_passages(passage_rank.query_terms(self.question), limit=passage_rank.POOL)[: self.lexical]
        sims = self.statics @ self.table.encode([self.question])[0]
        near = np.argsort(-sims, kind="stable")[: self.static_k]
        candidates = {h.id for h in bm25} | {self.ids[i] for i in near}
        candidates = {pid for pid in candidates if pid in self.position}
        self.texts.append(len({self.hashes[pid] for pid in candidates}))
        matrix = self.index.matrix
        scored = sorted(candidates, key=lambda pid: (-float(matrix[self.position[pid]] @ topic.vector), pid))
        nodes = self.index.nodes_of(scored)
        visible = graph.visible_ids(sorted(set(nodes.values())))
        return {pid: nodes[pid] for pid in [p for p in scored if nodes[p] in visible][:pool]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--static", type=Path, required=True, help="a static model folder (bench/static_model.py)")
    parser.add_argument("--configs", default="full,nonode,two200,two50b50")
    parser.add_argument("--budget", type=int, default=2000)
    args = parser.parse_args()
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", CTX_HOME=str(HERE / "out" / "ctx-home"))

    import ctx.assemble.passage_rank as passage_rank
    import ctx.assemble.relevance as relevance
    from ctx import Graph
    from ctx.semantic import static

    table = static.load(str(args.static))
    questions = load_questions()
    original_dense, original_vectors = passage_rank._dense, relevance._vector_ranking
    print(f"# bench_two_stage: {len(questions)} questions, {args.budget} tokens; load average {os.getloadavg()[0]:.2f}")
    print("| configuration | recall | dev | holdout | texts per question to embed (median / max) | s |")
    print("|---|---:|---:|---:|---:|---:|")
    for config in args.configs.split(","):
        recalls: list[float] = []
        by_split: dict[str, list[float]] = {}
        texts: list[int] = []
        started = time.perf_counter()
        for corpus in sorted({q.corpus for q in questions}):
            graph = Graph.open(GRAPHS / f"{corpus}.emb.db")
            two: Candidates | None = None
            if config.startswith("two"):
                k, _, b = config[3:].partition("b")
                two = Candidates(graph.reader, table, int(k), int(b or passage_rank.POOL))
            passage_rank._dense = two.dense if two is not None else original_dense  # type: ignore[assignment]
            relevance._vector_ranking = original_vectors if config == "full" else (lambda *a, **kw: ([], set()))
            for q in (q for q in questions if q.corpus == corpus):
                if two is not None:
                    two.question = q.question
                text = graph.build(q.question, max_tokens=args.budget).text
                recalls.append(len(q.facts_in(normalise(text))) / len(q.facts))
                by_split.setdefault(q.split, []).append(recalls[-1])
            texts += two.texts if two is not None else []
            graph.close()
        spread = f"{statistics.median(texts):.0f} / {max(texts)}" if texts else "-"
        splits = " | ".join(f"{statistics.mean(by_split.get(name, [0.0])):.3f}" for name in ("dev", "holdout"))
        print(f"| {config} | **{statistics.mean(recalls):.3f}** | {splits} | {spread} | {time.perf_counter() - started:.0f} |", flush=True)
    passage_rank._dense, relevance._vector_ranking = original_dense, original_vectors
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
