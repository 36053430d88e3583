"""Exceptions the core raises; the CLI maps each to a one-line message and an exit code."""

from __future__ import annotations

EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3


class CtxError(Exception):
    """A runtime failure the user can act on (exit code 1)."""

    exit_code = EXIT_RUNTIME


class UsageError(CtxError):
    """Bad input from the user: a flag value, a lens file, a path (exit code 2)."""

    exit_code = EXIT_USAGE


class NotFoundError(CtxError):
    """The topic or node asked for is not in the graph (exit code 3)."""

    exit_code = EXIT_NOT_FOUND


class NoGraphError(CtxError):
    """The database file does not exist yet."""

    def __init__(self, path: object) -> None:
        super().__init__(f"no graph at {path}; run `ctx import PATH` first (or pass --db)")


class ImportFormatError(UsageError):
    """A source file is malformed in a way that stops the import (e.g. a bad JSON record)."""


class LensError(UsageError):
    """A lens file is invalid; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


# Characters a terminal acts on rather than shows: C0/C1 controls (escape sequences, carriage
# returns, a newline inside one line; a tab is left alone) and the bidirectional overrides that make a name read as
# another. Names come from files the user did not write (a downloaded vault).
_TERMINAL_CONTROLS = {c for c in range(0x20) if c != 0x09} | {0x7F} | set(range(0x80, 0xA0)) | set(range(0x202A, 0x202F)) | set(
    range(0x2066, 0x206A)
)


def printable(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\n``,
    ``\\u202e``): safe to print to a terminal as one line. Plain text comes back unchanged."""
    if not any(ord(c) in _TERMINAL_CONTROLS for c in text):
        return text
    return "".join(c.encode("unicode_escape").decode("ascii") if ord(c) in _TERMINAL_CONTROLS else c for c in text)


class AccessRefused(CtxError):
    """The database refused this connection what it asked: a role without the rights (a reader
    writing), or a read-only server (a replica). The same will be refused for every source: a
    freshness check answers from the graph as it is, and a sync stops at once."""
