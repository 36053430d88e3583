"""`ctx doctor`: check a graph file, one line per problem with what to do about it."""

from __future__ import annotations

import sys

import typer

from ctx.commands.common import DbOption, TextOrJson, handle_errors, note, write_stdout
from ctx.config import resolve_db_path


def register(app: typer.Typer) -> None:
    app.command(
        "doctor",
        epilog=(
            "Examples:\n\n  ctx doctor\n\n  ctx doctor --format json\n\n"
            "Exit codes: 0 the graph is sound, 1 a problem was found (or the graph cannot be opened)."
        ),
    )(doctor_command)


@handle_errors
def doctor_command(
    db: DbOption = None,
    format: TextOrJson = typer.Option(TextOrJson.text, "--format", "-f", help="Output format."),
) -> None:
    """Check the graph: SQLite's integrity, kept counts, passage spans, full-text indexes, vectors."""
    from ctx.errors import NoGraphError
    from ctx.store import check_graph

    path = resolve_db_path(db)
    if isinstance(path, str):
        from ctx.errors import UsageError

        raise UsageError(
            "ctx doctor checks SQLite graph files; check a PostgreSQL graph with the server's own tools"
            " (amcheck, pg_dump), see docs/team.md"
        )
    if not path.is_file():
        raise NoGraphError(path)
    checkup = check_graph(path)
    if format == "json":
        write_stdout(checkup.as_json(path) + "\n")
    else:
        for line in checkup.notes:
            note(line)
        if checkup.ok:
            write_stdout(f"ok: {path}: sqlite integrity, kept counts, passage spans, full-text indexes, vectors\n")
        else:
            write_stdout("".join(f"{p.check}: {p.message}; repair: {p.hint}\n" for p in checkup.problems))
    if not checkup.ok:
        sys.stdout.flush()
        raise typer.Exit(code=1)
