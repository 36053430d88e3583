"""`ctx import PATH`: bring a vault, outline export or JSON graph into the graph database."""

from __future__ import annotations

import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import click
import typer

from ctx.errors import printable
from ctx.commands.common import (
    DbOption,
    TextOrJson,
    choices,
    handle_errors,
    note,
    print_json,
    warn,
)
from ctx.commands.progress import ProgressBar
from ctx.importers import FORMATS
from ctx.config import resolve_db_path
from ctx.paths import shown

FORMAT_HELP = "Source format (auto detects it)."
if TYPE_CHECKING:
    ImportFormat = StrEnum
else:
    ImportFormat = choices("ImportFormat", FORMATS)  # the importer registry's formats
# Folders smaller than this finish before a progress bar would even be readable.
PROGRESS_THRESHOLD = 200


def register(app: typer.Typer) -> None:
    app.command(
        "import",
        epilog=(
            "Examples:\n\n"
            "  ctx import ~/Obsidian/Vault\n\n"
            "  ctx import export.json --format tana --db team.db\n\n"
            "  ctx import claims.jsonl --format json\n\n"
            "Re-running on the same path is incremental: unchanged files are not read again,\n"
            "changed files are re-imported and deleted files disappear with their links."
        ),
    )(import_command)


@handle_errors
def import_command(
    # A string, not a Path: typer makes "" the current folder before the command could refuse it;
    # click's path type keeps the shell completing file names.
    path: Annotated[str, typer.Argument(help="Folder or export file to import.", show_default=False,
                                        click_type=click.Path(path_type=str))],
    format: Annotated[ImportFormat, typer.Option("--format", "-f", help=FORMAT_HELP)] = ImportFormat("auto"),
    db: DbOption = None,
    output: Annotated[TextOrJson, typer.Option("--output", "-o", help="Summary format.")] = TextOrJson.text,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar, warnings or summary.")
    ] = False,
) -> None:
    """Import PATH (a vault folder, outline export or JSON graph) into the graph, incrementally."""
    from ctx.graph import Graph
    from ctx.store import discarded_on_failure
    from ctx.trust import check_import_allowed

    from ctx.importers.engine import source_path

    source = source_path(path)
    db_path = resolve_db_path(db)
    check_import_allowed(db_path, source)  # a project graph reads only its own folder
    with discarded_on_failure(db_path):
        graph = Graph.open(db_path, create=True)
        try:
            with ProgressBar(enabled=not quiet and sys.stderr.isatty(), threshold=PROGRESS_THRESHOLD) as progress:
                report = graph.import_path(source, format=format.value, progress=progress)
        finally:
            graph.close()
    if not quiet:
        for line in report.notes:
            note(line)
        for line in report.warnings:
            warn(line)
    if output == "json":
        print_json(report.as_dict() | {"db": shown(db_path)})
        return
    if quiet:
        return
    verb = "imported" if report.changed else "unchanged"
    sys.stderr.write(
        f"{verb}: {printable(report.source)} ({report.format}) -> {printable(shown(db_path))}\n"
        f"  files: {report.files_seen} seen, {report.files_parsed} parsed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted; "
        f"{report.nodes_written} nodes, {report.edges_written} edges written; "
        f"{len(report.warnings)} warnings; {report.seconds:.2f}s\n"
    )
