"""Memory-grade answers: evidence recall on long dated multi-topic logs, ctx beside chunk RAG.

    python bench/bench_memory.py                          # the dev set (seed 1), 1k/2k/4k tokens
    python bench/bench_memory.py --sets 2,3               # the held-out sets: final figures only
    python bench/bench_memory.py --only ctx,ctx+emb --budgets 2000 --misses
    python bench/bench_memory.py --sets 2 --gap           # what the hybrid finds that ctx misses, and why
    python bench/bench_memory.py --json bench/out/memory/results.json

Each set is written by ``memory_logs.py`` (seeded; ``--sets 1,2`` are two independent sets: set 1
is for development, set 2 is held out): one note per session with ``date:`` in its frontmatter,
20-30 sessions per log, four logs of different styles (meeting notes with agenda headings, a
household chat transcript, a first-person journal, and, with ``../shared`` present, a reading log
of MuSiQue paragraphs, CC BY 4.0, whose paragraphs are also pasted into the other logs), and
questions of four kinds: ``single`` (one fact), ``when`` (when something happened), ``multi``
(evidence in two or more sessions, or two facts asked at once) and ``open`` (asked in other words).
Sets 3 to 9 are written by ``memory_logs2.py``, differently on purpose (held out from tuning to the
first generator's phrasing): daily stand-ups (many short notes), a lab notebook (few long ones, dated
by ``created:``) and a mail digest, other topics and wordings, distractors that name what is asked,
and a fifth kind, ``latest`` (the current value of a setting revised two or three times).
Sets 10 to 19, 40 to 49, 60 to 69, 80 to 89, 100 to 109 and 120 to 129 are written by ``memory_logs3.py``: a Logseq graph of daily journal pages (~1,000
tokens of nested bullets a day, dated by file name only), each fact one block among errands,
to-dos and small talk; in ctx's graph every block is a node, so it tests what the others cannot.
Sets 20 to 29, 50 to 59 and 90 to 99 are more ``memory_logs2.py`` seeds and sets 30 to 39, 70 to 79 and 110
to 119 more ``memory_logs.py`` seeds: fresh held-out sets of the first two kinds once their first ranges were used.
Sets 130 to 159 are written by ``memory_logs4.py`` (130-139 held out; the tests use 150 and 151): conversations exported from an AI assistant, one note
per conversation (``created:`` with a time and offset), every turn under a ``#### User`` or ``####
Assistant`` heading, the facts said in passing by the user inside turns about another task.
Sets 160 to 179 are written by ``memory_logs5.py`` (160-169 held out; the tests use 170 and 171):
the logs of ``memory_logs.py`` for the same seed as a vault of daily notes, ``2024-05-28.md`` (a
meeting series ``2024-05-28 Ops review 3.md``) with no frontmatter, dated by file name only. Sets
180 up are written by ``memory_logs6.py`` (180-189 held out; the tests use 190 and 191): those logs
each kept in one long file, a ``## 2024-05-28`` heading a day (150-250 KB a file).

A question's score is the share of its evidence paragraphs present in the context (normalised for
case, whitespace, emphasis and list markers: ``factcheck.normalise``); no LLM. For ``when``
questions a second figure counts an evidence paragraph only with its session's date (ISO,
``YYYY-MM-DD``) somewhere in the context: the paragraph alone does not say when. "Dates present" is
the share of contexts with at least one ISO date.

Configurations, all markdown at the same ``--max-tokens``:
  ctx          `ctx build "<question>"` (the default lens) on the graph without embeddings
  ctx+emb      the same after `ctx embed`
  chunk-bm25   a plain RAG script (no ctx code): each note cut into ~150-token chunks (paragraphs
               merged, a longer one cut at lines), BM25, chunks packed best first, each under a
               "## <title> (<date>)" header, skipping one that does not fit
  chunk-dense  the same chunks ranked by MiniLM cosine (the bundled all-MiniLM-L6-v2)
  chunk-rrf    BM25 and MiniLM fused by reciprocal rank (k 60)

ctx builds run in-process (``build_context``, the code `ctx build` runs, same bytes); the graphs are
imported and embedded with the installed `ctx` under bench/out/memory/set<N>/ (hermetic CTX_HOME).
Chunk vectors are cached under bench/out/memory/vectors.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import memory_logs  # noqa: E402
import memory_logs2  # noqa: E402
import memory_logs3  # noqa: E402
import memory_logs4  # noqa: E402
import memory_logs5  # noqa: E402
import memory_logs6  # noqa: E402
from factcheck import normalise  # noqa: E402

OUT = HERE / "out" / "memory"
VECTORS = OUT / "vectors"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
CONFIGS = ("ctx", "ctx+emb", "chunk-bm25", "chunk-dense", "chunk-rrf")
KINDS = ("single", "when", "multi", "open", "latest")
CHUNK_TOKENS = 150
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_JOURNAL_DAY = re.compile(r"^(\d{4})_(\d{2})_(\d{2})$")


# ---------------------------------------------------------------------------------------------
# Sets and graphs


def set_maker(seed: int) -> ModuleType:
    """The generator of set ``seed``: ``memory_logs.py`` for sets 1, 2, 30-39, 70-79 and 110-119,
    ``memory_logs2.py`` (another kind of log) for 3-9, 20-29, 50-59 and 90-99, ``memory_logs3.py``
    (Logseq journals) for 10-19, 40-49, 60-69, 80-89, 100-109 and 120-129, ``memory_logs4.py``
    (assistant chat exports) for 130-159, ``memory_logs5.py`` (``memory_logs.py``'s logs as daily
    notes dated by file name only) for 160-179, ``memory_logs6.py`` (those logs each in one long
    file) for 180 up. The later ranges exist so every kind has unused seeds left to hold out."""
    if seed >= 180:
        return memory_logs6
    if seed >= 160:
        return memory_logs5
    if seed >= 130:
        return memory_logs4
    if seed < 3 or 30 <= seed < 40 or 70 <= seed < 80 or 110 <= seed < 120:
        return memory_logs
    if seed < 10 or 20 <= seed < 30 or 50 <= seed < 60 or 90 <= seed < 100:
        return memory_logs2
    return memory_logs3


def ensure_set(seed: int) -> Path:
    """Generate set ``seed`` (see ``set_maker``) unless the same generator version already wrote it."""
    root = OUT / f"set{seed}"
    maker = set_maker(seed)
    # Sets 1 and 2 keep their stamp without the generator's name, so they are not regenerated.
    stamp = f"{'' if seed < 3 else maker.__name__ + ' '}{maker.GENERATOR_VERSION} {seed}\n"
    version = root / "VERSION"
    if not (version.exists() and version.read_text() == stamp):
        if (root / "notes").exists():
            shutil.rmtree(root / "notes")
        if maker is memory_logs:
            musique = memory_logs.MUSIQUE if memory_logs.MUSIQUE.exists() else None
            summary = memory_logs.generate(seed, root, musique)
        else:
            summary = maker.generate(seed, root)
        version.write_text(stamp)
        print(f"- set {seed}: generated {summary}", file=sys.stderr)
        for db in root.glob("graph*.db*"):
            db.unlink()
    return root


def ctx_command() -> str:
    beside = Path(sys.executable).parent / "ctx"
    found = str(beside) if beside.exists() else shutil.which("ctx")
    if not found:
        raise SystemExit("bench_memory: the `ctx` command is not installed (pip install -e '.[dev]')")
    return found


def code_stamp() -> str:
    """What the graph depends on: the importers, the store and the embedder."""
    root = HERE.parent / "cli" / "ctx"
    digest = hashlib.sha256()
    for folder in ("importers", "store", "semantic"):
        for path in sorted((root / folder).rglob("*.py")):
            digest.update(path.read_bytes())
    digest.update((root / "passages.py").read_bytes())
    return digest.hexdigest()[:16]


def ensure_graph(root: Path, embedded: bool, env: dict[str, str], fresh: bool) -> Path:
    db = root / ("graph-emb.db" if embedded else "graph.db")
    stamp_file = root / (db.name + ".stamp")
    stamp = code_stamp()
    if fresh or not db.exists() or not stamp_file.exists() or stamp_file.read_text() != stamp:
        for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), stamp_file):
            leftover.unlink(missing_ok=True)
        ctx = ctx_command()
        started = time.perf_counter()
        subprocess.run([ctx, "import", str(root / "notes"), "--db", str(db), "-q"], check=True, env=env,
                       capture_output=True)
        note = f"imported in {time.perf_counter() - started:.1f}s"
        if embedded:
            started = time.perf_counter()
            out = subprocess.run([ctx, "embed", "--db", str(db), "-q", "--output", "json"], check=True, env=env,
                                 capture_output=True, text=True)
            note += f", embedded {json.loads(out.stdout).get('embedded')} nodes in {time.perf_counter() - started:.0f}s"
        stamp_file.write_text(stamp)
        print(f"- {db.relative_to(OUT)}: {note}", file=sys.stderr)
    return db


# ---------------------------------------------------------------------------------------------
# The plain RAG script (deliberately independent of ctx's code)


@dataclass
class Chunk:
    title: str
    date: str
    text: str
    tokens: int = 0

    def render(self) -> str:
        return f"## {self.title} ({self.date})\n{self.text.strip()}\n"


def split_chunks(text: str, count) -> list[str]:
    """Paragraphs merged up to ~CHUNK_TOKENS; a longer paragraph is cut at lines, a longer line
    kept whole (chat lines and paragraphs here are far shorter than a chunk)."""
    pieces: list[tuple[str, int]] = []
    for para in re.split(r"\n[ \t]*\n", text):
        if not para.strip():
            continue
        n = count(para)
        if n <= CHUNK_TOKENS:
            pieces.append((para, n))
            continue
        pieces.extend((line, count(line)) for line in para.split("\n") if line.strip())
    chunks, current, size = [], [], 0
    for piece, n in pieces:
        if current and size + n > CHUNK_TOKENS:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += n
    if current:
        chunks.append("\n\n".join(current))
    return chunks


def set_chunks(root: Path) -> list[Chunk]:
    from bench_facts import count

    chunks = []
    for path in sorted((root / "notes").rglob("*.md")):
        raw = path.read_text(encoding="utf-8")
        front = _FRONTMATTER.match(raw)
        if front is None:  # a Logseq page: a journal's day is its file name, a page has no date
            day = _JOURNAL_DAY.match(path.stem)
            title, date = path.stem, "-".join(day.groups()) if day else "undated"
            body = raw
        else:
            meta = dict(line.split(": ", 1) for line in front.group(1).splitlines())
            title, date = meta["title"].strip('"'), meta.get("date") or meta["created"][:10]
            body = raw[front.end():]
        for text in split_chunks(body, count):
            c = Chunk(title, date, text)
            c.tokens = count(c.render())
            chunks.append(c)
    return chunks


class ChunkRAG:
    def __init__(self, root: Path, dense: bool):
        from bench_facts import BM25, Passage, terms
        from collections import Counter

        self.chunks = set_chunks(root)
        passages = [Passage(note="", title=c.title, text=c.text) for c in self.chunks]
        for p in passages:
            p.terms = Counter(terms(f"{p.title}\n{p.text}"))
        self.bm25 = BM25(passages)
        self.vectors = self._vectors(root) if dense else None
        self.queries: dict[str, object] = {}

    def _vectors(self, root: Path):
        import numpy as np
        from bench_facts import minilm

        texts = [f"{c.title}\n{c.text}" for c in self.chunks]
        key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
        cache = VECTORS / f"{root.name}-minilm-{key}.npy"
        if cache.exists():
            return np.load(cache)
        VECTORS.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        vectors = np.asarray(minilm().encode(texts, batch_size=32, normalize_embeddings=True,
                                             show_progress_bar=False), dtype=np.float32)
        np.save(cache, vectors)
        print(f"- {root.name}: encoded {len(texts)} chunks in {time.perf_counter() - started:.0f}s", file=sys.stderr)
        return vectors

    def context(self, question: str, budget: int, how: str) -> str:
        from bench_facts import count, ranked, rrf, minilm

        lexical = ranked(self.bm25.scores(question))
        if how == "bm25":
            order = lexical
        else:
            assert self.vectors is not None
            if question not in self.queries:  # every budget asks the same question
                self.queries[question] = minilm().encode([question], normalize_embeddings=True,
                                                         show_progress_bar=False)[0]
            cosine = self.vectors @ self.queries[question]
            dense = sorted(range(len(self.chunks)), key=lambda i: (-float(cosine[i]), i))
            order = dense if how == "dense" else rrf(lexical, dense)
        chosen, used = [], 0
        for i in order:
            c = self.chunks[i]
            if used + c.tokens + 1 <= budget:
                chosen.append(c.render())
                used += c.tokens + 1
        text = "\n".join(chosen)
        while chosen and count(text) > budget:
            chosen.pop()
            text = "\n".join(chosen)
        return text


# ---------------------------------------------------------------------------------------------
# ctx, in-process


_CONNECTIONS: dict[Path, object] = {}


def ctx_context(db: Path, question: str, budget: int) -> str:
    from ctx.assemble import BuildRequest, build_context
    from ctx.store import open_graph

    conn = _CONNECTIONS.setdefault(db, open_graph(db))
    return build_context(conn, BuildRequest(topics=(question,), max_tokens=budget)).text  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Scoring and tables


@dataclass
class Result:
    set: str
    config: str
    budget: int
    q: dict
    found: list[bool]
    dated: list[bool]  # evidence present with its session's date in the context
    has_date: bool
    tokens: int

    @property
    def recall(self) -> float:
        return sum(self.found) / len(self.found)

    @property
    def dated_recall(self) -> float:
        return sum(self.dated) / len(self.dated)


def score(set_name: str, config: str, budget: int, q: dict, context: str, tokens: int) -> Result:
    text = normalise(context)
    found = [normalise(e) in text for e in q["evidence"]]
    dates = set(_DATE.findall(context))
    dated = [f and d in dates for f, d in zip(found, q["dates"], strict=True)]
    return Result(set_name, config, budget, q, found, dated, bool(dates), tokens)


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def print_tables(results: list[Result], configs: list[str], budgets: list[int]) -> None:
    sets = sorted({r.set for r in results})
    for set_name in sets:
        rows = [r for r in results if r.set == set_name]
        n = len({r.q["id"] for r in rows})
        present = [k for k in KINDS if any(r.q["kind"] == k for r in rows)]
        kinds = {k: len({r.q["id"] for r in rows if r.q["kind"] == k}) for k in present}
        print(f"\n### {set_name}: {n} questions ({', '.join(f'{k} {v}' for k, v in kinds.items())}),"
              " evidence-paragraph recall\n")
        print("| configuration | " + " | ".join(f"{b:,} tokens" for b in budgets) + " |")
        print("|---|" + "---:|" * len(budgets))
        for config in configs:
            cells = [f"{mean([r.recall for r in rows if r.config == config and r.budget == b]):.3f}" for b in budgets]
            print(f"| {config} | " + " | ".join(cells) + " |")
        for budget in budgets:
            print(f"\nby question kind at {budget:,} tokens (when+date: the evidence with its session's date;"
                  " dates: contexts with a date)\n")
            print("| configuration | " + " | ".join(present) + " | when+date | dates |")
            print("|---|" + "---:|" * (len(present) + 2))
            for config in configs:
                sel = [r for r in rows if r.config == config and r.budget == budget]
                cells = [f"{mean([r.recall for r in sel if r.q['kind'] == k]):.3f}" for k in present]
                cells.append(f"{mean([r.dated_recall for r in sel if r.q['kind'] == 'when']):.3f}")
                cells.append(f"{mean([float(r.has_date) for r in sel]):.2f}")
                print(f"| {config} | " + " | ".join(cells) + " |")


def print_gap(results: list[Result], configs: list[str], budgets: list[int]) -> None:
    """Where the hybrid baseline beats a ctx configuration: each evidence paragraph chunk RRF's
    context holds and ctx's does not, split by whether plain chunk BM25 at the same budget holds it
    too. Evidence no BM25 chunk reaches is a paraphrase only a vector finds, out of reach of a graph
    without embeddings; evidence BM25 does reach is ranking or packing that ctx could improve."""
    if "chunk-rrf" not in configs or "chunk-bm25" not in configs:
        print("\n--gap needs chunk-rrf and chunk-bm25 among the configurations", file=sys.stderr)
        return
    found = {(r.set, r.config, r.budget, r.q["id"]): r.found for r in results}
    print("\nevidence paragraphs chunk-rrf holds and ctx does not (\"BM25 too\": chunk-bm25 holds it;"
          " \"vector only\": no BM25 chunk does), and the other way round\n")
    print("| set | configuration | budget | rrf not ctx: BM25 too | rrf not ctx: vector only | ctx not rrf |")
    print("|---|---|---:|---:|---:|---:|")
    for set_name in dict.fromkeys(r.set for r in results):
        ids = list(dict.fromkeys(r.q["id"] for r in results if r.set == set_name))
        for config in (c for c in configs if c.startswith("ctx")):
            for budget in budgets:
                lexical = vector = ahead = 0
                for qid in ids:
                    ours = found[(set_name, config, budget, qid)]
                    rrf = found[(set_name, "chunk-rrf", budget, qid)]
                    bm25 = found[(set_name, "chunk-bm25", budget, qid)]
                    for mine, hybrid, plain in zip(ours, rrf, bm25, strict=True):
                        lexical += hybrid and not mine and plain
                        vector += hybrid and not mine and not plain
                        ahead += mine and not hybrid
                print(f"| {set_name} | {config} | {budget:,} | {lexical} | {vector} | {ahead} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="1", help="comma-separated set seeds (1: dev, 2: held out)")
    parser.add_argument("--budgets", default="1000,2000,4000")
    parser.add_argument("--only", default="", help=f"comma-separated configurations of {', '.join(CONFIGS)}")
    parser.add_argument("--kinds", default="", help="only these question kinds")
    parser.add_argument("--fresh", action="store_true", help="re-import and re-embed the graphs")
    parser.add_argument("--misses", action="store_true", help="list the questions a ctx configuration missed")
    parser.add_argument("--gap", action="store_true",
                        help="count the evidence chunk RRF holds and ctx does not, split by whether BM25 reaches it")
    parser.add_argument("--json", type=Path, help="write per-question results here")
    args = parser.parse_args()

    configs = [c for c in (args.only.split(",") if args.only else CONFIGS) if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        print(f"bench_memory: unknown configuration(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    budgets = [int(b) for b in args.budgets.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, **OFFLINE, CTX_HOME=str(OUT / "ctx-home"))
    for variable in ("CTX_DB", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(variable, None)
    os.environ.update(OFFLINE)
    os.environ["CTX_HOME"] = env["CTX_HOME"]
    print(f"# bench_memory: sets {args.sets}, budgets {args.budgets}; load average before "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"command: {' '.join(['python', *sys.argv])}")
    cpu_started = time.process_time()
    results: list[Result] = []
    cpu: dict[tuple[str, str, int], float] = {}  # (set, configuration, budget) -> CPU seconds
    from bench_facts import count

    for seed in (int(s) for s in args.sets.split(",")):
        root = ensure_set(seed)
        questions = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines() if line]
        if args.kinds:
            questions = [q for q in questions if q["kind"] in args.kinds.split(",")]
        kind = {memory_logs: "", memory_logs2: ", memory_logs2", memory_logs3: ", memory_logs3: Logseq journals",
                memory_logs4: ", memory_logs4: assistant chats", memory_logs5: ", memory_logs5: daily notes",
                memory_logs6: ", memory_logs6: single-file logs"}
        name = f"set {seed}" + (" (dev)" if seed == 1 else f" (held out{kind[set_maker(seed)]})")
        for config in configs:
            if config.startswith("ctx"):
                db = ensure_graph(root, config == "ctx+emb", env, args.fresh)
                run = lambda q, b, db=db: ctx_context(db, q, b)  # noqa: E731
            else:
                how = config.split("-")[1]
                rag = ChunkRAG(root, dense=how != "bm25")
                run = lambda q, b, rag=rag, how=how: rag.context(q, b, how)  # noqa: E731
            for q in questions:
                for budget in budgets:
                    started = time.process_time()
                    text = run(q["question"], budget)
                    cpu[(name, config, budget)] = cpu.get((name, config, budget), 0.0) + time.process_time() - started
                    results.append(score(name, config, budget, q, text, count(text)))
        over = [r for r in results if r.tokens > r.budget]
        if over:
            print(f"warning: {len(over)} contexts over budget", file=sys.stderr)
    print_tables(results, configs, budgets)
    print("\nmean CPU per context, ms (ctx: an in-process build, cold; the first of a graph opens it):")
    for (set_name, config, budget), seconds in sorted(cpu.items()):
        n = sum(1 for r in results if r.set == set_name and r.config == config and r.budget == budget)
        print(f"- {set_name} {config} {budget:,}: {1000 * seconds / max(n, 1):.1f}")
    print(f"\nCPU {time.process_time() - cpu_started:.0f}s in this process; load average after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.gap:
        print_gap(results, configs, budgets)
    if args.misses:
        for r in results:
            if r.config.startswith("ctx") and r.recall < 1:
                print(f"- {r.set} {r.config} {r.budget} [{r.q['kind']}] {r.q['question']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([
            {"set": r.set, "config": r.config, "budget": r.budget, "id": r.q["id"], "kind": r.q["kind"],
             "found": r.found, "dated": r.dated, "has_date": r.has_date, "tokens": r.tokens}
            for r in results
        ], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
