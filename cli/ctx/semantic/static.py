"""A static embedding model: a text's vector is the mean of its word pieces' stored vectors.

The model (a folder in model2vec's layout: ``config.json`` with ``model_type: model2vec``,
``model.safetensors`` with one ``embeddings`` matrix, ``tokenizer.json``) is distilled from a
sentence transformer by running each word piece of its vocabulary through it once. Encoding is
then a tokenizer pass and a table lookup: thousands of texts per CPU-second, no torch, against
tens for the transformer itself — at the cost of word order and context, so its rankings are
coarser (``ctx embed``'s first stage; see ``ctx.semantic.embedding``).
"""

from __future__ import annotations

import json
import struct
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ctx.semantic.numpy_bert import UnsupportedModel, read_safetensors

if TYPE_CHECKING:
    import tokenizers

# A text longer than this many word pieces keeps its first ones (model2vec's default window).
MAX_PIECES = 512


def is_static_model(model_dir: Path) -> bool:
    try:
        config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "model2vec"


class StaticEncoder:
    """Batches of texts -> L2-normalised float32 vectors, from a static model folder."""

    def __init__(self, model_dir: Path) -> None:
        model_dir = Path(model_dir)
        if not is_static_model(model_dir):
            raise UnsupportedModel(f"{model_dir}: not a static (model2vec) model")
        tensors = read_safetensors(model_dir / "model.safetensors")
        if "embeddings" not in tensors:
            raise UnsupportedModel(f"{model_dir}: no embeddings tensor")
        self.table = np.ascontiguousarray(tensors["embeddings"], dtype=np.float32)
        self.dim = int(self.table.shape[1])
        self.max_length = MAX_PIECES
        self._tokenizer_file = model_dir / "tokenizer.json"
        self._tokenizer: tokenizers.Tokenizer | None = None
        self.precision = "static"
        self.threads = 1

    @property
    def tokenizer(self) -> "tokenizers.Tokenizer":
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self._tokenizer_file))
            tok.no_padding()
            tok.no_truncation()
            self._tokenizer = tok
        return self._tokenizer

    # No ``token_lengths``: batches of one length save a transformer its padding, but a lookup
    # has none, and measuring would tokenize every text twice (half of a static embed's time).

    def _ids(self, texts: list[str]) -> list[list[int]]:
        unknown = self.tokenizer.token_to_id("[UNK]")
        out = []
        for enc in self.tokenizer.encode_batch(list(texts), add_special_tokens=False):
            ids = [i for i in enc.ids[: self.max_length] if i != unknown]
            out.append(ids)
        return out

    def encode(self, texts: list[str], batch_size: int = 0) -> np.ndarray:  # noqa: ARG002 - one pass
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, ids in enumerate(self._ids(texts)):
            if ids:
                out[row] = self.table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


@lru_cache(maxsize=2)
def load(model_dir: str) -> StaticEncoder:
    return StaticEncoder(Path(model_dir))


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """Float32 tensors in the .safetensors layout ``numpy_bert.read_safetensors`` reads: an 8-byte
    little-endian header length, a JSON header (name -> dtype, shape, byte offsets), the data."""
    header: dict[str, object] = {}
    blobs = []
    offset = 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(encoded)))
        handle.write(encoded)
        for blob in blobs:
            handle.write(blob)
