"""A deterministic stand-in for a sentence model, for tests of which nodes get vectors."""

from __future__ import annotations

import numpy as np

from ctx.semantic.models import ModelRef

FAKE_MODEL = ModelRef("fake-hash-model", None)


class HashEncoder:
    """A deterministic stand-in for a sentence model: a text's vector depends on its words only.

    It lets these tests check which nodes get vectors without loading torch; the real model's
    behaviour is tested in test_semantic_embed.py.
    """

    calls: list[str] = []

    def __init__(self, model: ModelRef) -> None:
        self.dim = 16

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        HashEncoder.calls.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, sum(map(ord, word)) % self.dim] += 1.0
            out[row, 0] += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)
