"""Build manifests: a context's id, and what it showed, kept so a later build can diff against it.

Every build has an id (``c-`` and twelve decimal digits) derived from what decides its text: the
topics, lens (its whole definition), depth, budget, encoding, format and fields, the reader's
visibility, the graph's version and the state of its vectors. It is known before packing (the
header shows it, so its cost is counted like every other header word) and the same inputs give
the same id on any machine and engine. After packing, the manifest lists each node shown, with
a digest of its title, type, tags and fields, and the content hash of every passage it showed;
the store keeps it under the id and its key (topics, lens, depth, budget, encoding), the last
few per key (config ``contexts.keep``), without ever making the build wait (``remember_context``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ctx.assemble.document import FULL
from ctx.digest import sha256

if TYPE_CHECKING:
    from ctx.assemble.pipeline import Build
    from ctx.assemble.document import Document
    from ctx.lenses import Lens
    from ctx.store.protocols import GraphReader

ID_PREFIX = "c-"
# Decimal digits: the encodings split digits into runs of up to three, each one token, so every
# id costs the same tokens (a hex id's count varies with its letters, and a build's packing with it).
ID_DIGITS = 12
LAST = "last"
_ID_PATTERN = re.compile(r"c-[0-9]{%d}" % ID_DIGITS)


def is_context_id(text: str) -> bool:
    return bool(_ID_PATTERN.fullmatch(text))


def _digest(value: Any, size: int = 16) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return sha256(text.encode("utf-8")).hexdigest()[:size]


def key_of(build: Build) -> dict[str, Any]:
    """What makes two builds the same question: ``--since last`` compares with the newest of it."""
    return {
        "topics": list(build.topics),
        "lens": build.lens.name,
        "depth": build.depth,
        "max_tokens": build.request.max_tokens,
        "encoding": build.request.encoding,
    }


def key_digest(key: dict[str, Any]) -> str:
    return _digest(key, 24)


def stored_key(key: dict[str, Any], fmt: str) -> str:
    """The key a manifest is kept under: its build's key and format. A JSON context packs fewer
    nodes than a markdown one in the same budget (and shows other passages of them), so a diff
    across formats counted as "dropped out: no room" nodes the reader's own format had room for:
    ``--since last`` compares with the newest context of the same format (an id names any)."""
    return key_digest({**key, "format": fmt})


# Each lens's digest (``_lens_digest``) by the lens's whole text (``Lens.as_key``): a warm process
# builds with the same few lens objects call after call.
_LENS_DIGESTS: dict[str, str] = {}
MAX_LENS_DIGESTS = 64


def _lens_digest(lens: Lens) -> str:
    """What the lens does, not where its file lives: its text without its path and source."""
    key = lens.as_key()
    digest = _LENS_DIGESTS.get(key)
    if digest is None:
        digest = sha256(repr(replace(lens, path="", source="")).encode("utf-8")).hexdigest()
        if len(_LENS_DIGESTS) >= MAX_LENS_DIGESTS:
            _LENS_DIGESTS.clear()
        _LENS_DIGESTS[key] = digest
    return digest


def context_id(graph: GraphReader, build: Build) -> str:
    """The id of the context ``build`` will give: a digest of everything that decides its text."""
    fresh = build.request.freshness
    version = fresh.graph_version if fresh is not None else graph.graph_version()
    state: dict[str, Any] = {
        "key": key_of(build),
        "format": build.request.format,
        "fields": build.request.include_fields,
        "private": graph.include_private,
        # What the lens does, not where its file lives: the same lens installed or copied
        # elsewhere (another checkout, another user's folder) names the same context.
        "lens": _lens_digest(build.lens),
        "graph": version,
        # ``ctx embed`` does not bump the graph's version, but vectors change rankings: the model
        # in use, and below how many nodes lack a current vector.
        "vectors": graph.active_model(),
    }
    if fresh is not None and (fresh.pending or fresh.vectors_stale or fresh.vectors_missing or fresh.sync_skipped):
        # What a stale graph's header says (not the last-sync time, which a sync that changed
        # nothing moves); a fresh graph's context is the same whoever measured that.
        state["fresh"] = [list(fresh.pending), fresh.vectors_stale, fresh.vectors_missing, fresh.sync_skipped]
    return ID_PREFIX + f"{int(_digest(state, 16), 16) % 10**ID_DIGITS:0{ID_DIGITS}d}"


def reading_order(doc: Document) -> list[Any]:
    """The items ``doc`` shows, in the order the output prints them."""
    return [item for section in doc.sections for item in doc.order(section)]


def node_meta_digest(title: str, ntype: str, tags: list[str], fields: dict[str, list[str]]) -> str:
    return _digest([title, ntype, sorted(tags), {k: list(v) for k, v in sorted(fields.items())}])


def manifest_of(graph: GraphReader, build: Build, doc: Document) -> dict[str, Any]:
    """What the packed ``doc`` shows: each node (reading order) with the content hash of each
    passage it shows whole (all of a node shown in full, those chosen when shown by passages,
    those a cut node shows entirely), and the nodes listed as one-line summaries."""
    shown = reading_order(doc)
    from ctx.assemble import warm

    stored = warm.passages_of(graph, [i.cand.id for i in shown])
    nodes = []
    for item in shown:
        c = item.cand
        rows = stored.get(c.id, [])
        if item.compact:
            passages = {}  # its title alone
        elif item.passages is not None:
            # A passage shown as its core only is not seen whole: shown later, it is new.
            wanted = set(item.passages) - set(item.cores)
            passages = {str(p.ord): p.hash[:16] for p in rows if p.ord in wanted}
        elif item.variant == FULL:
            passages = {str(p.ord): p.hash[:16] for p in rows}
        else:
            # Cut: only the passages whose whole text it shows count as seen (one cut in the
            # middle, when shown later, is new to the reader).
            passages = {str(p.ord): p.hash[:16] for p in rows if p.text.strip() and p.text.strip() in item.text}
        nodes.append({
            "id": c.id,
            "title": c.title,
            "meta": node_meta_digest(c.title, c.type, c.tags, c.fields),
            "text": _digest(item.text),
            "passages": passages,
        })
    return {
        "id": build.meta["context"],
        "key": key_of(build),
        "format": build.request.format,
        "graph_version": build.request.freshness.graph_version if build.request.freshness else graph.graph_version(),
        "nodes": nodes,
        "also": [{"id": i.cand.id, "title": i.cand.title} for i in sorted(doc.also, key=lambda i: i.cand.rank)],
    }


def record(graph: GraphReader, manifest: dict[str, Any]) -> bool:
    """Keep ``manifest`` in the graph (best effort: False when the graph could not take it now)."""
    from ctx.config import load_settings

    settings = load_settings()
    text = json.dumps(manifest, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return graph.remember_context(
        manifest["id"], stored_key(manifest["key"], manifest["format"]), int(manifest["graph_version"]), text,
        keep=settings.contexts_keep, keep_total=settings.contexts_keep_total,
    )


def recorded(graph: GraphReader, since: str, key: dict[str, Any], fmt: str) -> dict[str, Any] | None:
    """The manifest ``since`` names (``last``: the newest with ``key`` in format ``fmt``), or None."""
    found = graph.recorded_context(None if since == LAST else since, stored_key(key, fmt))
    if found is None:
        return None
    try:
        manifest = json.loads(found[1])
    except ValueError:
        return None
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("nodes"), list) else None
