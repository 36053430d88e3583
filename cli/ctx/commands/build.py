"""`ctx build`: the context for one or more topics, within an exact token budget."""

from __future__ import annotations

from typing import Annotated

import typer

from ctx.assemble import DEFAULT_LENS, FORMATS, MIN_TOKENS, BuildRequest, auto_lens_summary
from ctx.commands.common import DbOption, PlainOption, handle_errors
from ctx.commands.completion import lens_names, values

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

    names = [f"auto (default: {auto_lens_summary()})", *builtin_lens_names()]
    app.command("build", epilog=EPILOG.format(lenses=", ".join(names)))(build_command)


@handle_errors
def build_command(
    topics: Annotated[
        list[str],
        typer.Argument(help="Node ids, exact titles or aliases, or search words; several blend into one context.", show_default=False),
    ],
    lens: Annotated[
        str | None,
        typer.Option("--lens", "-l", autocompletion=lens_names, help=f"Lens name or path to a lens .yaml file. Default: build.lens in the config file, else {DEFAULT_LENS}: {auto_lens_summary()}.", show_default=False),
    ] = None,
    depth: Annotated[
        int | None,
        typer.Option("--depth", "-d", min=0, show_default=False,
                     help="Hops to walk from the topic (default: the lens's, 2; capped at the lens's max_depth, 5 for most)."),
    ] = BuildRequest.depth,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", "-t", min=MIN_TOKENS, help=f"Token budget for the whole output. Default: build.max_tokens in the config file, else {BuildRequest.max_tokens}.", show_default=False),
    ] = None,
    # Checked by the core, not by the parser: the MCP tool takes the same argument and must fail
    # with the very same message.
    format: Annotated[str, typer.Option("--format", "-f", autocompletion=values(*FORMATS), help=f"{' or '.join(FORMATS)}.")] = BuildRequest.format,
    include_fields: Annotated[
        bool, typer.Option("--include-fields/--no-include-fields", help="Show node fields (status, owner, ...).")
    ] = BuildRequest.include_fields,
    encoding: Annotated[
        str | None,
        typer.Option("--encoding", help=f"tiktoken encoding the budget is counted in. Default: build.encoding in the config file, else {BuildRequest.encoding}.", show_default=False),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Print every candidate's score parts and fate to stderr.")
    ] = BuildRequest.explain,
    include_private: Annotated[
        bool,
        typer.Option("--include-private", help="Also use nodes marked private (withheld by default)."),
    ] = BuildRequest.include_private,
    db: DbOption = None,
    plain: PlainOption = False,
) -> None:
    """Build LLM context about TOPICS from the graph: walk it as the lens says, rank, fit the budget."""
    from ctx.commands.build_run import run_build

    code = run_build(
        topics=tuple(topics),
        lens=lens,
        depth=depth,
        max_tokens=max_tokens,
        format=format,
        include_fields=include_fields,
        encoding=encoding,
        explain=explain,
        include_private=include_private,
        db=db,
        plain=plain,
    )
    if code:
        raise typer.Exit(code=code)
