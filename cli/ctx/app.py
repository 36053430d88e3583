"""The `ctx` command line: a Typer root whose commands are thin clients of the core."""

from __future__ import annotations

import typer

from ctx import __version__
from ctx.commands import build, embed, importing, inspect, lens, mcp

app = typer.Typer(
    name="ctx",
    help=(
        "Build the best possible LLM context from a local knowledge graph.\n\n"
        "  ctx import ~/notes\n\n"
        "  ctx build \"Project Apollo\" --lens planning --max-tokens 4000 | llm -s 'What blocks the launch?'"
    ),
    no_args_is_help=True,
    add_completion=False,
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
) -> None:
    """Build the best possible LLM context from a local knowledge graph."""


importing.register(app)
build.register(app)
inspect.register(app)
lens.register(app)
embed.register(app)
mcp.register(app)


def main() -> None:
    app()
