"""The fact-recall benchmark's question file (bench/facts/questions.yaml) is sound: every answer note
exists in ../shared/corpora and holds every fact it is credited with, so a missed fact in
bench/bench_facts.py is always the context's fault, never the question's."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from conftest import CORPORA, REPO, bench_module

# bench/ is not a package; load its module by path (dataclasses need it registered first).
factcheck = bench_module("factcheck")


@pytest.fixture(scope="module")
def questions():
    return factcheck.load_questions()


@pytest.fixture(scope="module")
def corpora():
    if not CORPORA.exists():
        pytest.skip(f"real corpora not available ({CORPORA} is absent in this checkout)")
    return CORPORA


def test_every_fact_is_in_its_answer_notes(questions, corpora):
    assert factcheck.problems(questions, corpora) == []


def test_the_check_catches_a_fact_that_is_not_in_the_note(questions, corpora):
    first = questions[0]
    altered = dataclasses.replace(first, facts=(first.facts[0].replace(" ", " not ", 1), *first.facts[1:]))
    moved = dataclasses.replace(first, notes=("no/such/note.md",))
    found = factcheck.problems([altered, moved], corpora)
    assert any("fact not in its answer notes" in line for line in found)
    assert any("does not exist" in line for line in found)


def test_enough_questions_with_two_to_four_facts(questions):
    assert len(questions) >= 40
    assert all(2 <= len(q.facts) <= 4 for q in questions)
    assert len({q.id for q in questions}) == len(questions)


def test_dev_and_holdout_halves_are_balanced_in_every_corpus(questions):
    per_corpus = Counter((q.corpus, q.split) for q in questions)
    for corpus in {q.corpus for q in questions}:
        dev, holdout = per_corpus[(corpus, "dev")], per_corpus[(corpus, "holdout")]
        assert dev > 0 and holdout > 0 and abs(dev - holdout) <= 1, (corpus, dev, holdout)


@pytest.mark.parametrize(
    ("rendered", "expected"),
    [
        ("- **Do not** use this with `Dropbox`.", "do not use this with dropbox."),
        ("See [the FAQ](https://x.y/faq) and [[notes/a|this note]] or [[b]].", "see the faq and this note or b."),
        ("> ## Title\n  1. first   line\n\twrapped", "title first line wrapped"),
        ("![diagram](img.png) shows it", "diagram shows it"),
    ],
)
def test_normalise_removes_rendering_and_nothing_else(rendered, expected):
    assert factcheck.normalise(rendered) == expected


def test_a_fact_with_a_changed_word_does_not_match():
    question = factcheck.Question("x", "c", "dev", "q?", ("n.md",), ("the cache is cleared daily", "other fact"))
    context = factcheck.normalise("Note: the *cache* is cleared\n  weekly, and other fact holds.")
    assert question.facts_in(context) == ["other fact"]


def test_every_first_note_answer_is_a_node_of_its_corpus(corpora):
    """bench/bench_first_note.py's held-out set names its answers by Tana node id (or path): each
    must be a document of the export it is asked over, with text, so a rank of "absent" is always the
    ranking's fault."""
    import json

    import yaml

    data = yaml.safe_load((REPO / "bench" / "facts" / "first_note.yaml").read_text(encoding="utf-8"))
    assert set(data) == {"tana-books"}
    export = json.loads((corpora / "tana-books" / "sample-workspace.json").read_text(encoding="utf-8"))
    names = {doc["id"]: doc["props"].get("name", "") for doc in export["docs"]}
    items = data["tana-books"]
    assert len({item["id"] for item in items}) == len(items)
    missing = [(item["id"], note) for item in items for note in item["notes"] if not names.get(note, "").strip()]
    assert missing == []
