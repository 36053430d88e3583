"""The numpy encoder's BERT forward pass (``ctx.semantic.numpy_bert``) run by torch, for a build
that must embed a question's candidates (``ctx.semantic.two_stage``).

Only ``torch`` is imported -- not sentence-transformers and transformers, which cost about three
times as much to import (measured on this project's 2-core machine: ``import torch`` 2.6 s of CPU,
``import sentence_transformers`` 9.2 s, at a load average of 7-8) -- and it multiplies in
bfloat16 where the CPU does so natively, as ``ctx embed`` does (``ctx.semantic.encoder``). The
weights, tokenizer and pooling are the numpy encoder's, read from the same files.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ctx.semantic import numpy_bert


class TorchBertEncoder:
    """Batches of texts -> L2-normalised float32 vectors, as the model's sentence-transformers
    folder would give them (the tests hold them to a cosine above 0.99)."""

    def __init__(self, model_dir: Path, precision: str | None = None, threads: int | None = None) -> None:
        import torch

        from ctx.semantic.encoder import embed_precision, embed_threads

        self.base = numpy_bert.load(str(model_dir))
        self.threads = threads or embed_threads()
        torch.set_num_threads(self.threads)
        self.precision = precision or embed_precision()
        self.dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32
        base = self.base

        def tensor(array: np.ndarray) -> Any:
            return torch.from_numpy(np.array(array, dtype=np.float32)).to(self.dtype)

        self.word = tensor(base.word)
        self.position = tensor(base.position)
        self.token_type = tensor(base.token_type)
        self.embed_norm_w, self.embed_norm_b = (tensor(a) for a in base.embed_norm)
        # numpy_bert keeps linear weights as (in, out) views; torch's linear takes (out, in).
        self.layers = [
            tuple(tensor(a.T) if a.ndim == 2 else tensor(a) for a in (
                layer.query_w, layer.query_b, layer.key_w, layer.key_b, layer.value_w, layer.value_b,
                layer.attn_out_w, layer.attn_out_b, layer.attn_norm_w, layer.attn_norm_b,
                layer.ffn_in_w, layer.ffn_in_b, layer.ffn_out_w, layer.ffn_out_b, layer.out_norm_w, layer.out_norm_b,
            ))
            for layer in base.layers
        ]
        self.dim = base.dim

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for chunk, ids, types, mask in self.base.padded_batches(texts, batch_size):
                out[chunk] = self._forward(torch.from_numpy(ids), torch.from_numpy(types), torch.from_numpy(mask > 0))
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def _forward(self, ids: Any, types: Any, mask: Any) -> np.ndarray:
        import torch

        x = self.hidden_states(ids, types, mask)
        weights = mask[:, :, None].to(torch.float32)
        if self.base.pooling == "cls":
            pooled = x[:, 0, :].float()
        else:
            pooled = (x.float() * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        return pooled.numpy()

    def hidden_states(self, ids: Any, types: Any, mask: Any) -> Any:
        """The last layer's output for every token, (batch, length, dim) in the encoder's
        precision; ``mask`` is boolean. Pooling is the caller's (``ctx.semantic.distil`` averages
        three tokens whatever the model's own pooling)."""
        import torch.nn.functional as F  # noqa: N812 - torch's own name

        batch, length = ids.shape
        dim, heads, eps = self.dim, self.base.heads, self.base.eps
        head_dim = dim // heads
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type[types]
        x = F.layer_norm(x, (dim,), self.embed_norm_w, self.embed_norm_b, eps)
        attend = mask[:, None, None, :]

        def split(t: Any) -> Any:
            return t.view(batch, length, heads, head_dim).transpose(1, 2)

        for qw, qb, kw, kb, vw, vb, ow, ob, anw, anb, iw, ib, fw, fb, onw, onb in self.layers:
            context = F.scaled_dot_product_attention(
                split(F.linear(x, qw, qb)), split(F.linear(x, kw, kb)), split(F.linear(x, vw, vb)), attn_mask=attend,
            )
            context = context.transpose(1, 2).reshape(batch, length, dim)
            x = F.layer_norm(F.linear(context, ow, ob) + x, (dim,), anw, anb, eps)
            x = F.layer_norm(F.linear(F.gelu(F.linear(x, iw, ib)), fw, fb) + x, (dim,), onw, onb, eps)
        return x


@lru_cache(maxsize=2)
def load(model_dir: str) -> TorchBertEncoder:
    return TorchBertEncoder(Path(model_dir))
