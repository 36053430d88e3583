"""A static model distilled from a sentence transformer, offline, once per machine: the first
stage of ``ctx embed`` (see ``ctx.semantic.first_stage``).

The method is model2vec's (Tulkens & van Dongen, MIT licence; re-implemented here, no code
copied): every word piece of the model's vocabulary goes through the transformer on its own, as
``[CLS] piece [SEP]``, and the mean of the three output vectors becomes that piece's vector; PCA
then keeps the main directions and each row is weighted down by how common its piece is (SIF, with
frequency estimated from the vocabulary's rank order by Zipf's law). A text's static vector is the
mean of its pieces' rows (``ctx.semantic.static``).

Nothing is downloaded: the result is a function of the transformer's files. One pass over ~30k
one-piece inputs costs ~20 s of CPU in bfloat16 on this project's 2-core machine.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ctx.semantic.models import ModelRef
from ctx.semantic.static import write_safetensors

DIMS = 256
SIF = 1e-4
BATCH = 1024
# Written into the folder's config: a folder distilled by another method is not reused.
METHOD = "mean of [CLS] piece [SEP] outputs; PCA; SIF by Zipf rank"
_SKIP = re.compile(r"\[unused\d+\]")


def distil(model: ModelRef, target: Path, progress: Callable[[int, int], None] | None = None) -> Path:
    """Write the static model distilled from ``model`` to the folder ``target``: into a temporary
    folder beside it first, renamed into place when complete, so an interrupted run or a second
    process distilling at the same time never leaves a half-written model behind."""
    if model.path is None:
        raise ValueError(f"{model.name}: no local model folder to distil from")
    table = _post_process(_piece_vectors(model, progress))
    target.parent.mkdir(parents=True, exist_ok=True)
    work = target.parent / f".{target.name}.{os.getpid()}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    write_safetensors(work / "model.safetensors", {"embeddings": table})
    shutil.copyfile(model.path / "tokenizer.json", work / "tokenizer.json")
    (work / "config.json").write_text(json.dumps({
        "model_type": "model2vec",
        "distilled_from": model.name,
        "method": METHOD,
        "hidden_dim": int(table.shape[1]),
        "apply_pca": DIMS,
        "sif_coefficient": SIF,
        "normalize": True,
    }, indent=1))
    try:
        work.rename(target)
    except OSError:  # another process finished first: its model is the same function of the files
        shutil.rmtree(work, ignore_errors=True)
    return target


class _Pieces(NamedTuple):
    """How one encoder turns a batch of ``[CLS] piece [SEP]`` rows into their mean output vectors."""

    vocab: dict[str, int]
    special: set[int | None]
    cls: int
    sep: int
    forward: Callable[[Any], np.ndarray]
    dim: int


def _piece_vectors(model: ModelRef, progress: Callable[[int, int], None] | None) -> tuple[np.ndarray, np.ndarray]:
    """(ids kept, their mean output vectors), one forward pass per batch of pieces."""
    import torch

    pieces = _torch_pieces(model) or _sentence_transformer_pieces(model)
    ids = sorted(i for tok, i in pieces.vocab.items() if not _SKIP.fullmatch(tok) and i not in pieces.special)
    out = np.zeros((len(ids), pieces.dim), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            out[start : start + len(part)] = pieces.forward(
                torch.tensor([[pieces.cls, i, pieces.sep] for i in part], dtype=torch.long),
            )
            if progress:
                progress(start + len(part), len(ids))
    full = np.zeros((len(pieces.vocab), pieces.dim), dtype=np.float32)
    full[ids] = out
    return np.asarray(ids), full


def _torch_pieces(model: ModelRef) -> _Pieces | None:
    """Through ``ctx.semantic.torch_bert`` (torch alone imported) when the model is a plain BERT
    folder, else None: importing sentence-transformers costs about half as much CPU again as the
    pass over the whole vocabulary (bench/static_model.py prints the total)."""
    import torch

    from ctx.semantic import numpy_bert, torch_bert

    try:
        encoder = torch_bert.load(str(model.path))
    except (numpy_bert.UnsupportedModel, OSError, KeyError, ValueError):
        return None
    tokenizer = encoder.base.tokenizer
    cls, sep, pad = (tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[PAD]"))
    if cls is None or sep is None:
        return None

    def forward(batch: Any) -> np.ndarray:
        hidden = encoder.hidden_states(batch, torch.zeros_like(batch), torch.ones_like(batch, dtype=torch.bool))
        return hidden.float().mean(dim=1).numpy()

    return _Pieces(tokenizer.get_vocab(), {cls, sep, pad}, cls, sep, forward, encoder.dim)


def _sentence_transformer_pieces(model: ModelRef) -> _Pieces:
    import torch

    from ctx.semantic.encoder import DocumentEncoder

    encoder = DocumentEncoder(model)
    transformer = encoder._model[0].auto_model
    tokenizer = encoder._model.tokenizer

    def forward(batch: Any) -> np.ndarray:
        hidden = transformer(
            input_ids=batch, attention_mask=torch.ones_like(batch), token_type_ids=torch.zeros_like(batch),
        ).last_hidden_state
        return hidden.float().mean(dim=1).numpy()

    special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    return _Pieces(tokenizer.get_vocab(), special, tokenizer.cls_token_id, tokenizer.sep_token_id, forward, int(encoder.dim))


def _post_process(found: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """PCA fitted on the kept pieces, then SIF weights by rank; skipped pieces stay zero."""
    ids, full = found
    kept = full[ids].astype(np.float64)
    centred = kept - kept.mean(axis=0)
    cov = centred.T @ centred / max(len(kept) - 1, 1)
    values, vectors = np.linalg.eigh(cov)
    components = vectors[:, ::-1][:, :DIMS]
    projected = centred @ components
    # A component's sign is arbitrary: fix it so the largest |value| is positive (reproducible).
    signs = np.sign(projected[np.abs(projected).argmax(axis=0), np.arange(projected.shape[1])])
    projected *= np.where(signs == 0, 1.0, signs)
    inv_rank = 1.0 / np.arange(2, len(ids) + 2)
    prob = inv_rank / inv_rank.sum()
    projected *= (SIF / (SIF + prob))[:, None]
    table = np.zeros((full.shape[0], projected.shape[1]), dtype=np.float32)
    table[ids] = projected.astype(np.float32)
    return table
