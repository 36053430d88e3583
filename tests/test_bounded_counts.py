"""A count asked as "at most this many?" (``count_within``, ``counter.Tally``, ``Packer.fits``) gives
the exact count whenever it fits and says "more" otherwise, whatever the limits asked and in
whatever order: checked against tiktoken itself on the notes and passages of the fixtures and real
corpora, with the default encoder (rs-bpe, which stops counting past the limit) and with tiktoken
alone; and passages chosen from such counts are the ones their exact counts choose."""

from __future__ import annotations

import random
import sqlite3

import pytest
from conftest import corpus_path, read_only_graph
from test_count_chunks import _notes, _reference

from ctx.assemble import focus
from ctx.assemble.counter import Tally, TokenCounter


def _passages_by_note(db) -> list[list[str]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT node_id, text FROM passage_texts ORDER BY node_id, ord").fetchall()
    finally:
        conn.close()
    out: dict[str, list[str]] = {}
    for node_id, text in rows:
        out.setdefault(node_id, []).append(text)
    return list(out.values())


@pytest.fixture(scope="module")
def corpus_notes(tmp_path_factory) -> list[list[str]]:
    notes: list[list[str]] = []
    for name in ("foam-docs", "logseq-docs", "dendron-site"):
        notes += _passages_by_note(read_only_graph(tmp_path_factory, corpus_path(name)))
    return notes


@pytest.fixture(params=[False, True], ids=["default", "tiktoken"])
def encoders(request, monkeypatch):
    from ctx import tokens

    if request.param:
        monkeypatch.setenv("CTX_PLAIN", "1")
    tokens.get_encoding.cache_clear()
    tokens.tiktoken_encoding.cache_clear()
    yield tokens.get_encoding("cl100k_base")
    tokens.get_encoding.cache_clear()
    tokens.tiktoken_encoding.cache_clear()


def _limits(n: int) -> list[int]:
    return sorted({-1, 0, n // 2, n - 1, n, n + 1})


def test_a_bounded_count_is_the_count_when_it_fits(encoders, corpus_notes):
    """Every note and passage at limits around its count, in the encoder and in the build's counter
    (paragraph by paragraph for long texts): the count when it is at most the limit, else None;
    what the counter keeps is always the exact count."""
    reference = _reference()
    texts = _notes() + [p for note in corpus_notes for p in note]
    assert len(texts) > 1000
    counter = TokenCounter("cl100k_base")
    stopped = 0
    for text in texts:
        n = len(reference.encode_ordinary(text))
        for limit in _limits(n):
            expected = n if n <= limit else None
            assert encoders.count_within(text, limit) == expected, (limit, n, text[:200])
            assert counter.count_within(text, limit) == expected, (limit, n, text[:200])
            stopped += expected is None
        assert counter.count(text) == n
    assert stopped > 3000
    for kept in (counter._cache, counter._chunks):
        for text, n in kept.items():
            assert n == len(reference.encode_ordinary(text)), text[:200]


def test_a_lazy_count_answers_every_limit_as_the_exact_count(encoders, corpus_notes):
    """A passage asked about limits in any order (rising, falling, repeated: the packer's rooms
    shrink, the fit's allowances grow) answers each as its exact count would, then gives that
    count."""
    reference = _reference()
    rng = random.Random(21)
    counter = TokenCounter("cl100k_base")
    passages = [p for note in corpus_notes for p in note]
    for text in rng.sample(passages, 400):
        n = len(reference.encode_ordinary(text))
        piece = focus.Piece(0, (), text, Tally(text, counter), 1.0)
        for limit in [rng.randint(-2, 2 * n + 2) for _ in range(6)] + [n - 1, n - 1, n, n - 1]:
            assert piece.within(limit) == (n if n <= limit else None), (limit, n)
        assert piece.tokens == n
        fresh = focus.Piece(0, (), text, Tally(text, TokenCounter("cl100k_base")), 1.0)
        assert fresh.tokens == n  # asked for its count before any limit


def _chosen_by_exact_counts(pieces: list[focus.Piece], allowance: int) -> tuple[list[int], set[int]]:
    """``focus.choose`` (without a ``fits`` check) as it was written before counts were bounded,
    each unit's exact cost added while ``used + cost <= allowance``: the reference."""
    units = []
    for rank, ord_ in enumerate(focus.priority(pieces)):
        piece = next(p for p in pieces if p.ord == ord_)
        if piece.relevance > 0:
            units.append(((0, -piece.relevance, 0, piece.ord), piece, False))
            if piece.core is not None:
                units.append(((0, -piece.relevance * piece.rest_worth, 1, piece.ord), piece, True))
        else:
            units.append(((1, 0.0, rank, piece.ord), piece, False))
    units.sort(key=lambda u: u[0])
    shown: dict[int, bool] = {}
    used = 0
    for _, piece, rest in units:
        if rest:
            if piece.ord not in shown:
                continue
            cost = piece.tokens - piece.core_tokens
        else:
            core = piece.core is not None and piece.relevance > 0
            cost = (piece.core_tokens if core else piece.tokens) + focus.LINE_OVERHEAD
        if used + cost <= allowance:
            shown[piece.ord] = rest or piece.core is None or piece.relevance <= 0
            used += cost
    return sorted(shown), {o for o, whole in shown.items() if not whole}


def test_passages_chosen_by_bounded_counts_are_those_exact_counts_choose(corpus_notes):
    """``focus.choose`` over each real note's passages, some matched (with a core: the first half
    of its paragraphs), at every allowance up to the note's cost: the passages and cores the
    exact counts choose, whether each passage's count is known or asked as it goes."""
    rng = random.Random(23)
    counter = TokenCounter("cl100k_base")
    notes = [note for note in corpus_notes if len(note) >= 3]
    assert len(notes) >= 50
    compared = 0
    for note in notes[:60]:
        exact: list[focus.Piece] = []
        lazy: list[focus.Piece] = []
        for i, text in enumerate(note):
            relevance = rng.choice([0.0, 0.0, 0.3, 0.9])
            paras = text.split("\n\n")
            core = None
            if relevance and len(paras) >= 3:
                core = f"{focus.GAP}\n\n" + "\n\n".join(paras[: len(paras) // 2])
            core_tokens = counter.count(core) if core is not None else 0
            n = counter.count(text)
            if core is not None and core_tokens >= n:
                core, core_tokens = None, 0
            exact.append(focus.Piece(i, (), text, n, relevance, core, core_tokens, 0.5))
            lazy.append(focus.Piece(i, (), text, Tally(text, TokenCounter("cl100k_base")), relevance, core,
                                    core_tokens, 0.5))
        # Every allowance up to the whole note's cost (where an off-by-one would show), rising
        # then falling for the pieces asked again and again, as the fit asks; a fresh count now
        # and then.
        whole = sum(p.tokens + focus.LINE_OVERHEAD for p in exact) + 2
        allowances = list(range(0, min(whole, 700)))
        for k, allowance in enumerate(allowances + allowances[::-1]):
            want = _chosen_by_exact_counts(exact, allowance)
            assert focus.choose(exact, allowance) == want, allowance
            assert focus.choose(lazy, allowance) == want, allowance
            if k % 11 == 0:
                fresh = [focus.Piece(p.ord, (), p.text, Tally(p.text, TokenCounter("cl100k_base")),
                                     p.relevance, p.core, p.core_tokens, 0.5) for p in exact]
                assert focus.choose(fresh, allowance) == want, allowance
            compared += 1
    assert compared > 10_000
