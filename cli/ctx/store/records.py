"""What the store writes: node and edge records, as every importer produces them.

Importers are pure parsers that turn source files into these records; ``ctx.store.writes`` puts
them into the graph (ids made unique, names registered as keys, tags turned into tag nodes,
links resolved), so every format gets the same guarantees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ctx.digest import blake2b


@dataclass
class NodeRecord:
    id: str
    title: str
    body: str = ""
    type: str = "note"
    tags: list[str] = field(default_factory=list)
    # name -> values; a single value is still a one-element list, so consumers never branch.
    fields: dict[str, list[str]] = field(default_factory=dict)
    aliases: list[str] = field(default_factory=list)
    source_path: str | None = None
    parent_id: str | None = None
    position: int | None = None
    created: float | None = None  # epoch seconds, UTC; None -> the file's mtime
    updated: float | None = None
    # Extra names this node answers to, as (normalized key, kind, priority); lower priority wins
    # when two nodes share a key. id, title and aliases are added by the store.
    keys: list[tuple[str, str, int]] = field(default_factory=list)
    # Whether ``[[title]]`` links may resolve to this node. Outline blocks say False: their
    # "title" is just their first line, and a page link must not land on a block that happens
    # to start with the page's name.
    title_is_key: bool = True


@dataclass
class EdgeRecord:
    src: str
    type: str  # canonical direction: child, link, embed, tag, field:<name>, supports, ...
    target: str  # a node id (by_id=True) or a normalized key resolved against node_keys
    by_id: bool = False
    label: str | None = None
    position: int | None = None


# What ``json.dumps(..., ensure_ascii=False, sort_keys=True)`` makes, without a new encoder per
# call (an import hashes every node).
_HASHED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def content_hash(node: NodeRecord) -> str:
    """What a node says, hashed: a changed hash makes its stored vector stale."""
    payload = _HASHED_JSON.encode([node.title, node.body, node.type, node.tags, node.fields, node.aliases])
    return blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


def tag_node_id(tag: str) -> str:
    return f"tag:{tag.strip().lstrip('#').lower()}"
