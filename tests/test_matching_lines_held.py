"""A paragraph's topic words found without folding every word of an ASCII paragraph that holds
none (``matching_lines.held``): the same set as ``words_of(text) & terms`` on every paragraph of
real notes, on Unicode and inflected forms, and no word folded where no term is in the text."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import corpus_path, read_only_graph

from ctx.assemble import matching_lines as ml


def terms_to_try(text: str) -> list[frozenset[str]]:
    """Folded words of the text (held), their starts and lengthenings (at and past word edges),
    and words of another text (not held)."""
    words = [ml.fold(w) for w in ml._WORD.findall(text)[:12]]
    tried = [frozenset(words[:3]), frozenset(w[:3] for w in words), frozenset(w + "s" for w in words),
             frozenset(w[1:] for w in words if len(w) > 1), frozenset({"kayak", "zzyzx", "guest"})]
    return [t for t in tried if t]


@pytest.mark.parametrize("corpus", ["foam-docs", "logseq-docs"])
def test_every_paragraph_of_a_real_note_holds_what_words_of_said(tmp_path_factory, corpus):
    db = read_only_graph(tmp_path_factory, corpus_path(corpus))
    conn = sqlite3.connect(db)
    texts = [t for (t,) in conn.execute("SELECT text FROM passage_texts ORDER BY id")]
    conn.close()
    assert len(texts) > 100
    held = empty = 0
    for text in texts:
        for para in ml.paragraphs(text) + ml.paragraphs(text, items=True):
            for terms in terms_to_try(para) + terms_to_try(texts[len(para) % len(texts)]):
                got = ml.held(para, terms)
                assert got == ml.words_of(para) & terms, (para, terms)
                held += bool(got)
                empty += not got
    # Both answers occur often: the comparison is not all one way.
    assert held > 1000 and empty > 1000


@pytest.mark.parametrize("text, terms, expected", [
    ("Café au lait", {"cafe"}, {"cafe"}),  # accents dropped: not ASCII, folded word by word
    ("The GUESTS arrived", {"guest"}, {"guest"}),  # case and a suffix
    ("Jane's kayak", {"jane", "kayak"}, {"jane", "kayak"}),
    ("ﬁnal notes", {"final"}, {"final"}),  # a ligature NFKD spells in ASCII
    ("Eating outside", {"eat"}, {"eat"}),
    ("Kayaking", {"kayaking"}, set()),  # the fold cuts "ing": "kayak", not the term
    ("no such word here", {"kayak"}, set()),
])
def test_held_folds_as_words_of(text, terms, expected):
    assert ml.held(text, frozenset(terms)) == frozenset(expected) == ml.words_of(text) & frozenset(terms)


def test_an_ascii_paragraph_without_a_term_folds_no_word():
    ml.words_of.cache_clear()
    before = ml.fold.cache_info()
    assert ml.held("Packed the tent, boots and stove for Saturday's trail", frozenset({"kayak"})) == frozenset()
    after = ml.fold.cache_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)
    assert ml.words_of.cache_info().currsize == 0
