"""Load a tiktoken encoding fast on a cold start.

Building cl100k_base the usual way parses a 1.6 MB base64 file and checks its hash on every
process start (0.2 s here: most of a cold `ctx build`). The first load stores the parsed encoding
as a pickle in the user cache folder; later processes unpickle it and build the same encoder from
the same ranks, so token counts are identical. Any problem with the cache falls back to the normal
path, and the cache is keyed by the tiktoken versions so an upgrade never reads stale ranks.
"""

from __future__ import annotations

import os
import pickle
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken


def cache_dir() -> Path:
    if os.environ.get("CTX_CACHE_DIR"):
        return Path(os.environ["CTX_CACHE_DIR"]).expanduser()
    if os.environ.get("CTX_HOME"):
        return Path(os.environ["CTX_HOME"]).expanduser() / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ctx"


def _versions() -> str:
    """tiktoken's version and the bundled offline data's mtime (importlib.metadata costs 0.1 s)."""
    import tiktoken

    data = Path(tiktoken.__file__).resolve().parent.parent / "tiktoken_ext" / "data"
    try:
        stamp = data.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return f"tiktoken-{getattr(tiktoken, '__version__', 'unknown')}.{stamp}"


def _cache_file(name: str) -> Path:
    return cache_dir() / "tiktoken" / f"{name}.{_versions()}.pickle"


@lru_cache(maxsize=4)
def load_encoding(name: str) -> "tiktoken.Encoding":
    from tiktoken.core import Encoding

    path = _cache_file(name)
    try:
        with path.open("rb") as handle:
            enc_name, pat_str, ranks, special = pickle.load(handle)  # noqa: S301 - our own file
        return Encoding(name=enc_name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special)
    except Exception:  # noqa: BLE001 - a missing or unreadable cache only costs speed
        pass
    from ctx.tokens import get_encoding

    enc = get_encoding(name)
    try:
        state = (enc.name, enc._pat_str, enc._mergeable_ranks, enc._special_tokens)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old state or the whole file
    except Exception:  # noqa: BLE001 - read-only home, odd tiktoken internals: just stay slow
        pass
    return enc
