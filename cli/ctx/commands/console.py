"""What every command prints and how an error becomes one stderr line and an exit code.

Free of Typer, so the fast paths of `ctx build` and `ctx search` (``ctx.entry``) print and fail
exactly as the Typer commands do without loading them.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from ctx.errors import EXIT_RUNTIME, CtxError, printable

if TYPE_CHECKING:
    from ctx.inspection import Report

# `--plain`: print exactly what a pipe would get (no markdown rendering, no JSON colours), even on
# a terminal. Set by the root callback (`ctx --plain ...`) or a command's own flag.
_plain = False


def set_plain(value: bool) -> None:
    global _plain
    _plain = value


def stdout_is_terminal() -> bool:
    """Whether to render for a person: a terminal, unless --plain asked for the piped text."""
    return sys.stdout.isatty() and not _plain


def write_stdout(text: str) -> None:
    """Write exactly ``text`` to stdout: what a budget counted is what the reader gets.

    Where stdout's encoding cannot hold the text (PYTHONIOENCODING=ascii and the header's "·",
    a note in Greek), the text goes out as UTF-8 bytes rather than failing or being changed:
    replacing characters would change what the budget counted.
    """
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:
            raise
        sys.stdout.flush()
        buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def print_json(data: Any) -> None:
    """One JSON document on stdout; highlighted on a terminal, plain when piped."""
    from ctx.jsonout import dumps

    text = dumps(data, indent=2, sort_keys=False)
    if stdout_is_terminal():
        from rich.console import Console

        Console(soft_wrap=True).print_json(text)
    else:
        write_stdout(text + "\n")


def emit_report(report: Report, plain: bool = False) -> None:
    """A search, show or stats report: its notices on stderr, its text or JSON on stdout."""
    if plain:
        set_plain(True)
    for line in report.warnings:
        warn(line)
    if report.data is not None:
        print_json(report.data)
    else:
        write_stdout(report.text)


def error(message: str) -> None:
    """``message`` as ``ctx: error:`` lines on stderr (one per line of the message)."""
    # Each line of the message is one stderr line; what a line holds of a file's name or text
    # cannot move the cursor, clear the screen or start a line of its own (``printable``).
    lines = message.split("\n") if message else ["failed"]
    sys.stderr.write(f"ctx: error: {printable(lines[0])}\n")
    for extra in lines[1:]:
        sys.stderr.write(f"ctx: error: {printable(extra)}\n")
    sys.stderr.flush()


def warn(message: str) -> None:
    sys.stderr.write(f"ctx: warning: {printable(message)}\n")
    sys.stderr.flush()


def note(message: str) -> None:
    """Something the user should know that is not a problem (e.g. which folder was imported)."""
    sys.stderr.write(f"ctx: note: {printable(message)}\n")
    sys.stderr.flush()


def _interrupted(exc: BaseException) -> bool:
    """A Ctrl-C, also when Python wrapped it (a class body interrupted mid-import raises
    ``RuntimeError: Error calling __set_name__`` caused by the KeyboardInterrupt)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def exit_code_for(exc: BaseException) -> int:
    """Report ``exc`` the one way every command does and return its exit code; never a traceback
    (except with CTX_DEBUG=1, where an unexpected exception is raised again)."""
    if isinstance(exc, CtxError):
        error(str(exc))
        return exc.exit_code
    if _interrupted(exc):
        sys.stderr.write("ctx: interrupted; nothing was changed by the unfinished step\n")
        return 130
    if isinstance(exc, BrokenPipeError):
        # The reader went away (e.g. `| head`); that is not an error worth a message.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    if os.environ.get("CTX_DEBUG"):
        raise exc
    from ctx.store.errors import as_ctx_error

    stored = as_ctx_error(exc)
    if stored is not None:
        # A lock held past the busy timeout, a read-only graph: one line, not "internal".
        error(str(stored))
        return EXIT_RUNTIME
    error(f"internal error: {exc.__class__.__name__}: {exc} (set CTX_DEBUG=1 for details)")
    return EXIT_RUNTIME
