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


def _piece_vectors(model: ModelRef, progress: Callable[[int, int], None] | None) -> tuple[np.ndarray, np.ndarray]:
    """(ids kept, their mean output vectors), one forward pass per batch of pieces."""
    import torch

    from ctx.semantic.encoder import DocumentEncoder

    encoder = DocumentEncoder(model)
    st_model = encoder._model
    transformer = st_model[0].auto_model
    tokenizer = st_model.tokenizer
    vocab = tokenizer.get_vocab()
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    ids = sorted(i for tok, i in vocab.items() if not _SKIP.fullmatch(tok) and i not in special)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    out = np.zeros((len(ids), int(encoder.dim)), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            batch = torch.tensor([[cls, i, sep] for i in part], dtype=torch.long)
            hidden = transformer(
                input_ids=batch,
                attention_mask=torch.ones_like(batch),
                token_type_ids=torch.zeros_like(batch),
            ).last_hidden_state
            out[start : start + len(part)] = hidden.float().mean(dim=1).numpy()
            if progress:
                progress(start + len(part), len(ids))
    full = np.zeros((len(vocab), out.shape[1]), dtype=np.float32)
    full[ids] = out
    return np.asarray(ids), full


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
