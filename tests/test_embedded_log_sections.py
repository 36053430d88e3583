"""With embeddings, a log's passage holding a section about the topic shows that section, not the
whole passage (issue 23, ``passage_view._cores``, ``matching_lines.core(sections=...)``).

The memory benchmark's set 31 (bench/memory_logs.py with the shared MuSiQue paragraphs: meeting
notes with an agenda heading per item, a household chat, a journal and a reading log), imported
and embedded with the default model. Asked "What quotes did we get for the autumn offsite, and
from whom?", the two answers are in two meetings' passages, full text's 1st and 5th (the embedded
ranking's 1st and 4th, at 0.96 of the best by full text's own share). Without vectors each
meeting passage holding an item about the offsite is cut to that item's section, nine cores of
38-67 tokens, and a 1,000-token context holds both answers; with vectors (main 27552df) a
passage holding a section about the topic was shown whole, the first passages took the room, and
the second answer was left out where the same graph without vectors shows it (docs/scale.md,
memory36).
"""

from __future__ import annotations


import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 31
QUESTION_ID = "s31-074"


@pytest.fixture(scope="module")
def meetings(tmp_path_factory):
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs", SEED, True)
    return questions[QUESTION_ID], conn


def test_with_vectors_a_meeting_passage_shows_its_section_about_the_topic(meetings):
    question, conn = meetings
    assert question["question"] == "What quotes did we get for the autumn offsite, and from whom?"
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=1000)).text
    assert count_tokens(text) <= 1000
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])
