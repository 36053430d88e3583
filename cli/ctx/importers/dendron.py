"""Dendron vaults: the markdown importer with Dendron's naming and link conventions.

* The hierarchy lives in file names: ``a.b.c.md`` is a child of ``a.b`` (``child`` edge
  parent -> child). Levels without a file (``a.b`` when only ``a.b.c.md`` exists) become
  ``stub`` nodes so the tree has no holes. ``root.md`` is not made the parent of the top-level
  domains: that would put every domain two hops from every other one.
* The node id is the hierarchy name (``a.b.c``); Dendron's own frontmatter ``id`` is kept as an
  extra name so references by id still resolve.
* ``[[shown|note.name]]`` puts the display text first; ``dendron://vault/`` prefixes are dropped.
* ``created``/``updated`` are epoch milliseconds (``parse_date`` reads them).
* ``#role.x`` tags may contain dots; a tag whose ``tags.<x>`` note exists is also linked to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.importers.base import EdgeRecord, NodeRecord, ParsedFile
from ctx.importers.markdown import WEB_ADDRESS, MarkdownImporter, normalize

if TYPE_CHECKING:
    from ctx.store.protocols import SourceRecords

DENDRON_URL_PREFIX = "dendron://"


class DendronImporter(MarkdownImporter):
    format = "dendron"
    tag_chars = r"\w/.\-"

    @classmethod
    def detect(cls, path: Path) -> int:
        if not path.is_dir():
            return 0
        if (path / "dendron.yml").is_file() or (path / "dendron.code-workspace").is_file():
            return 95
        if (path / "root.md").is_file() and (path / "root.schema.yml").is_file():
            return 85
        return 0

    def note_id(self, relpath: str) -> str:
        # The hierarchy name is the identity; the vault folder it sits in is not part of it.
        return super().note_id(relpath).rsplit("/", 1)[-1]

    def note_keys(self, relpath: str, node_id: str) -> list[tuple[str, str, int]]:
        return [(normalize(node_id), "path", 0)]

    def default_title(self, node_id: str) -> str:
        return node_id.rsplit(".", 1)[-1]

    def split_wikilink(self, inner: str) -> tuple[str, str | None]:
        shown, bar, target = inner.partition("|")
        if not bar:
            return inner, None
        return target, shown.strip() or None

    def wikilink_key(self, target: str) -> str | None:
        target = target.strip()
        if target.startswith(DENDRON_URL_PREFIX):
            # dendron://<vault>/<note>: cross-vault syntax; names are unique across our import.
            target = target[len(DENDRON_URL_PREFIX):].partition("/")[2]
        elif WEB_ADDRESS.match(target):
            return None
        if target.lower().endswith(".md"):
            target = target[:-3]
        return normalize(target) or None

    def adjust_node(self, node: NodeRecord, meta: dict[str, Any]) -> None:
        dendron_id = meta.get("id")
        if isinstance(dendron_id, str) and dendron_id.strip():
            node.keys.append((normalize(dendron_id), "dendron-id", 5))
        node.fields.pop("id", None)  # an opaque random string: noise in any context
        if "desc" in node.fields and node.fields["desc"] == [""]:
            node.fields.pop("desc")
        parent = parent_name(node.id)
        if parent is not None:
            node.parent_id = parent

    def structure_edges(self, node: NodeRecord) -> list[EdgeRecord]:
        if node.parent_id is None:
            return []
        return [EdgeRecord(node.parent_id, "child", node.id, by_id=True)]

    def finalize(self, source: SourceRecords) -> ParsedFile:
        """Stub nodes for missing hierarchy levels, and links from tagged notes to tag notes."""
        out = ParsedFile()
        rows = source.file_nodes()
        names = {r[0] for r in rows}
        stubs: set[str] = set()
        for name in names:
            parent = parent_name(name)
            while parent is not None and parent not in names and parent not in stubs:
                stubs.add(parent)
                parent = parent_name(parent)
        for stub in sorted(stubs):
            out.nodes.append(
                NodeRecord(id=stub, title=self.default_title(stub), type="stub",
                           parent_id=parent_name(stub), keys=[(normalize(stub), "path", 0)])
            )
            grandparent = parent_name(stub)
            if grandparent is not None:
                out.edges.append(EdgeRecord(grandparent, "child", stub, by_id=True))
        lowered = {n.lower(): n for n in names}
        for node_id, tags in rows:
            for tag in tags:
                tag_note = lowered.get(f"tags.{tag}".lower())
                if tag_note is not None and tag_note != node_id:
                    out.edges.append(EdgeRecord(node_id, "link", tag_note, by_id=True, label=f"#{tag}"))
        return out


def parent_name(name: str) -> str | None:
    """``a.b.c`` -> ``a.b``; top-level names (and ``root``) have no parent."""
    parent, dot, _ = name.rpartition(".")
    return parent if dot and parent else None
