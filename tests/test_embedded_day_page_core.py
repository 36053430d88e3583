"""With embeddings, a day page's core keeps the entries whose own vectors found it (issue 23).

The memory benchmark's set 40 (bench/memory_logs3.py: a Logseq graph of daily journal pages, ~20
unrelated entries a day, every entry a block node of its own), imported and embedded with the
default model. Asked "What figure did Ugo get when looking at what keeps the radiators warm?",
the answering entry ("Reading for the boiler from Ugo - pressure 355.4 bar.") shares only "Ugo"
with the question. Its block's vector is among the nearest, so its day's passage ranks first
(``passage_rank._by_blocks``); but the passage's core was its entries holding the question's
words, "Drove Ugo to the station.", and a day page's other entries come last: the passage was in
every context and its answer in none, at 1,000, 2,000 or 4,000 tokens (main 167a73a). Now the
entries the vectors found join the core, after the word cover, never in its place
(``passage_view._cores``, ``matching_lines.core(also=...)``; docs/scale.md, memory26).
"""

from __future__ import annotations


import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.assemble import matching_lines as ml
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 40
QUESTION_ID = "s40-055"
WIDE_QUESTION_ID = "s40-047"


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    questions, (conn, plain) = memory_set(tmp_path_factory, "memory_logs3", SEED, True, False)
    return questions, conn, plain


@pytest.mark.parametrize("budget", [1000, 4000])
def test_with_vectors_a_day_page_s_core_keeps_the_entry_its_block_s_vector_found(journal, budget):
    question, conn = journal[0][QUESTION_ID], journal[1]
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])


DAY = """- Rain all afternoon, stayed in. Drove Ugo to the station.
- [[Home]]
  - Bought bread, milk and 30 eggs.
  - Reading for the boiler from Ugo - pressure 355.4 bar.
- Watched half a documentary about octopuses.
- Podcast about city planning, worth a second listen.
- Ordered Ines's birthday present."""


def test_with_vectors_a_day_page_offers_every_entry_holding_the_question_s_words(journal):
    """ "What figure did Hamid get when looking at what our terrier eats?" is answered by
    "Reading for Pepper's diet from Hamid - weight 10.6 kg.", which shares only "Hamid" with the
    question; its day's page holds five other entries naming Hamid, the core covers the word
    with one of them, and the answer's block is 63rd by meaning, past the nearest 50 that join
    the core. Without vectors the day page offers its wider core (every entry holding a word of
    the question) once the cores are packed, and a 4,000-token context shows the answer; with
    vectors the wider core was never offered, and the embedded graph's context lacked what the
    same graph without vectors showed (main 27552df; ``passage_view._cores``)."""
    questions, conn, _ = journal
    question = questions[WIDE_QUESTION_ID]
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=4000)).text
    assert count_tokens(text) <= 4000
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])


def _recall(conn, questions, budget: int) -> float:
    found = []
    for q in questions:
        context = factcheck.normalise(build_context(conn, BuildRequest((q["question"],), max_tokens=budget)).text)
        found.append(sum(factcheck.normalise(e) in context for e in q["evidence"]) / len(q["evidence"]))
    return sum(found) / len(found)


def test_with_vectors_open_questions_recall_no_less_than_without(journal):
    """Issue 23: with embeddings, recall is never below the same graph without them. Benchmarked
    on this set's questions asked in other words than the notes use (``open``) at 4,000 tokens,
    the kind and budget where a held-out Logseq set had the embedded build below (0.915 against
    0.927, one open question), and where the embedded build's wider context loses the most
    answers the plain one shows (13 open-question cells over memory sets 10-19 and 40-42 on main
    27552df). Here: 0.50 without vectors, 0.80 with (0.75 on 27552df)."""
    questions, conn, plain = journal
    asked = [q for q in questions.values() if q["kind"] == "open"]
    assert len(asked) == 20  # memory_logs3: 20 open questions a set
    assert _recall(conn, asked, 4000) >= _recall(plain, asked, 4000)


def test_the_entries_found_join_the_word_cover_and_never_replace_it():
    weight = {"ugo": 1.0}
    alone = ml.core(DAY, weight, items=True)
    assert alone is not None and "Drove Ugo" in alone.text and "355.4" not in alone.text
    home = ml.core(DAY, weight, items=True, also=lambda paras: {i for i, p in enumerate(paras) if "boiler" in p})
    assert home is not None
    # The found entry ("[[Home]]" with its children) joins; the entry holding the word stays.
    assert "355.4" in home.text and "Drove Ugo" in home.text
    assert "octopuses" not in home.text
