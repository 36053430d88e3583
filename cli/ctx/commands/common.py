"""What every command shares: the --db option, stderr console, and error-to-exit-code mapping."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ctx.errors import EXIT_RUNTIME, CtxError


def _given(context: Any, name: str) -> bool:
    source = context.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _db_before_the_subcommand(context: typer.Context, value: Path | None) -> Path | None:
    """``ctx --db g.db stats`` means ``ctx stats --db g.db``: a --db given on the command line
    to a parent (the root, or `ctx sources`) counts when the subcommand's own was not given.
    Flags win over $CTX_DB wherever they stand."""
    if _given(context, "db"):
        return value
    parent = context.parent
    while parent is not None:
        if "db" in parent.params and _given(parent, "db"):
            return parent.params["db"]
        parent = parent.parent
    return value


def choices(name: str, values: Iterable[str]) -> type[StrEnum]:
    """The values an option accepts, as typer needs them (an enum): anything else is a usage error
    (exit 2) naming the allowed values, and --help lists them."""
    return StrEnum(name, {value: value for value in values})  # type: ignore[return-value]


class TextOrJson(StrEnum):
    text = "text"
    json = "json"

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="CTX_DB",
        callback=_db_before_the_subcommand,
        help=(
            "Graph database file; also accepted before the subcommand. Default: $CTX_DB, else"
            " graph: in the config file, else the nearest .ctx/graph.db, else"
            " ~/.local/share/ctx/graph.db."
        ),
        show_default=False,
    ),
]

# `--plain`: print exactly what a pipe would get (no markdown rendering, no JSON colours), even on
# a terminal. Set by the root callback (`ctx --plain ...`) or a command's own flag.
_plain = False


def set_plain(value: bool) -> None:
    global _plain
    _plain = value


PlainOption = Annotated[
    bool,
    typer.Option("--plain", help="Print exactly the text a pipe gets, even on a terminal (no rendering)."),
]

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_RUNTIME) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the Exit to raise."""
    sys.stderr.write(f"ctx: error: {message.splitlines()[0] if message else 'failed'}\n")
    for extra in message.splitlines()[1:]:
        sys.stderr.write(f"ctx: error: {extra}\n")
    sys.stderr.flush()
    return typer.Exit(code=code)


def warn(message: str) -> None:
    sys.stderr.write(f"ctx: warning: {message}\n")
    sys.stderr.flush()


def note(message: str) -> None:
    """Something the user should know that is not a problem (e.g. which folder was imported)."""
    sys.stderr.write(f"ctx: note: {message}\n")
    sys.stderr.flush()


def handle_errors(func: F) -> F:
    """Map core exceptions to one-line messages and exit codes; never show a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except CtxError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except KeyboardInterrupt:
            sys.stderr.write("ctx: interrupted; nothing was changed by the unfinished step\n")
            raise typer.Exit(code=130) from None
        except BrokenPipeError:
            # The reader went away (e.g. `| head`); that is not an error worth a message.
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            except OSError:
                pass
            raise typer.Exit(code=0) from None
        except Exception as exc:  # noqa: BLE001 - the last line of defence for a CLI
            if os.environ.get("CTX_DEBUG"):
                raise
            import sqlite3

            if isinstance(exc, sqlite3.DatabaseError):
                # A lock held past the busy timeout, a read-only graph: one line, not "internal".
                from ctx.store.db import storage_error

                raise fail(str(storage_error(exc)), EXIT_RUNTIME) from None
            raise fail(f"internal error: {exc.__class__.__name__}: {exc} (set CTX_DEBUG=1 for details)") from None

    return wrapper  # type: ignore[return-value]


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
