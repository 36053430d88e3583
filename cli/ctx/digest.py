"""The digests a build computes (BLAKE2b, SHA-256), without loading OpenSSL.

Importing ``hashlib`` first loads ``_hashlib`` and OpenSSL's constructors: ~3 ms of every cold
`ctx build`, which digests a few short texts and nothing else. ``hashlib.blake2b`` is CPython's own
``_blake2.blake2b`` in any case (hashlib never hands BLAKE2 to OpenSSL), and SHA-256 is the same
function whoever computes it. Each comes from CPython's built-in module where it has one (its name
changed in 3.12), else from hashlib.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def _builtin(modules: tuple[str, ...], name: str) -> Any:
    """``name`` from the first of CPython's built-in hash modules that loads, else hashlib's."""
    for module in modules:
        try:
            return getattr(__import__(module), name)
        except (ImportError, AttributeError):
            continue
    import hashlib  # pragma: no cover - an interpreter without them: OpenSSL's

    return getattr(hashlib, name)  # pragma: no cover


blake2b: Any = _builtin(("_blake2",), "blake2b")
sha256: Any = _builtin(("_sha256", "_sha2"), "sha256")  # CPython 3.11; 3.12 and later



def text_digest(text: str) -> str:
    """``text``'s 16-byte BLAKE2b digest in hex: the key of a passage's vector and of a
    paragraph's (the two must agree, so one function makes both)."""
    return str(blake2b(text.encode("utf-8"), digest_size=16).hexdigest())


__all__ = ["blake2b", "sha256", "text_digest"]


# The meta key under which a PostgreSQL writer keeps ``file_states_digest`` of a source (this
# prefix, then the source's id): ``ctx.freshness`` reads it for roles that row security keeps from
# the file records of private notes.
FILES_DIGEST_KEY = "files_digest:"


def file_states_digest(states: Iterable[tuple[str, int, int]]) -> str:
    """One digest of a source's files as (path, mtime_ns, size), whatever their order."""
    digest = sha256()
    for rel, mtime_ns, size in sorted(states):
        digest.update(f"{rel}\0{mtime_ns}\0{size}\n".encode("utf-8", "surrogateescape"))
    return str(digest.hexdigest())
