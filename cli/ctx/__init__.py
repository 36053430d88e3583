"""ctx: build LLM context from a local knowledge graph.

The library's front door is ``ctx.Graph`` (see docs/python-api.md). Names are exported lazily, so
``import ctx`` (and every ``ctx`` command) pays only for what it uses.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not `from typing import TYPE_CHECKING`: importing typing (and re with it) costs ~20 ms before the
# console script's first line (ctx.entry) can take over Ctrl-C; type checkers read this name too.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.assemble import BuildRequest, BuildResult
    from ctx.errors import CtxError, ImportFormatError, LensError, NoGraphError, NotFoundError, UsageError
    from ctx.graph import Graph, ShownNode
    from ctx.importers.engine import ImportReport
    from ctx.semantic.embedding import EmbedReport
    from ctx.store.types import EdgeView, Node, SearchHit

# public name -> the module that defines it
_EXPORTS = {
    "Graph": "ctx.graph",
    "ShownNode": "ctx.graph",
    "BuildRequest": "ctx.assemble",
    "BuildResult": "ctx.assemble",
    "ImportReport": "ctx.importers.engine",
    "EmbedReport": "ctx.semantic.embedding",
    "SearchHit": "ctx.store.types",
    "Node": "ctx.store.types",
    "EdgeView": "ctx.store.types",
    "CtxError": "ctx.errors",
    "UsageError": "ctx.errors",
    "NotFoundError": "ctx.errors",
    "NoGraphError": "ctx.errors",
    "LensError": "ctx.errors",
    "ImportFormatError": "ctx.errors",
}

__all__ = [
    "BuildRequest", "BuildResult", "CtxError", "EdgeView", "EmbedReport", "Graph", "ImportFormatError",
    "ImportReport", "LensError", "NoGraphError", "Node", "NotFoundError", "SearchHit", "ShownNode",
    "UsageError", "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctx' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
