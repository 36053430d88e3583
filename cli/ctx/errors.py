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
