"""Block references shown as what they refer to: Roam's and Logseq's ``((uid))``.

An outliner block may be nothing but ``((K9DHGYKLx))``: the reference is opaque to a reader (and to
a model), while the block it names holds the text. Every output shows a reference as that text
with the page it sits on, read when the text is shown (the store keeps what the note says):

* ``((uid))`` -> ``referenced text (in Page)``;
* ``[label](((uid)))`` (a labelled reference) -> ``label (in Page)``;
* ``{{embed ((uid))}}`` / ``{{embed: ((uid))}}`` -> the referenced text (in Page).

A reference to a block this reader may not see (private), or that the graph does not hold, stays
as written. References inside the referenced text are resolved too, a few levels deep and never
around a cycle. Code is left alone (``ctx.code_spans``): there ``((uid))`` is an example.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctx.code_spans import outside_code

if TYPE_CHECKING:
    from ctx.assemble.candidate import Candidate

# Roam uids are 9 characters, Logseq's are uuids; the importers use the same pattern.
_UID = r"[A-Za-z0-9_-]{6,64}"
_REF = re.compile(
    r"\{\{\s*(?:\[\[)?embed(?:-path)?(?:\]\])?\s*:?\s*\(\((" + _UID + r")\)\)\s*\}\}"  # an embed
    r"|\[([^\[\]\n]*)\]\(\(\((" + _UID + r")\)\)\)"  # [label](((uid)))
    r"|\(\((" + _UID + r")\)\)"  # ((uid))
)
MAX_DEPTH = 3
# A referenced block can be long; inline it is a quotation, not a second copy of the note.
MAX_CHARS = 400

# ids -> {id: (text, page title)} for those the reader may see (``GraphReader.block_texts``).
Lookup = Callable[[list[str]], dict[str, tuple[str, str]]]


def has_refs(text: str) -> bool:
    return "((" in text and _REF.search(text) is not None


def referenced_ids(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) or m.group(3) or m.group(4) for m in _REF.finditer(text)))


def resolve_candidates(candidates: "list[Candidate]", lookup: Lookup, *, bodies: bool) -> None:
    """Titles (and, with ``bodies``, loaded bodies) of ``candidates`` as shown, in one pass."""
    titled = [c for c in candidates if has_refs(c.title)]
    if titled:
        from ctx.importers.outline_text import title_from

        for c, text in zip(titled, resolve([c.title for c in titled], lookup)):
            c.title = title_from(text) or c.title
    if bodies:
        with_refs = [c for c in candidates if c.body and has_refs(c.body)]
        for c, text in zip(with_refs, resolve([c.body or "" for c in with_refs], lookup)):
            c.body = text


def resolve(texts: list[str], lookup: Lookup) -> list[str]:
    """``texts`` with every block reference shown as its text and page (one lookup per level)."""
    known: dict[str, tuple[str, str]] = {}
    wanted = {uid for t in texts if has_refs(t) for uid in referenced_ids(t)}
    for _ in range(MAX_DEPTH):
        wanted -= set(known)
        if not wanted:
            break
        found = lookup(sorted(wanted))
        known.update(found)
        wanted = {uid for text, _ in found.values() if has_refs(text) for uid in referenced_ids(text)}
    return [_shown(t, known, 0, ()) if has_refs(t) else t for t in texts]


def _shown(text: str, known: dict[str, tuple[str, str]], depth: int, path: tuple[str, ...]) -> str:
    def one(m: re.Match[str]) -> str:
        uid = m.group(1) or m.group(3) or m.group(4)
        target = known.get(uid)
        if target is None or uid in path:
            return m.group(0)  # not visible, not in the graph, or a cycle: as written
        body, page = target
        label = m.group(2)
        if label is not None and label.strip():
            shown = label.strip()
        else:
            inner = _shown(body, known, depth + 1, (*path, uid)) if depth + 1 < MAX_DEPTH and has_refs(body) else body
            shown = " ".join(inner.split())
            if len(shown) > MAX_CHARS:
                shown = shown[: MAX_CHARS - 1].rstrip() + "…"
        # The page is named once, for the outermost reference.
        return f"{shown} (in {page})" if page and depth == 0 else shown

    return outside_code(text, lambda part: _REF.sub(one, part) if "((" in part else part)
