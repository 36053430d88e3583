"""A passage's paragraphs found without the fence pattern on blocks that hold no three backticks
or tildes in a row (``matching_lines.paragraphs``): the same paragraphs as the pattern run on
every block gives, on every passage and note of real corpora (fenced code among them) and on
generated texts with fences of every kind, open and closed, indented, and look-alikes."""

from __future__ import annotations

import itertools
import random
import re
import sqlite3

import pytest
from conftest import corpus_path, read_only_graph

from ctx.assemble import matching_lines as ml

_BLANK = re.compile(r"\n[ \t]*\n")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})", re.MULTILINE)


def reference(text: str, items: bool = False) -> list[str]:
    """The paragraphs as the pattern asked of every block gives them (main before the cut)."""
    blocks = [b for b in _BLANK.split(text) if b.strip()]
    out: list[str] = []
    open_fence = False
    for block in blocks:
        if open_fence:
            out[-1] += "\n\n" + block
        else:
            out.extend(ml._items(block) if items else (block,))
        if len(_FENCE.findall(block)) % 2:
            open_fence = not open_fence
    return out


@pytest.mark.parametrize("corpus", ["foam-docs", "logseq-docs", "dendron-site"])
def test_every_passage_and_note_of_a_corpus(tmp_path_factory, corpus):
    db = read_only_graph(tmp_path_factory, corpus_path(corpus))
    conn = sqlite3.connect(db)
    texts = [t for (t,) in conn.execute("SELECT text FROM passage_texts ORDER BY id")]
    texts += [b for (b,) in conn.execute("SELECT body FROM nodes ORDER BY id")]
    conn.close()
    fenced = 0
    for text in texts:
        for items in (False, True):
            assert ml.paragraphs(text, items) == reference(text, items), text[:200]
        fenced += "```" in text or "~~~" in text
    assert len(texts) > 200 and fenced > 10  # fenced code is among them


LINES = ["text", "```", "```python", "  ```", "~~~", "   ~~~~", "``", "~~", "a ``` inside", "- item", "1. item",
         "    ```", "\t```", "`` `", ""]


def test_generated_texts_with_fences_of_every_kind():
    rng = random.Random(21)
    checked = 0
    for size in range(1, 7):
        for lines in itertools.islice(itertools.product(LINES, repeat=size), 4000):
            text = "\n".join(lines)
            for items in (False, True):
                assert ml.paragraphs(text, items) == reference(text, items), repr(text)
            checked += 1
        for _ in range(500):
            text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 12)))
            assert ml.paragraphs(text) == reference(text), repr(text)
    assert checked > 10000
