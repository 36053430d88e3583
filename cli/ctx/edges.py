"""Edge names: the one table of canonical edge types and the names of walking them backwards.

Edges are stored once, in their canonical direction (``child``: parent -> child, ``link``, ``embed``,
``tag``: note -> tag node, ``ref``, ``supports``: supporter -> supported, ``field:<name>``). Walking an
edge backwards has its own name: ``parent``, ``backlink``, ... A field edge walked backwards is
``field:<name>^-1``; any other type ``<type>_of``. Lenses, the walk, ``ctx show`` and the tree
layout's relation lines all name edges through these functions, so they cannot disagree.
"""

from __future__ import annotations

# canonical type -> its name when walked backwards (against the stored direction)
INVERSE_OF: dict[str, str] = {
    "child": "parent",
    "link": "backlink",
    "embed": "embedded_by",
    "tag": "tagged",
    "supports": "supported_by",
    "ref": "referenced_by",
}
# an inverse name -> the canonical type it walks backwards
CANONICAL_OF: dict[str, str] = {inverse: canonical for canonical, inverse in INVERSE_OF.items()}

FIELD_PREFIX = "field:"
FIELD_INVERSE_SUFFIX = "^-1"
CUSTOM_INVERSE_SUFFIX = "_of"


def walked_name(canonical: str, direction: str) -> str:
    """The name of walking ``canonical`` in ``direction``: ("link", "out") -> link, ("link", "in") -> backlink."""
    if direction == "out":
        return canonical
    if canonical in INVERSE_OF:
        return INVERSE_OF[canonical]
    if canonical.startswith(FIELD_PREFIX):
        return canonical + FIELD_INVERSE_SUFFIX
    return canonical + CUSTOM_INVERSE_SUFFIX


def reversed_name(canonical: str, direction: str) -> str:
    """How the node at the far end names the same edge: walking ``supported_by`` to X means X ``supports`` us."""
    return walked_name(canonical, "in" if direction == "out" else "out")


def canonical_and_direction(name: str) -> tuple[str, str]:
    """The stored type and direction a name walks: backlink -> (link, in), field:owner^-1 -> (field:owner, in).

    A name that is neither an inverse name nor an inverted field is a canonical type walked out
    (``<type>_of`` is not parsed back: ``part_of`` may well be a canonical type of its own).
    """
    if name in CANONICAL_OF:
        return CANONICAL_OF[name], "in"
    if name.startswith(FIELD_PREFIX) and name.endswith(FIELD_INVERSE_SUFFIX):
        return name[: -len(FIELD_INVERSE_SUFFIX)], "in"
    return name, "out"
