"""Without embeddings, the notes of the graph's best passages are read as far as their cores could
fill the room, and a log stands no lower than its best passage says (issue 23, ``prepare.
passage_owners``, ``packing_order.passage_units``).

The memory benchmark's set 4 (bench/memory_logs2.py: daily stand-ups, a lab notebook and a mail
digest, one note per session), imported without embeddings. Asked "What was the cause of the
problem with the rate limiter?", the answering stand-up line ("The trouble with the rate limiter
turned out to be a mislabelled box, found by Marisol.") is in the graph's 18th passage by full
text, in a stand-up whose node ranks far lower. The notes read for passage packing were those of
the graph's best passages reckoned at a whole passage (250 tokens) each until twice the room: 9 at
1,000 tokens, 17 at 2,000, so its note was never read and the answer was in no context (main
d3a2fed), where chunk BM25 packs it. Reckoned at a core's size, its note is read; priced by its
note's rank in the fused node ranking (0.15 of the best), its core still lost to the first
stand-ups' weak lines, and its note's standing is now its own best passage's.
"""

from __future__ import annotations

import json

import pytest

from conftest import bench_module
from ctx.assemble import BuildRequest, build_context
from ctx.assemble.passage_rank import rank_passages
from ctx.assemble.prepare import OWNER_ESTIMATE, PASSAGE_ESTIMATE
from ctx.store import as_store
from ctx.tokens import count_tokens

memory_logs2 = bench_module("memory_logs2")
factcheck = bench_module("factcheck")

SEED = 4
QUESTION_ID = "s4-008"


@pytest.fixture(scope="module")
def standups(tmp_path_factory):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("standups")
    memory_logs2.generate(SEED, root / "set")
    questions = {q["id"]: q for q in map(json.loads, (root / "set" / "questions.jsonl").read_text().splitlines())}
    conn = connect(root / "plain.db", create=True)
    import_path(conn, root / "set" / "notes")
    return questions[QUESTION_ID], conn


def test_the_answer_s_passage_ranks_beyond_what_whole_passages_would_read(standups):
    question, conn = standups
    ranking = rank_passages(as_store(conn).reader(), question["question"], None)
    evidence = factcheck.normalise(question["evidence"][0])
    texts = dict(conn.execute("select id, text from passage_texts").fetchall())
    holder = next(pid for pid in ranking.passages if evidence in factcheck.normalise(texts[pid]))
    rank = sorted(ranking.passages, key=lambda p: (-ranking.passages[p], p)).index(holder) + 1
    # Past the passages whose notes 250-token reckoning reads at 2,000 tokens (about 1,900 of room),
    # within what a core's reckoning reads at 1,000.
    assert (2 * 1900 + 200) // PASSAGE_ESTIMATE < rank <= (2 * 900 + 200) // OWNER_ESTIMATE


@pytest.mark.parametrize("budget", [1000, 2000])
def test_a_well_ranked_passage_of_an_unread_note_competes(standups, budget):
    question, conn = standups
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"]), text
