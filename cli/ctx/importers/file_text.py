"""A source file as text, a piece at a time, decoded exactly as the engine decodes a whole file.

A graph export can be gigabytes: read whole, it was held as bytes, then as text, then as records.
Here it is read in pieces, and each piece is hashed, checked and decoded as it arrives:

* the hash is the same blake2b the engine records for every file (fed piece by piece);
* a NUL byte in the first 8 KiB marks a binary file (no text at all, a warning);
* a UTF-8 byte-order mark is dropped; the first invalid byte is reported by its offset (after the
  mark, as ``bytes.decode("utf-8-sig")`` counts) and every undecodable byte is replaced, as when
  the whole file was decoded with ``errors="replace"`` after a strict attempt failed;
* CRLF and lone CR become LF, also when a CR ends one piece and its LF starts the next.
"""

from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Iterable, Iterator

BINARY_PROBE = 8192
_BOM = codecs.BOM_UTF8


class FileText:
    """Text pieces of one file; ``digest``, ``size`` and ``warnings`` are complete once the
    pieces run out (``binary`` as soon as the first piece was asked for)."""

    def __init__(self, rel: str, pieces: Iterable[bytes]) -> None:
        self.rel = rel
        self._pieces = iter(pieces)
        self._hash = hashlib.blake2b(digest_size=16)
        self.size = 0
        self.binary = False
        self.warnings: list[str] = []

    @property
    def digest(self) -> str:
        return self._hash.hexdigest()

    def _bytes(self) -> Iterator[bytes]:
        for piece in self._pieces:
            self._hash.update(piece)
            self.size += len(piece)
            yield piece

    def _probe(self, source: Iterator[bytes]) -> bytes:
        """The first bytes, at least enough for the binary and byte-order-mark checks."""
        head = b""
        for piece in source:
            head += piece
            if len(head) >= BINARY_PROBE:
                break
        return head

    def text(self) -> Iterator[str]:
        """The decoded, newline-normalized text, piece by piece (nothing for a binary file)."""
        source = self._bytes()
        head = self._probe(source)
        if b"\x00" in head[:BINARY_PROBE]:
            self.binary = True
            self.warnings.append(f"{self.rel}: binary file; skipped")
            for _ in source:  # hashed all the same: the file is recorded as read
                pass
            return
        if head.startswith(_BOM):
            head = head[len(_BOM) :]
        pending_cr = False
        for piece in _decoded(self, head, source):
            if pending_cr:
                piece = "\r" + piece
            pending_cr = piece.endswith("\r")
            if pending_cr:
                piece = piece[:-1]
            if piece:
                yield piece.replace("\r\n", "\n").replace("\r", "\n")
        if pending_cr:
            yield "\n"


def _decoded(owner: FileText, head: bytes, rest: Iterator[bytes]) -> Iterator[str]:
    """UTF-8 text of ``head`` then ``rest``: strict until the first invalid byte (reported by its
    offset), then with replacement characters."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    fed = 0  # bytes given to the decoder so far (the mark excluded)

    def pieces() -> Iterator[tuple[bytes, bool]]:
        yield head, False
        for piece in rest:
            yield piece, False
        yield b"", True

    for data, final in pieces():
        try:
            text = decoder.decode(data, final)
        except UnicodeDecodeError as exc:
            if decoder.errors == "replace":  # pragma: no cover - replacement never raises
                raise
            held = decoder.getstate()[0]
            owner.warnings.append(
                f"{owner.rel}: invalid UTF-8 at byte {fed - len(held) + exc.start}; undecodable bytes replaced"
            )
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            text = decoder.decode(held + data, final)
        fed += len(data)
        if text:
            yield text


def file_pieces(path: str | os.PathLike[str], checked: os.stat_result) -> Iterator[bytes]:
    from ctx.files import read_pieces

    return read_pieces(path, checked=checked)
