"""A text counted paragraph by paragraph (``counter.paragraph_chunks``) counts as itself, and a
paragraph met again inside another text (a passage, then its block, its core) is not counted
again: checked against tiktoken itself on every note and passage of the fixtures and the real
corpora, on generated text, and on every count a warm process kept after real builds."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import corpus_path, imported_graph, read_only_graph
from hypothesis import given, settings
from hypothesis import strategies as st
from test_count_chunks import _notes, _reference

from ctx.assemble.counter import CHUNKED_FROM, TokenCounter, paragraph_chunks


def _passages(db) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return [t for (t,) in conn.execute("SELECT text FROM passage_texts ORDER BY id")]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def corpus_passages(tmp_path_factory) -> list[str]:
    texts: list[str] = []
    for name in ("foam-docs", "logseq-docs", "dendron-site"):
        texts += _passages(read_only_graph(tmp_path_factory, corpus_path(name)))
    return texts


def _letter_cuts(chunks: list[str]) -> int:
    """Cuts made after a paragraph's last letter (not after its blank line)."""
    return sum(1 for a in chunks[:-1] if not a.endswith("\n"))


@pytest.mark.parametrize("plain", [False, True], ids=["default", "tiktoken"])
def test_every_note_and_passage_counts_as_its_paragraphs(plain, monkeypatch, corpus_passages):
    """The claim on real text, with the default encoder (rs-bpe where installed) and with tiktoken
    alone: each part counted apart adds up to the text's tokens, and the parts are the text."""
    from ctx import tokens

    if plain:
        monkeypatch.setenv("CTX_PLAIN", "1")
    tokens.get_encoding.cache_clear()
    tokens.tiktoken_encoding.cache_clear()
    try:
        reference = _reference()
        encoder = tokens.get_encoding("cl100k_base")
        texts = _notes() + corpus_passages
        assert len(texts) > 1000
        cuts = letter_cuts = 0
        for text in texts:
            chunks = paragraph_chunks(text)
            assert "".join(chunks) == text
            cuts += len(chunks) - 1
            letter_cuts += _letter_cuts(chunks)
            assert sum(encoder.count(chunk) for chunk in chunks) == len(reference.encode_ordinary(text)), text[:200]
        # Both kinds of cut occur often enough for the claim to be tested.
        assert letter_cuts > 1000 and cuts - letter_cuts > 1000
    finally:
        tokens.get_encoding.cache_clear()
        tokens.tiktoken_encoding.cache_clear()


_ALPHABET = list(" \t\n\n\n\r\x0b\x0c\x1c\x85\xa0\u2028'’sdmtlLvVxyzé日\u0301\u200d0123456789½.,;:!?-_/#*`~()[]\"…😀")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(_ALPHABET), max_size=30), min_size=1, max_size=8),
       st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n\n ", "\n\n\t", "\r\n\r\n", "\n"]), min_size=7, max_size=7))
def test_any_paragraphs_count_as_their_text(paragraphs, separators):
    """Whatever the paragraphs (any letters, digits, apostrophes, marks and white space at their
    ends) and the breaks between them: the parts count as the text."""
    text = "".join(p + s for p, s in zip(paragraphs, separators, strict=False))[:-1]
    reference = _reference()
    chunks = paragraph_chunks(text)
    assert "".join(chunks) == text
    assert sum(len(reference.encode_ordinary(c)) for c in chunks) == len(reference.encode_ordinary(text))


def test_a_cut_after_the_full_stop_would_miscount():
    """Where the cut goes matters: after the last letter the parts count as the text; after the
    full stop they do not ("." and the line breaks after it are one piece)."""
    reference = _reference()

    def count(parts: list[str]) -> int:
        return sum(len(reference.encode_ordinary(p)) for p in parts)

    text = "The tent stays at the end.\n\nNext day"
    assert paragraph_chunks(text) == ["The tent stays at the end", ".\n\n", "Next day"]
    assert count(paragraph_chunks(text)) == len(reference.encode_ordinary(text))
    assert count(["The tent stays at the end.", "\n\nNext day"]) != len(reference.encode_ordinary(text))


@pytest.mark.parametrize("text", [
    "café.\n\nNext",  # the last letter is not ASCII: no cut after it
    "word\n\n  indented",  # white space after the break: no cut there
    "no blank line at all, only words.",
    "e\u0301.\n\nX",  # a mark after the last letter
])
def test_no_cut_where_the_rule_does_not_hold(text):
    chunks = paragraph_chunks(text)
    assert "".join(chunks) == text
    if text.startswith("word"):
        assert chunks == [text]
    if text.startswith(("café", "e\u0301")):
        assert chunks[0] in ("café.\n\n", "e\u0301.\n\n")


def test_a_passage_shown_in_a_block_is_not_counted_again(corpus_passages):
    """A passage counted when it is attached, then shown in a block under its heading and beside
    another passage: only the block's own parts reach the encoder, and the block's count is its
    own. Its last paragraph ends the passage ("... end.") but not the block ("... end.\\n\\n")."""
    reference = _reference()
    counter = TokenCounter("cl100k_base")
    passages = [p for p in corpus_passages if len(p) >= CHUNKED_FROM and p.count("\n\n") >= 2
                and p.rstrip()[-1:] in ".!?" and p.rstrip()[-2:-1].isascii() and p.rstrip()[-2:-1].isalpha()][:40]
    assert len(passages) >= 20
    new_in_blocks = 0
    for first, second in zip(passages, passages[1:]):
        counter.count(first)
        counter.count(second)
        known = set(counter._chunks)
        block = f"### A note (2024-05-01)\nnote · distance 1 · score 0.500\n\n{first}\n\n[…]\n\n{second}\n\n"
        assert counter.count(block) == len(reference.encode_ordinary(block))
        added = set(counter._chunks) - known
        # The passages' paragraphs were all known, the last ones too; what is new is the block's
        # head and the marks.
        words = {w for passage in (first, second) for para in passage.split("\n\n") if len(w := para.strip(" .!?\n")) > 20}
        for chunk in added:
            assert chunk.strip(" .!?\n") not in words, chunk
        new_in_blocks += len(added)
    assert new_in_blocks < 4 * len(passages)


def test_every_count_a_warm_process_kept_is_the_texts_own(tmp_path_factory, warm_process):
    """Real builds of free-text questions at several budgets and depths, warm: every text count
    and every paragraph count kept is tiktoken's."""
    from ctx.assemble import BuildRequest, build_context
    from ctx.assemble.warm import shared_chunk_counts, shared_counts
    from ctx.store import as_store, connect

    db = imported_graph(tmp_path_factory, corpus_path("foam-docs"))
    conn = connect(db)
    try:
        store = as_store(conn)
        for topic in ("how do I publish my notes", "wikilinks and backlinks", "daily notes template"):
            for depth, budget in ((1, 800), (2, 2000), (3, 4000)):
                build_context(store, BuildRequest((topic,), depth=depth, max_tokens=budget))
    finally:
        conn.close()
    reference = _reference()
    texts, chunks = shared_counts("cl100k_base"), shared_chunk_counts("cl100k_base")
    assert texts and chunks and len(chunks) > 100
    for kept in (texts, chunks):
        for text, n in kept.items():
            assert n == len(reference.encode_ordinary(text)), text[:200]
