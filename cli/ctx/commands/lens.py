"""`ctx lens list|show|validate`: the lenses ctx can build context with."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ctx.commands.common import TextOrJson, handle_errors, print_json, write_stdout
from ctx.commands.completion import lens_names

lens_app = typer.Typer(
    name="lens",
    help="List, show and validate lenses (YAML files that tune `ctx build` to a kind of task).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(lens_app, name="lens")


@lens_app.command(
    "list",
    epilog="Examples:\n\n  ctx lens list\n\n  ctx lens list --format json",
)
@handle_errors
def list_command(
    format: Annotated[TextOrJson, typer.Option("--format", help="Output format.")] = TextOrJson.text,
) -> None:
    """Every lens by name: built-in, user (~/.config/ctx/lenses) and project (.ctx/lenses)."""
    from ctx.errors import LensError
    from ctx.lenses import list_lenses, load_lens_file

    rows: list[dict[str, Any]] = []
    for entry in list_lenses():
        try:
            description = load_lens_file(entry.path, name=entry.name, source=entry.source).description
            valid = True
        except LensError:
            description, valid = "(invalid: run `ctx lens validate`)", False
        rows.append({"name": entry.name, "source": entry.source, "path": str(entry.path),
                     "shadowed": entry.shadowed, "valid": valid, "description": description})
    if format == "json":
        print_json({"lenses": rows})
        return
    lines = []
    for r in rows:
        note = " (shadowed)" if r["shadowed"] else ""
        first = r["description"].split(". ")[0].rstrip(".")
        lines.append(f"{r['name']:<14} {r['source']:<8}{note} {first}")
    write_stdout("\n".join(lines) + "\n")


@lens_app.command(
    "show",
    epilog="Examples:\n\n  ctx lens show planning\n\n  ctx lens show ./my-lens.yaml",
)
@handle_errors
def show_command(
    name: Annotated[str, typer.Argument(autocompletion=lens_names, help="Lens name or path to a .yaml file.")],
) -> None:
    """The lens file, as written, with where it was found."""
    from ctx.lenses import find_lens_path, load_lens_file, read_lens_text

    source, path = find_lens_path(name)
    load_lens_file(path, name=path.stem, source=source)  # an invalid lens fails here, exit 2
    write_stdout(f"# {path} ({source})\n" + read_lens_text(path).rstrip("\n") + "\n")


@lens_app.command(
    "validate",
    epilog="Examples:\n\n  ctx lens validate ./my-lens.yaml\n\n  ctx lens validate  # every lens ctx can find",
)
@handle_errors
def validate_command(
    paths: Annotated[list[str] | None, typer.Argument(help="Lens files or names; default: all lenses.")] = None,
) -> None:
    """Check lens files: one line per problem (file: key: what is wrong), exit 2 if any."""
    from ctx.errors import LensError, UsageError
    from ctx.lenses import find_lens_path, list_lenses, load_lens_file

    targets: list[tuple[str, Path]] = []
    if paths:
        for p in paths:
            targets.append(find_lens_path(p) if not Path(p).is_file() else ("file", Path(p)))
    else:
        targets = [(e.source, e.path) for e in list_lenses()]
    problems: list[str] = []
    ok: list[str] = []
    for source, path in targets:
        try:
            load_lens_file(path, name=path.stem, source=source)
            ok.append(f"ok: {path}")
        except LensError as exc:
            problems.extend(exc.problems)
    if ok:
        write_stdout("\n".join(ok) + "\n")
    if problems:
        raise LensError(problems)
    if not targets:
        raise UsageError("no lenses found")
