"""Turning text into vectors: sentence-transformers for the graph, numpy BERT for a query.

Documents are embedded by ``ctx embed`` through sentence-transformers (the optional ``embed``
extra), which handles any model it knows. A query at build time goes through
:mod:`ctx.semantic.numpy_bert` when the model is a plain BERT folder on disk (the default is), and
falls back to sentence-transformers otherwise, paying its import only then.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ctx.errors import CtxError
from ctx.semantic.models import ModelRef

INSTALL_HINT = "pip install 'ctx-graph[embed]'"


class EmbedExtraMissing(CtxError):
    """sentence-transformers (and torch) are not installed."""

    def __init__(self) -> None:
        super().__init__(f"embedding needs the optional extra; install it with: {INSTALL_HINT}")


class ModelUnavailable(CtxError):
    """The model cannot be found locally (nothing is ever downloaded)."""


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
    try:
        return SentenceTransformer(target, device="cpu")
    except Exception as exc:  # OSError, ValueError, hub errors: all mean "not here"
        raise ModelUnavailable(
            f"embedding model {model.name!r} is not available offline ({exc.__class__.__name__});"
            " pass --model with a local sentence-transformers folder"
        ) from None


class DocumentEncoder:
    """Batches of node texts -> normalised float32 vectors, with sentence-transformers."""

    def __init__(self, model: ModelRef) -> None:
        self.model_ref = model
        self._model = load_sentence_transformer(model)
        # Renamed in sentence-transformers 5; the old name warns there.
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        self.max_length = int(getattr(self._model, "max_seq_length", 0) or 0)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        vectors = self._model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)


def query_encoder(model: ModelRef) -> tuple[Callable[[str], np.ndarray], str]:
    """A function embedding one query with ``model``, and the name of the method it uses.

    The numpy encoder when it can run the model (no torch import); sentence-transformers otherwise.
    """
    if model.path is not None:
        from ctx.semantic import numpy_bert

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
