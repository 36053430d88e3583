"""Keeping a graph in step with its sources: re-import them all, embed what changed, remove one.

``sync`` is what ``ctx sync`` runs and what ``ctx watch`` and the freshness check build on: every
registered source is re-imported in the format it was read in (incrementally: only changed files
are read, each source in one transaction), and when the graph has vectors, the nodes whose content
changed are embedded again so similarity never lags behind the text.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from pathlib import Path

from ctx.errors import AccessRefused, CtxError, UsageError
from ctx.store import as_store
from ctx.store.errors import GraphBusyError
from ctx.store.types import Removed, Source

if TYPE_CHECKING:
    from ctx.importers.engine import ImportReport
    from ctx.semantic.models import ModelRef
    from ctx.store.protocols import GraphStore

# (phase, done, total): "<source name>: reading files", ..., "loading model", "embedding"
PhaseProgress = Callable[[str, int, int], None]
EMBED_HINT = "pip install 'ctx-graph[embed]'"


@dataclass
class SourceResult:
    root: str
    format: str
    status: str  # changed | unchanged | missing | failed | refused (outside the graph's project)
    report: ImportReport | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "root": self.root,
            "format": self.format,
            "status": self.status,
            "error": self.error,
            "import": self.report.as_dict() if self.report else None,
        }


@dataclass
class SyncReport:
    sources: list[SourceResult] = field(default_factory=list)
    embedded: int = 0  # nodes; the passages and paragraphs beside them are counted apart
    passages_embedded: int = 0
    paragraphs_embedded: int = 0
    embed_model: str | None = None
    embed_skipped: str | None = None  # why vectors were not brought up to date
    seconds: float = 0.0

    @property
    def texts_embedded(self) -> int:
        return self.embedded + self.passages_embedded + self.paragraphs_embedded

    def embedded_summary(self) -> str:
        """"2 nodes, 3 passages and 5 paragraphs": every text embedded, as ``ctx embed`` counts."""
        return (f"{self.embedded} nodes, {self.passages_embedded} passages and "
                f"{self.paragraphs_embedded} paragraphs")

    @property
    def changed(self) -> bool:
        return any(s.status == "changed" for s in self.sources)

    @property
    def failed(self) -> list[SourceResult]:
        return [s for s in self.sources if s.status == "failed"]

    def as_dict(self) -> dict[str, object]:
        return {
            "sources": [s.as_dict() for s in self.sources],
            "changed": self.changed,
            "embedded": self.embedded,
            "passages_embedded": self.passages_embedded,
            "paragraphs_embedded": self.paragraphs_embedded,
            "embed_model": self.embed_model,
            "embed_skipped": self.embed_skipped,
            "seconds": round(self.seconds, 3),
        }


def import_source(
    store: GraphStore, source: Source, progress: PhaseProgress | None = None
) -> SourceResult:
    """Re-import one registered source; a problem with it is reported, not raised."""
    root = Path(source.root)
    if not root.exists():
        return SourceResult(source.root, source.format, "missing", error=f"{root} no longer exists")
    # The import's own phases, named after the source: "notes: reading files", ...
    step = None if progress is None else (lambda phase, done, total: progress(f"{source.name}: {phase}", done, total))
    # The import path loads only here: the freshness check every build may run asks `syncable`
    # alone, and importing the engine cost ~4 ms of each cold start.
    from ctx.importers.engine import import_path

    try:
        report = import_path(store, root, format=source.format, progress=step)
    except (GraphBusyError, AccessRefused):
        # The whole graph is busy, or refuses this role's writes, not this source: the next
        # source would wait again, or be refused again.
        raise
    except CtxError as exc:
        return SourceResult(source.root, source.format, "failed", error=str(exc).splitlines()[0])
    return SourceResult(source.root, source.format, "changed" if report.changed else "unchanged", report)


def sync(
    store: GraphStore,
    *,
    embed: bool = True,
    only: list[Source] | None = None,
    progress: PhaseProgress | None = None,
    encoder_factory: Callable[[ModelRef], object] | None = None,
) -> SyncReport:
    """Re-import every registered source (or ``only`` these) and, if the graph has vectors,
    embed every node whose vector is missing or stale."""
    started = time.perf_counter()
    store = as_store(store)
    report = SyncReport()
    allowed, refused = syncable(store, only if only is not None else store.reader().sources())
    for source in allowed:
        report.sources.append(import_source(store, source, progress))
    report.sources += refused
    if embed:
        _embed_pending(store, report, progress, encoder_factory)
    report.seconds = time.perf_counter() - started
    return report


def syncable(store: GraphStore, sources: list[Source]) -> tuple[list[Source], list[SourceResult]]:
    """The sources ctx may re-import on its own, and a refusal for each other one.

    Raises UntrustedGraph for a graph not created by ctx on this machine (nor trusted by the user):
    it could name any folder. A project graph re-imports only the sources inside its project."""
    from ctx.trust import check_trusted, graph_file, inside, outside_message, project_root

    check_trusted(store)
    path = graph_file(store)
    project = project_root(path) if path is not None else None
    if project is None:
        return sources, []
    allowed = [s for s in sources if inside(project, Path(s.root))]
    refused = [
        SourceResult(s.root, s.format, "refused", error=outside_message(s.root, project))
        for s in sources if not inside(project, Path(s.root))
    ]
    return allowed, refused


def embed_pending(
    store: GraphStore, progress: PhaseProgress | None = None, encoder_factory: Callable[[ModelRef], object] | None = None
) -> SyncReport:
    """Bring stale or missing vectors up to date, as a report with no sources (``ctx watch``
    reports the import first, then this, which may have to load the model)."""
    report = SyncReport()
    started = time.perf_counter()
    _embed_pending(as_store(store), report, progress, encoder_factory)
    report.seconds = time.perf_counter() - started
    return report


def _embed_pending(
    store: GraphStore,
    report: SyncReport,
    progress: PhaseProgress | None,
    encoder_factory: Callable[[ModelRef], object] | None,
) -> None:
    reader = store.reader(include_private=True)
    model_name = reader.active_model()
    if model_name is None:
        return  # never embedded: similarity is not in use, and embedding is the user's choice
    report.embed_model = model_name
    if reader.embedding_status(model_name).missing == 0:
        with store.import_session() as session:
            session.prune_orphan_vectors()
        return
    from ctx.assemble.paragraph_vectors import pending
    from ctx.semantic.embedding import embed_graph
    from ctx.semantic.encoder import EmbedExtraMissing
    from ctx.semantic.models import ModelUnavailable
    from ctx.semantic.models import resolve_model

    # A graph left at ``ctx embed``'s first stage (``--fast``) stays there: a sync or a watch gives
    # new passages their static vectors in seconds and leaves the model's own to ``ctx embed``.
    at_first_stage = bool(reader.setting("embedding_first_stage"))
    try:
        embedded = embed_graph(
            store, resolve_model(model_name, stored=True), progress=progress, encoder_factory=encoder_factory,
            first_stage_only=at_first_stage, paragraphs=pending,
        )
    except EmbedExtraMissing:
        report.embed_skipped = f"vectors not updated: the embed extra is not installed ({EMBED_HINT})"
        return
    except ModelUnavailable:
        # A graph embedded on another machine, with a model this one does not have: the import
        # stands and builds say its vectors are stale. Failing the sync (exit 1) or, in `ctx
        # watch`, retrying every 2 s cannot bring the model here; only `ctx embed --model` can.
        report.embed_skipped = (
            f"vectors not updated: embedding model {model_name!r} is not on this machine;"
            " `ctx embed --model FOLDER` embeds the graph again with a local one"
        )
        return
    report.embedded = embedded.embedded
    report.passages_embedded = embedded.passages
    report.paragraphs_embedded = embedded.paragraphs


def find_source(store: GraphStore, path: str | Path) -> Source:
    """The registered source at ``path`` (or with that id); a usage error lists the others."""
    if isinstance(path, str) and not path.strip():
        # Path("") is the current folder: `ctx sources remove "$OLD"` with $OLD unset removed the
        # source the shell stood in.
        raise UsageError("give a source's path as `ctx sources` lists it (or its id), not an empty one")
    sources = as_store(store).reader().sources()
    wanted = str(Path(path).expanduser().resolve())
    for source in sources:
        if source.root == wanted:
            return source
    text = str(path)
    if text.isdigit() and not Path(text).exists():
        for source in sources:
            if source.id == int(text):
                return source
    listed = "; ".join(f"[{s.id}] {s.root}" for s in sources) or "none"
    raise UsageError(f"no source is registered at {wanted} (registered: {listed})")


def remove(store: GraphStore, path: str | Path) -> Removed:
    """Remove a registered source and everything it brought, in one transaction (the session's
    ``remove_source`` recomputes privacy: a node below a removed private one is no longer hidden)."""
    from ctx.config import privacy_rules

    store = as_store(store)
    source = find_source(store, path)
    # The rules of the sources that stay (the user's markers, plus what their projects add).
    privacy = privacy_rules([(s.id, s.root) for s in store.reader(include_private=True).sources() if s.id != source.id])
    with store.import_session() as session:
        return session.remove_source(source.id, privacy)
