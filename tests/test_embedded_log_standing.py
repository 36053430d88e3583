"""With embeddings, a log's standing is damped as without them (issue 23, ``passage_view``).

The memory benchmark's set 21 (bench/memory_logs2.py: a stand-up log, a lab notebook and an
allotment society's mail digest, one note per session, each issue's messages under "#### Message
from ..." headings), imported twice, once embedded with the default model. Asked what caused the
pond restoration's trouble, the answer ("Xiomara tracked down why the pond restoration
misbehaved: ...") shares only "pond restoration" with the question, as a dozen other issues'
messages do. Each log is cut to its messages' cores either way; at full standing
with vectors, the first issue's core and then its rest (its share 1 times half) outbid every later
issue's answering core, and at 1,000 tokens the answer was left out where the graph without
vectors shows it (main 7c88fa3). Damped toward the best log's standing, as without vectors, each
issue's matching core comes before the first issue's rest (docs/scale.md, memory18).

Asked who the contact at the bank for the annual fees is, the answering message is full text's 4th
passage and the vectors' 19th; fused by rank alone it fell to 11th, its note was not even read, and
at 1,000 tokens the embedded graph left it out where the plain graph shows it (main da8ff97). With
vectors a log's passage is now worth at least what either ranking alone makes of it (full text's
own score share here), and the build reads by those shares too (``passage_rank.at_least_alone``,
``prepare.read_as_without_vectors``; docs/scale.md, memory20).
"""

from __future__ import annotations


import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 21
QUESTION_ID = "s21-077"
# "Who is our contact at the bank for the annual fees?": the answering message is full text's 4th
# passage and the vectors' 19th (memory20).
BANK_ID = "s21-080"


@pytest.fixture(scope="module")
def digest(tmp_path_factory):
    questions, (plain, embedded) = memory_set(tmp_path_factory, "memory_logs2", SEED, False, True)
    return questions, {"plain": plain, "embedded": embedded}


def _shows(conn, question: dict, budget: int) -> bool:
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    # Scored as bench_memory scores it: every evidence paragraph in the normalised context.
    context = factcheck.normalise(text)
    return all(factcheck.normalise(e) in context for e in question["evidence"])


def test_with_vectors_a_later_log_s_answering_core_comes_before_the_first_log_s_rest(digest):
    questions, graphs = digest
    question = questions[QUESTION_ID]
    assert _shows(graphs["plain"], question, 1000)
    assert _shows(graphs["embedded"], question, 1000)


def test_with_vectors_a_passage_full_text_ranks_high_is_not_lost_by_fusion(digest):
    questions, graphs = digest
    question = questions[BANK_ID]
    assert _shows(graphs["plain"], question, 1000)
    assert _shows(graphs["embedded"], question, 1000)
