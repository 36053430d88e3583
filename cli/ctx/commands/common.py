"""What every command shares: the --db option, stderr console, and error-to-exit-code mapping."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ctx.commands.console import (  # re-exported: every command imports them from here
    error as error,
    exit_code_for as exit_code_for,
    note as note,
    print_json as print_json,
    set_plain as set_plain,
    stdout_is_terminal as stdout_is_terminal,
    warn as warn,
    write_stdout as write_stdout,
)
from ctx.errors import EXIT_RUNTIME


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

PlainOption = Annotated[
    bool,
    typer.Option("--plain", help="Print exactly the text a pipe gets, even on a terminal (no rendering)."),
]

IncludePrivateOption = Annotated[
    bool,
    typer.Option(
        "--include-private",
        help="Also use nodes marked private (tag #private, field private: true, or below one); withheld by default.",
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = EXIT_RUNTIME) -> typer.Exit:
    """Print ``message`` as one line on stderr and return the Exit to raise."""
    error(message)
    return typer.Exit(code=code)


def handle_errors(func: F) -> F:
    """Map core exceptions to one-line messages and exit codes; never show a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - the last line of defence for a CLI
            raise typer.Exit(code=exit_code_for(exc)) from None

    return wrapper  # type: ignore[return-value]
