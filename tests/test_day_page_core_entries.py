"""Without embeddings, a day page's core keeps every entry holding the question's words (issue 23).

The memory benchmark's set 41 (bench/memory_logs3.py: a Logseq graph of daily journal pages, ~20
unrelated one-line entries a day, every entry a block node of its own), imported without
embeddings. Asked "What figure did Ines get when looking at what we drive to work in?", the
answering entry ("Ines noted the fuel use of the car as 189.9 litres per 100 km.") shares only
"Ines" with the question, and so does another entry of the same day. The day's passage ranks
second, but its core was the fewest entries covering the question's words, the other one, and a
day page's other entries come last: the answer was in no context at 1,000, 2,000 or 4,000 tokens
(main 9545b8e), where chunk BM25 packs its ~150-token chunk. Now a day page's core keeps every
entry holding a word of the question (``matching_lines.core``, items, full text alone ranking).
"""

from __future__ import annotations

import json

import pytest

from conftest import bench_module
from ctx.assemble import BuildRequest, build_context
from ctx.assemble import matching_lines as ml
from ctx.tokens import count_tokens

memory_logs3 = bench_module("memory_logs3")
factcheck = bench_module("factcheck")

SEED = 41


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("journal")
    memory_logs3.generate(SEED, root / "set")
    questions = {q["id"]: q for q in map(json.loads, (root / "set" / "questions.jsonl").read_text().splitlines())}
    conn = connect(root / "plain.db", create=True)
    import_path(conn, root / "set" / "notes")
    return questions, conn


# s41-052: one entry answers, another of its day holds the same name; s41-075 (two contacts asked
# at once): the roof repair's contact is an entry of a day whose core covered "contact" elsewhere.
@pytest.mark.parametrize("question_id", ["s41-052", "s41-075"])
@pytest.mark.parametrize("budget", [1000, 2000, 4000])
def test_without_vectors_a_day_page_s_core_keeps_every_entry_holding_the_question_s_words(
    journal, question_id, budget
):
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


def test_a_day_page_keeps_every_entry_holding_a_word_where_full_text_alone_ranked():
    weight = {ml.fold("Ines"): 1.0, ml.fold("work"): 2.0}  # as ``matching_lines.weights`` keys them
    plain = ml.core(DAY, weight, items=True, sections=True)
    assert plain is not None
    # Both entries saying "Ines" (the second with its parent "[[Car]]"), none of the others.
    assert "Drove Ines" in plain.text and "189.9" in plain.text and "[[Car]]" in plain.text
    assert "octopuses" not in plain.text and "Greta" not in plain.text
    # With vectors (``sections`` off) the cover is the fewest entries, as before: the entries the
    # vectors found join it there (``also``).
    embedded = ml.core(DAY, weight, items=True)
    assert embedded is not None and "Drove Ines" in embedded.text and "189.9" not in embedded.text
    # Not a day page: a log's paragraphs keep the fewest covering the words.
    prose = "\n\n".join(line.strip(" -") for line in DAY.splitlines())
    cover = ml.core(prose, weight, sections=True)
    assert cover is not None and "Drove Ines" in cover.text and "189.9" not in cover.text
