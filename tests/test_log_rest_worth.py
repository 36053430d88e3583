"""Without embeddings, a log's rest is worth less than a page's beside its core (issue 23).

The memory benchmark's set 21 (bench/memory_logs2.py: daily stand-ups, a lab notebook and a mail
digest, one note per session, each passage a run of unrelated entries), imported without
embeddings. A log's passage is offered as its core (the paragraphs holding the question's words)
and then its rest (its other entries), the rest at ``1 - 0.5 x relevance`` of the passage's worth:
a weak match's rest at 0.6-0.8 of its core. The first logs' rests, 100-250 tokens each and
holding none of the question's words, outbid the next logs' answering cores, and these answers
were in no context at the budgets below (main 49156e8), where chunk BM25 packs their ~150-token
chunk. A log's rest is now worth ``focus.LOG_REST`` (0.5) of that where full text alone ranked
(``passage_view.attach_pieces``).
"""

from __future__ import annotations

import json

import pytest

from conftest import bench_module
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

memory_logs2 = bench_module("memory_logs2")
factcheck = bench_module("factcheck")

SEED = 21


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("logs")
    memory_logs2.generate(SEED, root / "set")
    questions = {q["id"]: q for q in map(json.loads, (root / "set" / "questions.jsonl").read_text().splitlines())}
    conn = connect(root / "plain.db", create=True)
    import_path(conn, root / "set" / "notes")
    return questions, conn


# s21-022 and s21-055 are asked in other words (their answering stand-up and lab entry rank below
# other sessions' weak matches); s21-109 asks two things at once, its second answer in a later
# digest whose core came after the first digests' rests.
@pytest.mark.parametrize(("question_id", "budget"), [("s21-022", 4000), ("s21-055", 4000), ("s21-109", 1000)])
def test_without_vectors_a_log_s_rest_gives_way_to_the_next_log_s_answer(logs, question_id, budget):
    questions, conn = logs
    question = questions[question_id]
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])

