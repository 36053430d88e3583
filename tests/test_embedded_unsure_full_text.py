"""With embeddings, where full text is unsure of a question, a log's passage only the vectors
found is priced at the vectors' rank share (issue 23; ``passage_rank.full_text_sureness``,
``at_least_alone``; docs/scale.md, memory22).

The memory benchmark's set 26 (bench/memory_logs2.py: a stand-up log, a lab notebook and a mail
digest, one note per session), imported and embedded with the default model. Asked "How did the
numbers look for how green the greenhouse plants stay under drought when Jovana checked?", the
answer says "the leaf chlorophyll series showed a chlorophyll index of 726 SPAD units": no rare
word of the question. Full text's first passages hold only "numbers", "checked" and the like, and
its shares for the lab notebook's entries, lifted to what the graph without vectors prices them
(memory20), outbid the answering entry the vectors ranked near the top: at 2,000 tokens the
embedded graph left it out (main 69a567f). Full text unsure, the vectors' rank share prices it.

Set 23's s23-096 ("How did the numbers look for trading leftover packets each winter when
Saoirse checked?"), full text unsure too: its answering entry is full text's own match, and the
vectors' passages lifted over it to their rank share, shown whole, took its room at 1,000
tokens (memory22's rule). They may not outrank full text's first five passages (memory24).
"""

from __future__ import annotations


import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

CASES = {
    # (seed, question id, budget)
    "s26-062": (26, "s26-062", 2000),
    # Full text unsure, "How did the numbers look for ... when X checked?": the answering entry
    # is full text's own match; lifted over it to their rank share, the vectors' passages
    # (shown whole: no word of the question says which paragraph answers) took its room at
    # 1,000 tokens. They may not outrank full text's first five passages (memory24).
    "s23-096": (23, "s23-096", 1000),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def lab_notebook(request, tmp_path_factory):
    seed, question_id, budget = CASES[request.param]
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs2", seed, True)
    return questions[question_id], conn, budget


def test_where_full_text_is_unsure_the_answer_is_shown(lab_notebook):
    from ctx.assemble.passage_rank import UNSURE, full_text_sureness, query_terms
    from ctx.store import as_store

    question, conn, budget = lab_notebook
    reader = as_store(conn).reader()
    hits = reader.search_passages(query_terms(question["question"]), limit=200)
    assert full_text_sureness(reader, question["question"], hits) < UNSURE
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    # Scored as bench_memory scores it: every evidence paragraph in the normalised context.
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])
