"""`ctx import PATH`: bring a vault, outline export or JSON graph into the graph database."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ctx.commands.common import DbOption, handle_errors, print_json, warn
from ctx.importers import FORMATS
from ctx.paths import resolve_db_path

FORMAT_HELP = "Source format: " + "|".join(FORMATS) + " (auto detects it)."
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
    path: Annotated[Path, typer.Argument(help="Folder or export file to import.", show_default=False)],
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)] = "auto",
    db: DbOption = None,
    output: Annotated[
        str, typer.Option("--output", "-o", help="Summary as text or json.")
    ] = "text",
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar, warnings or summary.")
    ] = False,
) -> None:
    """Import PATH (a vault folder, outline export or JSON graph) into the graph, incrementally."""
    from ctx.importers.engine import import_path
    from ctx.store import connect

    db_path = resolve_db_path(db)
    conn = connect(db_path, create=True)
    with _progress(enabled=not quiet and sys.stderr.isatty()) as progress:
        report = import_path(conn, path, format=format, progress=progress)
    if not quiet:
        for line in report.warnings:
            warn(line)
    if output == "json":
        print_json(report.as_dict() | {"db": str(db_path)})
        return
    if quiet:
        return
    verb = "imported" if report.changed else "unchanged"
    sys.stderr.write(
        f"{verb}: {report.source} ({report.format}) -> {db_path}\n"
        f"  files: {report.files_seen} seen, {report.files_parsed} parsed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted; "
        f"{report.nodes_written} nodes, {report.edges_written} edges written; "
        f"{len(report.warnings)} warnings; {report.seconds:.2f}s\n"
    )


class _progress:
    """A rich progress bar on stderr, shown only for imports big enough to need one."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar = None
        self._task = None

    def __enter__(self):  # noqa: ANN204
        if not self.enabled:
            return None
        return self._update

    def _update(self, done: int, total: int) -> None:
        if total < PROGRESS_THRESHOLD:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._bar = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("parsing", total=total)
        self._bar.update(self._task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
