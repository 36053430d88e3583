"""The first stage of ``ctx embed``: static vectors for every passage in seconds, so a graph
answers paraphrases long before the transformer has embedded it all.

The static model is distilled from the graph's own model (``ctx.semantic.distil``) by ctx itself
on first need, offline, and kept per machine in ctx's cache folder, keyed by the model's files.
Its passage vectors are stored under the name ``<model>@static1`` beside the model's own vectors.
While the model's own passage vectors are incomplete, the graph setting ``embedding_first_stage``
names the static vectors and builds rank a question's *candidates* only (``ctx.semantic.two_stage``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from ctx.semantic.models import ModelRef

# The graph setting: the first stage's model name while the active model's passage vectors are
# incomplete ("" or absent once ``ctx embed`` has embedded every passage with the model itself).
SETTING = "embedding_first_stage"
SUFFIX = "@static1"
# Where distilled models are kept (default: ctx's cache folder, ``models/``).
CACHE_ENV = "CTX_MODEL_CACHE"  # the distillation's version: a new method gets a new name, never mixes


def name_for(model_name: str) -> str:
    """The first stage's name in the graph for the active model ``model_name``."""
    return f"{model_name}{SUFFIX}"


def supported(model: ModelRef) -> bool:
    """A first stage needs a transformer folder on disk to distil from (a static model given as
    ``--model`` is its own fast stage)."""
    if model.path is None or not (model.path / "tokenizer.json").is_file():
        return False
    from ctx.semantic.static import is_static_model

    return not is_static_model(model.path)


def folder_for(model: ModelRef) -> Path:
    """Where this machine keeps the static model distilled from ``model``: named by the model
    (without its window: three-piece inputs never reach it) and a digest of its weights file's
    size and first and last megabyte -- the same model installed in several environments is
    distilled once, a changed one again."""
    from ctx.paths import cache_dir

    assert model.path is not None
    root = Path(os.environ[CACHE_ENV]).expanduser() if os.environ.get(CACHE_ENV) else cache_dir() / "models"
    weights = next((model.path / f for f in ("model.safetensors", "pytorch_model.bin") if (model.path / f).exists()), None)
    digest = hashlib.blake2b(SUFFIX.encode("utf-8"), digest_size=8)
    if weights is not None:
        size = weights.stat().st_size
        with open(weights, "rb") as handle:
            digest.update(str(size).encode("ascii") + handle.read(1 << 20))
            handle.seek(max(0, size - (1 << 20)))
            digest.update(handle.read(1 << 20))
    else:
        digest.update(str(model.path.resolve()).encode("utf-8"))
    name = model.name.split("#")[0] if model.window else model.name
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "model"
    return root / f"{base}{SUFFIX.replace('@', '-')}-{digest.hexdigest()}"


def ready(model: ModelRef) -> Path | None:
    """The distilled folder, when this machine has it."""
    folder = folder_for(model)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    from ctx.semantic.distil import METHOD

    return folder if config.get("method") == METHOD and (folder / "model.safetensors").is_file() else None


def ensure(model: ModelRef, progress: Callable[[int, int], None] | None = None) -> Path:
    """The distilled folder, distilled now if this machine does not have it (needs torch: the
    ``embed`` extra; ~20 s of CPU once)."""
    found = ready(model)
    if found is not None:
        return found
    from ctx.semantic.distil import distil

    return distil(model, folder_for(model), progress)
