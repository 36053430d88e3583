"""The front door of ctx as a library: one knowledge-graph file and what you can do with it.

    from ctx import Graph

    with Graph.open("notes.db", create=True) as graph:
        graph.import_path("~/Obsidian/Vault")
        print(graph.build("Project Apollo", lens="planning", max_tokens=2000).text)

The CLI and the MCP server are clients of this class: the same arguments give the same bytes.
Nothing heavy is imported until a method needs it (the tokenizer on the first build, the
embedding model only in ``embed``), so opening a graph costs a file open. See docs/python-api.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctx.assemble import BuildRequest, BuildResult
    from ctx.importers.engine import ImportReport, ProgressFn
    from ctx.semantic.embedding import EmbedReport, Progress
    from ctx.store.protocols import GraphReader, GraphStore
    from ctx.store.types import EdgeView, Node, SearchHit


@dataclass(frozen=True)
class ShownNode:
    """One node with its edges both ways, as ``ctx show`` prints it."""

    node: Node
    edges: list[EdgeView]


class Graph:
    """A ctx graph file (SQLite), opened for one reader.

    ``include_private``: whether this reader may see nodes marked private (withheld by default from
    every method's results). It is the handle's property, fixed when the graph is opened.
    """

    def __init__(self, path: str | Path, *, create: bool = False, include_private: bool = False) -> None:
        from ctx.paths import is_db_url
        from ctx.store import open_store

        # A postgresql:// URL names a team graph (docs/team.md); anything else is a file.
        self.path: Path | str = path if is_db_url(path) else Path(path).expanduser()
        self.include_private = include_private
        self.store: GraphStore = open_store(self.path, create=create)

    @property
    def reader(self) -> GraphReader:
        """What this reader may see of the graph now (a fresh view: nothing cached across imports)."""
        return self.store.reader(include_private=self.include_private)

    @classmethod
    def open(cls, path: str | Path, *, create: bool = False, include_private: bool = False) -> Graph:
        """Open the graph at ``path``; NoGraphError if it does not exist (unless ``create``)."""
        return cls(path, create=create, include_private=include_private)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        from ctx.paths import shown

        return f"Graph({shown(self.path)!r})"

    # -- writing ---------------------------------------------------------------------------------

    def import_path(self, path: str | Path, *, format: str = "auto", progress: ProgressFn | None = None) -> ImportReport:
        """Import a vault folder, outline export or JSON graph, incrementally, in one transaction."""
        from ctx.importers.engine import import_path

        return import_path(self.store, path, format=format, progress=progress)

    def embed(
        self, model: str | None = None, *, batch_size: int = 32, progress: Progress | None = None,
        fast: bool = False,
    ) -> EmbedReport:
        """Vectors for every node whose content changed (needs the ``embed`` extra): static
        vectors for passages first, then the model's own; ``fast`` stops after the static stage
        (questions are then ranked by candidates: ``ctx.semantic.two_stage``)."""
        from ctx.assemble.paragraph_vectors import pending
        from ctx.semantic.embedding import embed_graph
        from ctx.semantic.models import resolve_model

        return embed_graph(
            self.store, resolve_model(model), batch_size=batch_size, progress=progress, first_stage_only=fast,
            paragraphs=pending,
        )

    # -- reading ---------------------------------------------------------------------------------

    def build(self, topics: str | list[str] | tuple[str, ...] | BuildRequest, **options: Any) -> BuildResult:
        """The context for ``topics`` (ids, titles, aliases or free text) within an exact budget.

        ``options`` are BuildRequest's fields: lens, depth, max_tokens, format, include_fields,
        encoding, explain. Or pass a BuildRequest. ``result.text`` is what ``ctx build`` prints;
        ``result.found`` is False when no topic matched (the CLI's exit code 3).
        """
        from ctx.assemble import BuildRequest, build_context
        from ctx.errors import UsageError

        if isinstance(topics, BuildRequest):
            if options:
                raise UsageError("pass either a BuildRequest or options, not both")
            request = topics
        else:
            if "include_private" in options:
                raise UsageError("include_private is the graph's setting: Graph.open(..., include_private=True)")
            request = BuildRequest(topics=(topics,) if isinstance(topics, str) else tuple(topics), **options)
        if request.freshness is None:
            # The assembler prints freshness but cannot work it out (it needs the importers to
            # stat the sources): the library does, for every caller that did not.
            from dataclasses import replace

            from ctx.freshness import graph_freshness, last_refresh

            freshness = graph_freshness(self.store, last_refresh(), include_private=self.include_private)
            request = replace(request, freshness=freshness)
        return build_context(self.store, request, include_private=self.include_private)

    def search(self, query: str, *, limit: int = 20) -> list[SearchHit]:
        """Full-text (BM25) hits for any text, best first; private nodes only if this reader may see them."""
        if not query.strip():
            # As `build ""` is: an empty query is a mistake, not a search that found nothing.
            from ctx.errors import UsageError

            raise UsageError("give some text to search for")
        from ctx.stopwords import only_function_words, only_function_words_message

        common = only_function_words(query)
        if common and self.reader.resolve_one(query) is None:
            # BM25 over words nearly every note holds ranks noise ("how do I" found notes for
            # their "do"); a note named by exactly these words ("The Who") is still searched for.
            from ctx.errors import UsageError

            raise UsageError(only_function_words_message(query, common))
        return self.reader.search(query, limit=limit)

    def show(self, node: str) -> ShownNode:
        """One node by id, exact title or alias, with its edges; NotFoundError if there is none."""
        from ctx.errors import NotFoundError, UsageError

        if not node.strip():
            raise UsageError("give a node id, title or alias")
        node_id = self.reader.resolve_one(node)
        found = self.reader.node(node_id) if node_id else None
        if found is None:
            # The same words whether or not a private node answers to the name: saying so would
            # tell a reader without access that a private note of that title exists. The titles
            # suggested are visible ones.
            from ctx.assemble.suggest import close_titles

            meant = close_titles(self.reader, node)
            suffix = "; did you mean " + " or ".join(repr(t) for t in meant) + "?" if meant else ""
            raise NotFoundError(f"no node with id, title or alias {node!r}{suffix}")
        return ShownNode(found, self.reader.edges_of(found.id))

    def stats(self) -> dict[str, Any]:
        """Counts of nodes and edges by type, unresolved links, private nodes, sources, last import."""
        return self.reader.stats()
