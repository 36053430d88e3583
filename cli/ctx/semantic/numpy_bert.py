"""A BERT sentence encoder in plain numpy, so that embedding a query never imports torch.

It reads the very files sentence-transformers reads (``model.safetensors``, ``tokenizer.json``,
``config.json``, the pooling config) and runs the same forward pass: embeddings -> N encoder layers
(self-attention, GELU feed-forward, post-layer-norm) -> mean or CLS pooling -> optional L2
normalisation. Weights are memory-mapped, so start-up costs a header parse, and only the vocabulary
rows a query uses are ever read from disk. Tests check it against sentence-transformers
(cosine > 0.999).

Importing sentence-transformers costs 4-6 s on a small machine; this costs about 0.1 s for a short
query, which is what keeps a free-text ``ctx build`` under a second cold.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterator

    import tokenizers

_SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


class UnsupportedModel(Exception):
    """The model folder is not a plain BERT encoder this module can run."""


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor in a .safetensors file as a read-only, memory-mapped numpy array.

    The format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape,
    byte offsets into the data that follows), then the raw little-endian data.
    """
    with open(path, "rb") as handle:
        head = handle.read(8)
        (header_len,) = struct.unpack("<Q", head) if len(head) == 8 else (-1,)
        # A damaged file's first bytes can say a header of exabytes: reading that many ends in
        # MemoryError (an "internal error") instead of saying the weights are not readable.
        if not 0 < header_len <= os.fstat(handle.fileno()).st_size - 8:
            raise UnsupportedModel(f"{path}: not a safetensors file")
        header = json.loads(handle.read(header_len))
    if not isinstance(header, dict):
        raise UnsupportedModel(f"{path}: not a safetensors file")
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise UnsupportedModel(f"tensor {name} has dtype {info['dtype']}")
        start, end = info["data_offsets"]
        array = data[start:end].view(dtype).reshape(info["shape"])
        tensors[name] = array if dtype in (np.float32, np.int64) else array.astype(np.float32)
    return tensors


def _strip_prefix(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Checkpoints name the same weights ``embeddings...``, ``bert.embeddings...`` and so on."""
    anchor = "embeddings.word_embeddings.weight"
    for name in tensors:
        if name.endswith(anchor):
            prefix = name[: -len(anchor)]
            return {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
    raise UnsupportedModel("no embeddings.word_embeddings.weight tensor")


def _erf(x: np.ndarray) -> np.ndarray:
    """Error function (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7): exact GELU without scipy."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + eps) * weight + bias


@dataclass(frozen=True)
class _Layer:
    query_w: np.ndarray
    query_b: np.ndarray
    key_w: np.ndarray
    key_b: np.ndarray
    value_w: np.ndarray
    value_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_norm_w: np.ndarray
    attn_norm_b: np.ndarray
    ffn_in_w: np.ndarray
    ffn_in_b: np.ndarray
    ffn_out_w: np.ndarray
    ffn_out_b: np.ndarray
    out_norm_w: np.ndarray
    out_norm_b: np.ndarray


class NumpyBertEncoder:
    """Sentence embeddings from a sentence-transformers BERT folder, computed with numpy only."""

    def __init__(self, model_dir: Path) -> None:
        model_dir = Path(model_dir)
        config = _read_json(model_dir / "config.json")
        if config.get("model_type") not in ("bert", None) or config.get("hidden_act", "gelu") != "gelu":
            raise UnsupportedModel(f"{model_dir}: not a GELU BERT encoder")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise UnsupportedModel(f"{model_dir}: relative position embeddings")
        weights_file = model_dir / "model.safetensors"
        tokenizer_file = model_dir / "tokenizer.json"
        if not weights_file.is_file() or not tokenizer_file.is_file():
            raise UnsupportedModel(f"{model_dir}: needs model.safetensors and tokenizer.json")
        self.pooling, self.normalize = _pooling_of(model_dir)
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        st_config = _read_json(model_dir / "sentence_bert_config.json")
        self.max_length = int(
            st_config.get("max_seq_length") or config.get("max_position_embeddings", 512)
        )
        self.max_length = min(self.max_length, int(config.get("max_position_embeddings", 512)))
        self._tokenizer_file = tokenizer_file
        self._tokenizer: tokenizers.Tokenizer | None = None
        w = _strip_prefix(read_safetensors(weights_file))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"]
        self.embed_norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.dim = int(self.word.shape[1])
        self.layers: list[_Layer] = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            # Linear weights are stored (out, in); the transposed views cost nothing and BLAS
            # reads them in place.
            self.layers.append(
                _Layer(
                    w[p + "attention.self.query.weight"].T, w[p + "attention.self.query.bias"],
                    w[p + "attention.self.key.weight"].T, w[p + "attention.self.key.bias"],
                    w[p + "attention.self.value.weight"].T, w[p + "attention.self.value.bias"],
                    w[p + "attention.output.dense.weight"].T, w[p + "attention.output.dense.bias"],
                    w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"],
                    w[p + "intermediate.dense.weight"].T, w[p + "intermediate.dense.bias"],
                    w[p + "output.dense.weight"].T, w[p + "output.dense.bias"],
                    w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                )
            )

    @property
    def tokenizer(self) -> "tokenizers.Tokenizer":
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(self._tokenizer_file))
            # The file may carry its own padding/truncation from training; use the model's window.
            tok.no_padding()
            tok.enable_truncation(max_length=self.max_length)
            self._tokenizer = tok
        return self._tokenizer

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """(len(texts), dim) float32 sentence embeddings, in input order."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for chunk, ids, types, mask in self.padded_batches(texts, batch_size):
            out[chunk] = self._forward(ids, types, mask)
        return out

    def padded_batches(
        self, texts: list[str], batch_size: int
    ) -> Iterator[tuple[list[int], np.ndarray, np.ndarray, np.ndarray]]:
        """The texts tokenized and padded batch by batch: (their positions in ``texts``, token ids,
        token types, attention mask as 1.0/0.0). Batches of similar lengths waste less work on
        padding; ``ctx.semantic.torch_bert`` runs the same batches."""
        if not texts:
            return
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            length = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            types = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                types[row, :n] = enc.type_ids
                mask[row, :n] = 1.0
            yield chunk, ids, types, mask

    def _forward(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, length = ids.shape
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type[types]
        x = _layer_norm(x.astype(np.float32), *self.embed_norm, self.eps)
        head_dim = self.dim // self.heads
        scale = np.float32(1.0 / math.sqrt(head_dim))
        # Padding positions get a large negative bias so softmax gives them zero weight.
        attn_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, self.heads, head_dim).transpose(0, 2, 1, 3)

        for layer in self.layers:
            q = split(x @ layer.query_w + layer.query_b)
            k = split(x @ layer.key_w + layer.key_b)
            v = split(x @ layer.value_w + layer.value_b)
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + attn_bias
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.dim)
            x = _layer_norm(
                context @ layer.attn_out_w + layer.attn_out_b + x,
                layer.attn_norm_w, layer.attn_norm_b, self.eps,
            )
            hidden = _gelu(x @ layer.ffn_in_w + layer.ffn_in_b)
            x = _layer_norm(
                hidden @ layer.ffn_out_w + layer.ffn_out_b + x,
                layer.out_norm_w, layer.out_norm_b, self.eps,
            )
        if self.pooling == "cls":
            pooled = x[:, 0, :]
        else:
            weights = mask[:, :, None]
            pooled = (x * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self.normalize:
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def _pooling_of(model_dir: Path) -> tuple[str, bool]:
    """(pooling mode, normalise?) from the sentence-transformers module list; mean + no norm if absent."""
    modules: Any = _read_json(model_dir / "modules.json") if (model_dir / "modules.json").exists() else []
    normalize = any(str(m.get("type", "")).endswith("Normalize") for m in modules)
    pooling = "mean"
    for module in modules:
        if str(module.get("type", "")).endswith("Pooling"):
            cfg = _read_json(model_dir / module.get("path", "") / "config.json")
            if cfg.get("pooling_mode_cls_token"):
                pooling = "cls"
            elif not cfg.get("pooling_mode_mean_tokens", True):
                raise UnsupportedModel(f"{model_dir}: pooling mode not supported")
        elif str(module.get("type", "")).split(".")[-1] not in ("Transformer", "Pooling", "Normalize"):
            raise UnsupportedModel(f"{model_dir}: module {module.get('type')} not supported")
    return pooling, normalize


@lru_cache(maxsize=2)
def load(model_dir: str) -> NumpyBertEncoder:
    """One encoder per model folder per process (the MCP server embeds many queries)."""
    return NumpyBertEncoder(Path(model_dir))
