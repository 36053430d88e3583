"""Heading lines found by matching only at the lines that can open one (``passages._heading_matches``):
the very matches (where, which groups) the pattern's scan of the whole text finds, on every note
and passage of real corpora and on generated texts of headings, look-alikes, spaces, tabs and
line breaks; and the nested headings built from them are unchanged."""

from __future__ import annotations

import itertools
import random
import sqlite3

import pytest
from conftest import corpus_path, read_only_graph

from ctx import passages


def scanned(text: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in passages._HEADING_LINES.finditer(text)]


def matched(text: str) -> list[tuple[int, int, tuple[str | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in passages._heading_matches(text)]


@pytest.mark.parametrize("corpus", ["foam-docs", "logseq-docs", "dendron-site"])
def test_every_note_and_passage_of_a_corpus(tmp_path_factory, corpus):
    db = read_only_graph(tmp_path_factory, corpus_path(corpus))
    conn = sqlite3.connect(db)
    texts = [b for (b,) in conn.execute("SELECT body FROM nodes ORDER BY id")]
    texts += [t for (t,) in conn.execute("SELECT text FROM passage_texts ORDER BY id")]
    conn.close()
    found = 0
    for text in texts:
        assert matched(text) == scanned(text), text[:200]
        found += len(scanned(text))
    assert found > 100  # headings are among them


PIECES = ["#", "##", "###", "####### ", "# Title", "## Two #", "#Tag", " # a", "   ## b", "    # c", "\t# d",
          "a # b", "x", " ", "\t", "\n", "\r", "#\n", "## \n", "text ## more"]


def test_generated_texts():
    checked = 0
    for size in range(1, 5):
        for parts in itertools.product(PIECES, repeat=size):
            for sep in ("", "\n"):
                text = sep.join(parts)
                assert matched(text) == scanned(text), repr(text)
                checked += 1
    rng = random.Random(21)
    for _ in range(5000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 20)))
        assert matched(text) == scanned(text), repr(text)
    assert checked > 100_000


def test_nested_headings_are_unchanged():
    text = "Intro\n## Plan\n  ### Step one #\ntext # not a heading\n#Tag\n    # code\n# Top"
    assert passages.top_heading_level(text) == 1
    assert passages.nest_headings(text) == (
        "Intro\n##### Plan\n###### Step one\ntext # not a heading\n#Tag\n    # code\n#### Top"
    )
