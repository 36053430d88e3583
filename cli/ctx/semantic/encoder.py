"""Turning text into vectors: sentence-transformers for the graph, numpy BERT for a query.

Documents are embedded by ``ctx embed`` through sentence-transformers (the optional ``embed``
extra), which handles any model it knows. A query at build time goes through
:mod:`ctx.semantic.numpy_bert` when the model is a plain BERT folder on disk (the default is), and
falls back to sentence-transformers otherwise, paying its import only then.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ctx.errors import CtxError
from ctx.semantic.models import ModelRef, ModelUnavailable

INSTALL_HINT = "pip install 'ctx-graph[embed]'"


class EmbedExtraMissing(CtxError):
    """sentence-transformers (and torch) are not installed."""

    def __init__(self) -> None:
        super().__init__(f"embedding needs the optional extra; install it with: {INSTALL_HINT}")


def _no_hub() -> None:
    # A model that is not on disk must fail fast, not hang on a network that is not there; and
    # the libraries' own progress bars and notices would clutter our stderr.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@lru_cache(maxsize=2)
def load_sentence_transformer(model: ModelRef) -> Any:
    """The sentence-transformers model for ``model``; raises EmbedExtraMissing without the extra.

    Kept per process: loading costs seconds, and a long-lived process (MCP server, tests) reuses it.
    """
    _no_hub()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbedExtraMissing() from None
    target = str(model.path) if model.path is not None else model.name
    # Its own notices too: a path that is no folder ("/models/bge-smal") logged "Could not resolve
    # the revision of ..." on stderr before our one-line error.
    library_log = logging.getLogger("sentence_transformers")
    level = library_log.level
    library_log.setLevel(logging.ERROR)
    try:
        return SentenceTransformer(target, device="cpu")
    except Exception as exc:  # OSError, ValueError, hub errors: all mean "not here"
        raise ModelUnavailable(
            f"embedding model {model.name!r} is not available offline ({exc.__class__.__name__});"
            " pass --model with a local sentence-transformers folder"
        ) from None
    finally:
        library_log.setLevel(level)


@lru_cache(maxsize=2)
def _bf16_copy(model: ModelRef) -> Any:
    # A copy, so a query encoded through the fallback in query_encoder stays in float32.
    import copy

    import torch

    return copy.deepcopy(load_sentence_transformer(model)).to(torch.bfloat16)


class DocumentEncoder:
    """Batches of node texts -> normalised float32 vectors, with sentence-transformers.

    The model runs in bfloat16 where the CPU multiplies bfloat16 matrices natively (AMX or
    AVX-512 BF16): about four times the float32 throughput (the dwarves vault: 403 -> 94 CPU
    seconds), with vectors at a cosine above 0.9998 to the float32 ones (tests hold it to 0.99 and
    to the same nearest passages up to near-ties). Pooling and normalisation are redone in float32. Elsewhere, and with ``CTX_EMBED_PRECISION=fp32``, it runs in
    float32 as before.
    """

    def __init__(self, model: ModelRef, precision: str | None = None, threads: int | None = None) -> None:
        self.model_ref = model
        self._model = load_sentence_transformer(model)  # first: it says when the extra is missing
        import torch

        self.threads = threads or embed_threads()
        torch.set_num_threads(self.threads)
        self.precision = precision or embed_precision()
        if self.precision not in PRECISIONS:
            raise CtxError(f"{PRECISION_ENV} must be one of {', '.join(PRECISIONS)}, not {self.precision!r}")
        if self.precision == "bf16":
            self._model = _bf16_copy(model)
        # Renamed in sentence-transformers 5; the old name warns there.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.max_length = int(getattr(self._model, "max_seq_length", 0) or 0)
        if model.window and model.window < (self.max_length or model.window + 1):
            self._model.max_seq_length = self.max_length = model.window

    def token_lengths(self, texts: list[str]) -> list[int]:
        """How many word pieces the model will see of each text (its window caps it), so batches
        can hold texts of one length: padding is work thrown away."""
        if not texts:  # the tokenizer fails on an empty batch
            return []
        tokenizer = self._model.tokenizer
        ids = tokenizer(
            texts,
            truncation=bool(self.max_length),
            max_length=self.max_length or None,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
        return [len(row) for row in ids]

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        vectors = self._model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=False,
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        out = vectors.float().numpy()
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def document_encoder(model: ModelRef) -> object:
    """The encoder ``ctx embed`` uses for ``model``: a static model's table lookup (no torch), else
    sentence-transformers."""
    if model.path is not None:
        from ctx.semantic import static

        if static.is_static_model(model.path):
            return static.load(str(model.path))
    return DocumentEncoder(model)


PRECISION_ENV = "CTX_EMBED_PRECISION"
THREADS_ENV = "CTX_EMBED_THREADS"
PRECISIONS = ("bf16", "fp32")


def embed_precision() -> str:
    """``$CTX_EMBED_PRECISION``, else bf16 where the CPU has bfloat16 matrix units, else fp32."""
    chosen = os.environ.get(PRECISION_ENV, "").strip().lower()
    if chosen:
        return chosen
    import torch

    cpu = getattr(torch, "cpu", None)
    native = any(
        bool(getattr(cpu, probe, lambda: False)())
        for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    )
    return "bf16" if native else "fp32"


def embed_threads() -> int:
    """``$CTX_EMBED_THREADS``, else one thread per core that is idle now (at least one).

    The math library's threads wait for each other at every operation; on a busy machine a thread
    that is descheduled stalls the others, so more threads than idle cores costs CPU time and wall
    time alike (measured on a 2-core machine under a load average of 5, bf16, 274 passages, two
    rounds: one thread 38-51 passages/s wall and 75-77 per CPU-second, two threads 16-17 and 29).
    """
    chosen = os.environ.get(THREADS_ENV, "").strip()
    if chosen:
        try:
            return max(1, int(chosen))
        except ValueError:
            raise CtxError(f"{THREADS_ENV} must be a whole number, not {chosen!r}") from None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(cores, cores - int(busy)))


def query_encoder(model: ModelRef) -> tuple[Callable[[str], np.ndarray], str]:
    """A function embedding one query with ``model``, and the name of the method it uses.

    The numpy encoder when it can run the model (no torch import); sentence-transformers otherwise.
    """
    if model.path is not None:
        from ctx.semantic import numpy_bert, static

        if static.is_static_model(model.path):
            table = static.load(str(model.path))
            return (lambda text: table.encode([text])[0]), "static"

        try:
            encoder = numpy_bert.load(str(model.path))
            encoder.tokenizer  # noqa: B018 - fail here, not mid-build, if tokenizers is missing
        except (numpy_bert.UnsupportedModel, ImportError, OSError, KeyError, ValueError):
            pass
        else:
            return (lambda text: encoder.encode([text])[0]), "numpy"
    st_model = load_sentence_transformer(model)

    def encode(text: str) -> np.ndarray:
        vector = st_model.encode([text], normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vector[0], dtype=np.float32)

    return encode, "sentence-transformers"
