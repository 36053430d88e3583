"""Without embeddings, a log's rest is worth half its passage however weakly the words matched
(issue 23, ``passage_view.attach_pieces``).

The memory benchmark's set 6 (bench/memory_logs2.py: daily stand-ups, a lab notebook and a mail
digest, one note per session), imported without embeddings. Asked "Who is the contact for the rate
limiter, and who is the contact for the invoice PDF renderer?", each answer is one stand-up line
among five or six others. A weakly matched stand-up's rest (its other speakers' lines) was kept at
up to 0.9 of its passage's worth, so at 2,000 tokens the rests of the first part's stand-ups came
before the answering lines themselves, and neither answer was in the context (main 1fdd446). On the
memory sets such rests held 3 of the 308 evidence paragraphs ctx showed at 4,000 tokens (sets 1 and
24), while taking 32% of the text at 1,000 tokens and 57% at 4,000 (set 24; docs/scale.md,
memory48).
"""

from __future__ import annotations

import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 6
QUESTION_ID = "s6-034"


@pytest.fixture(scope="module")
def standups(tmp_path_factory):
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs2", SEED, False)
    return questions[QUESTION_ID], conn


def test_both_parts_of_a_two_part_question_before_the_first_part_s_weak_rests(standups):
    question, conn = standups
    assert question["kind"] == "multi" and len(question["evidence"]) == 2
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=2000)).text
    assert count_tokens(text) <= 2000
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"]), text
