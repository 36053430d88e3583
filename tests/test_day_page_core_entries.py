"""Without embeddings, a day page's core keeps every entry holding the question's words (issue 23).

The memory benchmark's set 41 (bench/memory_logs3.py: a Logseq graph of daily journal pages, ~20
unrelated one-line entries a day, every entry a block node of its own), imported without
embeddings. Asked "What figure did Ines get when looking at what we drive to work in?", the
answering entry ("Ines noted the fuel use of the car as 189.9 litres per 100 km.") shares only
"Ines" with the question, and so does another entry of the same day. The day's passage ranks
second, but its core was the fewest entries covering the question's words, the other one, and a
day page's other entries come last: the answer was in no context at 1,000, 2,000 or 4,000 tokens
(main 9545b8e), where chunk BM25 packs its ~150-token chunk. Now a day page's passage is offered
in three parts: its core, then every entry holding a word of the question (its wider core,
``matching_lines.core(every=True)``, ``focus.Piece.wide``), then its other entries; only where
full text alone ranked (``passage_view._cores``).
"""

from __future__ import annotations

import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.assemble import matching_lines as ml
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 41


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs3", SEED, False)
    return questions, conn


# s41-052: one entry answers, another of its day holds the same name; s41-075 (two contacts asked
# at once): the roof repair's contact is an entry of a day whose core covered "contact" elsewhere.
# The wider core is offered after the cores (``focus.WIDE_WORTH``): at 1,000 tokens s41-052's other
# days' cores come first.
@pytest.mark.parametrize(("question_id", "budget"), [
    ("s41-052", 2000), ("s41-052", 4000), ("s41-075", 1000), ("s41-075", 2000), ("s41-075", 4000),
])
def test_without_vectors_a_day_page_offers_every_entry_holding_the_question_s_words(journal, question_id, budget):
    questions, conn = journal
    question = questions[question_id]
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])


DAY = """- Rain all afternoon, stayed in. Drove Ines to the station.
- [[Car]]
  - Bought bread, milk and 30 eggs.
  - Ines noted the fuel use of the car as 189.9 litres per 100 km.
- Watched half a documentary about octopuses.
- Podcast about city planning, worth a second listen.
- Ordered Greta's birthday present."""


def test_a_day_page_s_wider_core_keeps_every_entry_holding_a_word():
    weight = {ml.fold("Ines"): 1.0, ml.fold("work"): 2.0}  # as ``matching_lines.weights`` keys them
    cover = ml.core(DAY, weight, items=True, sections=True)
    # The fewest entries covering the words: the first saying "Ines", not the answer.
    assert cover is not None and "Drove Ines" in cover.text and "189.9" not in cover.text
    wide = ml.core(DAY, weight, items=True, sections=True, every=True)
    # Both entries saying "Ines" (the second with its parent "[[Car]]"), none of the others.
    assert wide is not None
    assert "Drove Ines" in wide.text and "189.9" in wide.text and "[[Car]]" in wide.text
    assert "octopuses" not in wide.text and "Greta" not in wide.text
