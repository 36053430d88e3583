"""Records of a JSON graph document, one at a time, each with the line it starts on.

A ``.json`` graph is ``{"nodes": [...], "edges": [...]}`` or a bare list of nodes. Reading it with
``json.loads`` and then finding each record's line by counting newlines from the start of the text
made the import quadratic (minutes at 10k nodes, days at 1M). Here the top level is walked by hand
and each record is decoded on its own with ``JSONDecoder.raw_decode``, while newlines are counted
once, as the reading position moves forward: linear in the size of the file.

The text may arrive in chunks (a file read piece by piece): a value cut by the end of a chunk is
decoded again once more text is there, and the text already consumed is let go, so memory stays at
about one chunk and one record however big the file is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ctx.errors import ImportFormatError

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
RECORD_LISTS = ("nodes", "edges")


class _Reader:
    """A forward-only position in text that arrives in chunks, with the line number kept up."""

    def __init__(self, relpath: str, chunks: Iterable[str]) -> None:
        self.relpath = relpath
        self.chunks = iter(chunks)
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.line = 1  # line number at buffer index ``counted``
        self.counted = 0
        self.column_base = 0  # characters of the current line that came before the buffer start

    def _more(self) -> bool:
        """Append the next chunk (dropping what is consumed); False, and nothing moved, at the end."""
        if self.eof:
            return False
        chunk = next(self.chunks, None)
        if chunk is None:
            self.eof = True
            return False
        self._count_to(self.pos)
        dropped = self.buf[: self.pos]
        newline = dropped.rfind("\n")
        self.column_base = len(dropped) - newline - 1 if newline >= 0 else self.column_base + len(dropped)
        rest = self.buf[self.pos :]
        parts = [rest, chunk]
        # Read at least as much as is buffered: a huge value is re-decoded a logarithmic number
        # of times, not once per chunk.
        got = len(chunk)
        while got < len(rest):
            chunk = next(self.chunks, None)
            if chunk is None:
                self.eof = True
                break
            parts.append(chunk)
            got += len(chunk)
        self.buf = "".join(parts)
        self.pos = 0
        self.counted = 0
        return True

    def _count_to(self, index: int) -> None:
        self.line += self.buf.count("\n", self.counted, index)
        self.counted = index

    def skip_whitespace(self) -> None:
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or not self._more():
                return

    def peek(self) -> str:
        self.skip_whitespace()
        return self.buf[self.pos] if self.pos < len(self.buf) else ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            found = repr(self.buf[self.pos]) if self.pos < len(self.buf) else "end of file"
            self.fail(f"invalid JSON: expected {char!r}, found {found}", self.pos)
        self.pos += 1

    def value(self) -> Any:
        """Decode the JSON value at the position and move past it."""
        self.skip_whitespace()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                self.fail(f"invalid JSON: {exc.msg}", exc.pos)
            except (ValueError, RecursionError) as exc:  # a 5,000-digit number, 100k-deep nesting
                reason = "nested too deeply" if isinstance(exc, RecursionError) else "a number too long"
                self.fail(f"invalid JSON: {reason}", self.pos)
            # A number at the very end of the buffer may go on in the next chunk.
            if end == len(self.buf) and self._more():
                continue
            self.pos = end
            return value

    def location(self) -> int:
        """Line number of the position."""
        self._count_to(self.pos)
        return self.line

    def fail(self, message: str, index: int) -> None:
        self._count_to(min(index, len(self.buf)))
        line = self.line + self.buf.count("\n", self.counted, index)
        newline = self.buf.rfind("\n", 0, index)
        column = index - newline if newline >= 0 else self.column_base + index + 1
        raise ImportFormatError(f"{self.relpath}:{line}: {message} (column {column})")

    def at_end(self) -> bool:
        self.skip_whitespace()
        return self.pos >= len(self.buf)


def _array(reader: _Reader, label: str) -> Iterator[tuple[str, Any]]:
    """The elements of the array at the reader's position, as ('file:line (label[i])', value)."""
    reader.take("[")
    if reader.peek() == "]":
        reader.pos += 1
        return
    index = 0
    while True:
        reader.skip_whitespace()
        where = f"{reader.relpath}:{reader.location()} ({label}[{index}])"
        yield where, reader.value()
        index += 1
        following = reader.peek()
        if following == "]":
            reader.pos += 1
            return
        reader.take(",")


def document_records(relpath: str, chunks: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """Every record of a JSON graph document, in file order, labelled ``file:line (nodes[i])``."""
    reader = _Reader(relpath, chunks)
    first = reader.peek()
    if first == "[":
        yield from _array(reader, "")
    elif first == "{":
        reader.pos += 1
        found = False
        if reader.peek() == "}":
            reader.pos += 1
        else:
            while True:
                if reader.peek() != '"':
                    reader.take('"')
                key = reader.value()
                reader.take(":")
                if key in RECORD_LISTS:
                    found = True
                    start = reader.peek()
                    if start == "[":
                        yield from _array(reader, key)
                    elif reader.value() is not None:
                        # ``"nodes": null`` reads as no nodes, as it always has.
                        raise ImportFormatError(f"{relpath}:1: 'nodes' and 'edges' must be lists")
                else:
                    reader.value()
                if reader.peek() == "}":
                    reader.pos += 1
                    break
                reader.take(",")
        if not found:
            raise ImportFormatError(f"{relpath}:1: expected {{\"nodes\": [...]}} or a list of nodes")
    elif first == "":
        reader.fail("invalid JSON: Expecting value", reader.pos)
    else:
        reader.value()  # a scalar document: either invalid JSON or not a graph
        raise ImportFormatError(f"{relpath}:1: expected {{\"nodes\": [...]}} or a list of nodes")
    if not reader.at_end():
        reader.fail("invalid JSON: Extra data", reader.pos)
