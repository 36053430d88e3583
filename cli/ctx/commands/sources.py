"""`ctx sources`, `ctx sources remove PATH`, `ctx sync`: the graph's registered sources."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ctx.commands.common import (
    error,
    DbOption,
    TextOrJson,
    handle_errors,
    print_json,
    warn,
    write_stdout,
)
from ctx.commands.progress import ProgressBar
from ctx.errors import EXIT_RUNTIME, printable
from ctx.config import resolve_db_path
from ctx.paths import shown

if TYPE_CHECKING:
    from ctx.sync import SyncReport

FormatOption = Annotated[TextOrJson, typer.Option("--format", "-f", help="Output format.")]
OutputOption = Annotated[TextOrJson, typer.Option("--output", "-o", help="Summary format.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or summary.")]

sources_app = typer.Typer(
    name="sources",
    help="The folders and files this graph was imported from.",
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(
        sources_app,
        epilog=(
            "Examples:\n\n  ctx sources\n\n  ctx sources --format json | jq '.sources[].root'\n\n"
            "  ctx sources remove ~/old-vault"
        ),
    )
    app.command(
        "sync",
        epilog=(
            "Examples:\n\n  ctx sync\n\n  ctx sync --output json\n\n"
            "Every source is re-imported in the format it was imported with (only changed files are\n"
            "read); when the graph has vectors, nodes whose text changed are embedded again."
        ),
    )(sync_command)
    app.command(
        "watch",
        epilog=(
            "Examples:\n\n  ctx watch\n\n  ctx watch --debounce 2000 --no-embed\n\n"
            "Syncs once, then after every burst of changes to a registered source. Ctrl-C stops it\n"
            "(exit 0); an import it interrupts is rolled back and redone by the next sync.\n"
            "Needs the optional extra: pip install 'ctx-graph[watch]'."
        ),
    )(watch_command)
    app.command(
        "trust",
        epilog=(
            "Examples:\n\n  ctx trust\n\n  ctx trust --db ~/Downloads/vault/.ctx/graph.db\n\n"
            "A graph ctx did not create on this machine (a copy, a clone's .ctx/graph.db) is never\n"
            "synced until you trust it: it could name any folder as a source. Check its sources\n"
            "(they are listed) before trusting it. Nor is a model folder it names loaded by builds\n"
            "until then (similarity is left out, with a warning)."
        ),
    )(trust_command)


@sources_app.callback()
@handle_errors
def sources_command(context: typer.Context, db: DbOption = None, format: FormatOption = TextOrJson.text) -> None:
    """List the registered sources: path, format, nodes, last import, vectors."""
    if context.invoked_subcommand is not None:
        return  # `ctx sources --db g.db remove PATH`: remove reads that --db itself
    from ctx.inspection import sources_report
    from ctx.store import open_store

    report = sources_report(open_store(resolve_db_path(db)), fmt=format)
    if report.data is not None:
        print_json(report.data)
    else:
        write_stdout(report.text)


@sources_app.command("remove", epilog="Example:\n\n  ctx sources remove ~/old-vault")
@handle_errors
def remove_command(
    path: Annotated[str, typer.Argument(help="The source's path as `ctx sources` lists it (or its id).")],
    db: DbOption = None,
    output: OutputOption = TextOrJson.text,
) -> None:
    """Remove a source: its nodes, edges and vectors leave the graph, in one transaction."""
    from ctx.errors import UsageError
    from ctx.store import open_store
    from ctx.sync import remove

    if output not in ("text", "json"):
        raise UsageError(f"--output must be text or json, not {output!r}")
    db_path = resolve_db_path(db)
    removed = remove(open_store(db_path), path)
    if output == "json":
        print_json(
            {
                "removed": removed.root,
                "nodes": removed.nodes,
                "edges": removed.edges,
                "files": removed.files,
                "vectors": removed.vectors,
                "db": shown(db_path),
            }
        )
        return
    sys.stderr.write(
        f"removed: {removed.root} from {shown(db_path)}: {removed.nodes} nodes, {removed.edges} edges,"
        f" {removed.files} files, {removed.vectors} vectors\n"
    )


@handle_errors
def sync_command(
    db: DbOption = None,
    embed: Annotated[
        bool, typer.Option("--embed/--no-embed", help="Embed changed nodes when the graph has vectors.")
    ] = True,
    output: OutputOption = TextOrJson.text,
    quiet: QuietOption = False,
) -> None:
    """Re-import every registered source, then embed what changed (when the graph has vectors)."""
    from ctx.errors import UsageError
    from ctx.store import open_store
    from ctx.sync import sync

    if output not in ("text", "json"):
        raise UsageError(f"--output must be text or json, not {output!r}")
    db_path = resolve_db_path(db)
    store = open_store(db_path)
    with ProgressBar(enabled=not quiet and sys.stderr.isatty(), threshold=200) as progress:
        report = sync(store, embed=embed, progress=progress)
    if output == "json":
        print_json(report.as_dict() | {"db": shown(db_path)})
    elif not quiet:
        print_sync_summary(report, shown(db_path))
    if report.failed:
        raise typer.Exit(code=EXIT_RUNTIME)


def print_sync_summary(report: "SyncReport", db: str) -> None:
    """What a sync did, on stderr: one line overall, then one per source that needs a word."""
    if not report.sources:
        warn("no sources yet; add one with `ctx import PATH`")
        return
    for source in report.sources:
        if source.report is not None:
            for line in source.report.warnings:
                warn(f"{source.root}: {line}")
        if source.status == "missing":
            warn(f"{source.root}: no longer exists; `ctx sources remove {source.root}` drops its nodes")
        elif source.status == "failed":
            error(f"{source.root}: {source.error}")
        elif source.status == "refused":
            warn(f"{source.root}: {source.error}")
    if report.embed_skipped:
        warn(report.embed_skipped)
    counts = {status: sum(s.status == status for s in report.sources) for status in ("changed", "unchanged", "missing", "failed", "refused")}
    summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    embedded = f"; embedded {report.embedded_summary()} ({report.embed_model})" if report.texts_embedded else ""
    sys.stderr.write(f"synced: {len(report.sources)} sources -> {db}: {summary}{embedded}; {report.seconds:.2f}s\n")
    for source in report.sources:
        if source.status == "changed" and source.report is not None:
            r = source.report
            sys.stderr.write(
                f"  {printable(source.root)} ({source.format}): {r.files_parsed} parsed, {r.files_deleted} deleted;"
                f" {r.nodes_written} nodes, {r.edges_written} edges written\n"
            )


@handle_errors
def trust_command(db: DbOption = None) -> None:
    """Allow ctx to sync a graph it did not create here (a copy, a clone's .ctx/graph.db), and builds to load the model folder it names.

    Its sources are then re-imported by `ctx sync`, `ctx watch`, builds with sync.before_build and
    the MCP server, and a model folder it was embedded with is loaded to embed questions."""
    from ctx.store import open_store
    from ctx.trust import inside, project_root, trust

    db_path = resolve_db_path(db)
    store = open_store(db_path)  # a graph that is not there is the same error as everywhere
    if isinstance(db_path, str):
        # A database server's graph is no file a download could bring: it is never refused, so
        # trusting it changes nothing, and saying "will be synced" would promise what was already so.
        sys.stderr.write(
            f"ctx: nothing to trust: {shown(db_path)} is a database, not a file; as a writer, `ctx sync`"
            " re-imports every registered source that exists on this machine (see `ctx sources`)\n"
        )
        return
    project = project_root(db_path)
    trust(store)
    sources = store.reader().sources()
    sys.stderr.write(f"trusted: {db_path}; its sources will be synced:\n")
    for source in sources:
        where = "" if project is None or inside(project, Path(source.root)) else "  (outside the project: never read)"
        sys.stderr.write(f"  [{source.id}] {printable(source.root)} ({source.format}){where}\n")
    if not sources:
        sys.stderr.write("  (none yet)\n")


@handle_errors
def watch_command(
    db: DbOption = None,
    debounce: Annotated[
        int, typer.Option("--debounce", min=50, help="Milliseconds of quiet that end a batch of changes.")
    ] = 400,
    embed: Annotated[
        bool, typer.Option("--embed/--no-embed", help="Embed changed nodes when the graph has vectors.")
    ] = True,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors and warnings.")] = False,
) -> None:
    """Keep the graph fresh: re-import a source whenever its files change, until Ctrl-C."""
    import datetime as dt

    from ctx.watch import watch

    db_path = resolve_db_path(db)

    def stamp() -> str:
        return dt.datetime.now().strftime("%H:%M:%S")

    def on_sync(report: "SyncReport") -> None:
        if quiet:
            for source in report.failed:
                error(f"{source.root}: {source.error}")
            return
        if not report.sources:  # the vectors of what was just synced
            if report.embed_skipped:
                sys.stderr.write(f"[{stamp()}] ")
                warn(report.embed_skipped)
            elif report.texts_embedded:
                sys.stderr.write(
                    f"[{stamp()}] embedded: {report.embedded_summary()} ({report.embed_model});"
                    f" {report.seconds:.2f}s\n"
                )
            return
        if report.changed or report.failed or report.embed_skipped:
            sys.stderr.write(f"[{stamp()}] ")
            print_sync_summary(report, shown(db_path))

    def on_problem(line: str) -> None:
        # Always said, --quiet or not: the watcher goes on, but the graph is behind until it works.
        sys.stderr.write(f"[{stamp()}] ctx: warning: {line}\n")

    def on_start() -> None:
        # Once there is something to watch: before it, "watching ..." came above the one line
        # saying there was no graph or no source.
        if not quiet:
            sys.stderr.write(f"ctx: watching the sources of {shown(db_path)} (Ctrl-C to stop)\n")

    try:
        with ProgressBar(enabled=not quiet and sys.stderr.isatty(), threshold=200) as progress:
            watch(db_path, on_sync=on_sync, debounce_ms=debounce, embed=embed, progress=progress, on_problem=on_problem,
                  on_start=on_start)
    except KeyboardInterrupt:
        pass
    if not quiet:
        sys.stderr.write("ctx: stopped watching\n")
