"""Importers: one module per source format, all producing the same node/edge records."""

from __future__ import annotations

import importlib

from ctx.errors import UsageError
from ctx.importers.base import Importer

# format name -> "module:Class"; modules are imported only when needed.
REGISTRY: dict[str, str] = {
    "obsidian": "ctx.importers.markdown:ObsidianImporter",
    "foam": "ctx.importers.markdown:FoamImporter",
    "dendron": "ctx.importers.dendron:DendronImporter",
    "logseq": "ctx.importers.logseq:LogseqImporter",
    "roam": "ctx.importers.roam:RoamImporter",
    "tana": "ctx.importers.tana:TanaImporter",
    "notion": "ctx.importers.notion:NotionImporter",
    "json": "ctx.importers.jsongraph:JsonGraphImporter",
}

FORMATS = ("auto", *REGISTRY)


def importer_class(fmt: str) -> type[Importer]:
    module_name, _, class_name = REGISTRY[fmt].partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, class_name)


def available_formats() -> list[str]:
    """Formats whose importer module exists in this build."""
    out = []
    for fmt in REGISTRY:
        try:
            importer_class(fmt)
        except (ImportError, AttributeError):
            continue
        out.append(fmt)
    return out


def get_importer(fmt: str) -> Importer:
    if fmt not in REGISTRY:
        raise UsageError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    try:
        return importer_class(fmt)()
    except (ImportError, AttributeError):
        raise UsageError(f"format {fmt!r} is not supported by this build") from None
