"""``ctx.digest`` gives hashlib's digests (graphs store them: content hashes, passage hashes, the
manifest's), taken from CPython's own modules so that a build does not load OpenSSL."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ctx.digest import blake2b, sha256

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _texts() -> list[bytes]:
    texts = [b"", b"a", "naïve — “quoted” 日本語 😀".encode("utf-8")]
    texts += [p.read_bytes() for p in sorted(FIXTURES.rglob("*.md"))]
    return texts


def test_the_digests_are_hashlibs_on_real_texts():
    texts = _texts()
    assert len(texts) > 10  # the demo vault's notes, at least
    for data in texts:
        for size in (8, 16, 32, 64):
            assert blake2b(data, digest_size=size).hexdigest() == hashlib.blake2b(data, digest_size=size).hexdigest()
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_incremental_blake2b_matches_one_shot():
    data = b"".join(_texts())
    h = blake2b(digest_size=16)
    for start in range(0, len(data), 4096):
        h.update(data[start : start + 4096])
    assert h.hexdigest() == hashlib.blake2b(data, digest_size=16).hexdigest()
