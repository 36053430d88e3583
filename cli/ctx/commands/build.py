"""`ctx build`: the context for one or more topics, within an exact token budget."""

from __future__ import annotations

from typing import Any

import typer

from ctx.assemble import BuildRequest
from ctx.commands.common import DbOption, IncludePrivateOption, PlainOption, handle_errors
from ctx.commands.declared import declare

EPILOG = """Examples:

  ctx build "Project Apollo"

  ctx build "Project Apollo" --lens planning --max-tokens 4000 | llm -s "What blocks the launch?"

  ctx build projects/apollo "Jane Doe" --depth 3 --max-tokens 8000 --format json

  ctx build "weekly sync" --lens meeting-prep --explain

  ctx build "parser rewrite" --lens ./my-lens.yaml

Built-in lenses: {lenses}; `ctx lens list` shows all, including your own in
~/.config/ctx/lenses and .ctx/lenses. --max-tokens bounds the whole stdout, counted with tiktoken.
Exit codes: 0 ok, 1 error, 2 usage error or invalid lens, 3 topic not found.
"""


def register(app: typer.Typer) -> None:
    from ctx.lenses import builtin_lens_names

    names = ["auto (default: answer for a question or phrase, general for a node's id or title)",
             *builtin_lens_names()]
    app.command("build", epilog=EPILOG.format(lenses=", ".join(names)))(build_command)


def build_command(**values: Any) -> None:
    """Build LLM context about TOPICS from the graph: walk it as the lens says, rank, fit the budget."""
    from ctx.commands.build_run import run_build

    code = run_build(**values)
    if code:
        raise typer.Exit(code=code)


# The parameters are BuildRequest's declared options (ctx.options), then the graph handle's.
build_command = declare(
    handle_errors(build_command), BuildRequest,
    ("include_private", IncludePrivateOption, False), ("db", DbOption, None), ("plain", PlainOption, False),
)
