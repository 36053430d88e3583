"""The `ctx` command line: a Typer root whose commands are thin clients of the core."""

from __future__ import annotations

from typing import Any

import typer

from ctx import __version__
from ctx.commands import build, doctor, embed, importing, inspect, lens, mcp, sources
from ctx.commands.common import DbOption, PlainOption, set_plain

app = typer.Typer(
    name="ctx",
    help=(
        "Build the best possible LLM context from a local knowledge graph.\n\n"
        "  ctx import ~/notes\n\n"
        "  ctx build \"Project Apollo\" --lens planning --max-tokens 4000 | llm -s 'What blocks the launch?'"
    ),
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ctx {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    db: DbOption = None,
    plain: PlainOption = False,
) -> None:
    """Build the best possible LLM context from a local knowledge graph."""
    set_plain(plain)


importing.register(app)
build.register(app)
inspect.register(app)
lens.register(app)
embed.register(app)
mcp.register(app)
sources.register(app)
doctor.register(app)


def plain_first(args: list[str]) -> list[str]:
    """``--plain`` is the root's option (print what a pipe would get): accepted after any
    subcommand's name too (`ctx sources --plain`), by moving it before the subcommand. Not after
    ``--``, where it is an argument (a search for "--plain")."""
    end = args.index("--") if "--" in args else len(args)
    if "--plain" not in args[:end]:
        return args
    return ["--plain", *[a for a in args[:end] if a != "--plain"], *args[end:]]


def main() -> None:
    """Run the CLI with every error as one line on stderr, usage errors included.

    Click would print a usage block plus a blank line for a bad flag; agents and scripts parse
    stderr, so a bad flag gets the same one-line shape (and exit code 2) as every other error.
    """
    import sys

    import typer.main

    # Click's exception classes, from the module that defines typer.BadParameter (Typer's own copy
    # of Click, or Click itself): named, not found by position in a class hierarchy.
    click_exceptions = sys.modules[typer.BadParameter.__module__]
    usage_error: Any = click_exceptions.UsageError
    click_exception: Any = click_exceptions.ClickException
    command = typer.main.get_command(app)
    try:
        result = command.main(args=plain_first(sys.argv[1:]), prog_name="ctx", standalone_mode=False)
    except usage_error as exc:
        ctx = getattr(exc, "ctx", None)
        if ctx is not None and type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # `ctx` or `ctx lens` alone: the help is the answer
            sys.exit(0)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        sys.stderr.write(f"ctx: error: {exc.format_message()}{where}\n")
        sys.exit(exc.exit_code)
    except click_exception as exc:
        sys.stderr.write(f"ctx: error: {exc.format_message()}\n")
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("ctx: interrupted\n")
        sys.exit(130)
    sys.exit(result if isinstance(result, int) else 0)
