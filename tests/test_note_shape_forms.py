"""A title word's forms found in a passage without a pattern compiled per word
(``note_shape._holds``): the same answer as the pattern it replaced, ``\\b{word}\\w*`` with each
match folded, on real notes and on made-up texts around word boundaries and Unicode."""

from __future__ import annotations

import re
import sqlite3
from functools import lru_cache

import pytest
from conftest import corpus_path, read_only_graph

from ctx.assemble import matching_lines as ml
from ctx.assemble.note_shape import _a_form_of, _holds, title_words


@lru_cache(maxsize=None)
def pattern_of(word: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(word)}\w*")


def holds_by_pattern(text: str, word: str) -> bool:
    """What ``_holds`` answered with a pattern compiled for the word."""
    return any(_a_form_of(ml.fold(m.group()), word) for m in pattern_of(word).finditer(text))


def words_to_try(title: str, text: str) -> list[str]:
    """The title's words, and folded words and word starts of the text (each a case that
    holds), plus their lengthenings and tails (cases at and past word edges)."""
    out = list(title_words(title))
    for w in ml._WORD.findall(text)[:20]:
        folded = ml.fold(w)
        out += [folded, folded[:3], folded[1:], folded + "x", w.lower()]
    return [w for w in dict.fromkeys(out) if w]


@pytest.mark.parametrize("corpus", ["foam-docs", "logseq-docs"])
def test_a_real_note_s_passages_hold_what_the_pattern_found(tmp_path_factory, corpus):
    db = read_only_graph(tmp_path_factory, corpus_path(corpus))
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT n.title, p.heading, p.text FROM passage_texts p JOIN nodes n ON n.id = p.node_id ORDER BY p.id"
    ).fetchall()
    conn.close()
    assert len(rows) > 100
    checked = held = 0
    for title, heading, text in rows:
        low = f"{heading}\n{text}".lower()
        for word in words_to_try(title, low):
            expected = holds_by_pattern(low, word)
            assert _holds(low, word) == expected, (title, word)
            checked += 1
            held += expected
    # Both answers occur often: the comparison is not all one way.
    assert held > 1000 and checked - held > 1000


@pytest.mark.parametrize("text, word", [
    ("lab notebooks", "notebook"),  # a longer form
    ("label", "lab"),  # too long a form
    ("a lab", "lab"),
    ("collab lab", "lab"),  # inside a word first, then at a boundary
    ("collab", "lab"),
    ("_lab lab_ labs", "lab"),  # "_" is a word character
    ("x-templates", "templat"),
    ("templatesque template", "templat"),
    ("½ 1⁄2", "1⁄2"),  # a folded word holding a character that is no word character
    ("a(1) ⑴ (1)", "(1)"),  # a folded word opening with one: the boundary is the other way
    ("(1)", "(1)"),
    ("é café", "é"),
    ("naïve naive", "naive"),
    ("", "word"),
    ("word", "word"),
    ("wordword word", "word"),  # the first match runs on: the next is searched after it
    ("wordwords", "word"),
    ("ab", ""),
])
def test_made_up_texts_hold_what_the_pattern_found(text, word):
    assert _holds(text, word) == holds_by_pattern(text, word)


def test_every_boundary_of_short_made_up_texts():
    alphabet = ["a", "b", "_", " ", "-", "1", "é", "⁄", "\n"]
    words = ["a", "ab", "ba", "a-", "-a", "_a", "1⁄", "⁄1", "é", "-"]
    import itertools

    for n in range(1, 6):
        for chars in itertools.product(alphabet, repeat=n):
            text = "".join(chars)
            for word in words:
                assert _holds(text, word) == holds_by_pattern(text, word), (text, word)
