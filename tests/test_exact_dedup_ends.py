"""Exact duplicates found with a text normalised only where an earlier one shares its first and last
word (``dedup._exact_duplicates``) are the ones the hash of every normalised text finds: the same
ids, each naming the same kept copy, on real notes copied with their case and spacing changed and
on made-up texts whose words and spaces collide on purpose (casefolding that changes a word's
length, spaces Unicode calls spaces, protected seeds, empty texts)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.assemble.dedup import Duplicate, find_duplicates

ROOT = Path(__file__).resolve().parent.parent


def _by_hash(items: list[tuple[str, str]], protected: frozenset[str]) -> dict[str, Duplicate]:
    """Seed 004's exact rule written out: a text whose normalised form (casefolded, runs of white
    space as one space) an earlier kept text has is a copy of the first of those."""
    found: dict[str, Duplicate] = {}
    first: dict[str, str] = {}
    for item_id, text in items:
        flat = " ".join((text or "").casefold().split())
        if not flat:
            continue
        if flat in first and item_id not in protected:
            found[item_id] = Duplicate(item_id, first[flat], "exact", 1.0)
            continue
        first.setdefault(flat, item_id)
    return found


def test_real_notes_copied_give_the_same_duplicates():
    bodies = [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "fixtures").rglob("*.md"))]
    assert len(bodies) >= 20
    items: list[tuple[str, str]] = []
    for i, body in enumerate(bodies):
        items.append((f"n{i}", body))
        if i % 3 == 0:
            items.append((f"c{i}", "  " + body.upper().replace(" ", "\t ") + "\n"))  # the same text
        if i % 4 == 0:
            items.append((f"d{i}", body + " extra"))  # the same first word, another text
    protected = frozenset(item_id for item_id, _ in items[::7])
    found = find_duplicates(items, exact=True, near=False, protected=protected)
    assert found == _by_hash(items, protected)
    assert len(found) >= 5


WORD = st.sampled_from(["a", "A", "b", "ß", "ss", "SS", "ﬁ", "fi", "İ", "i̇", "x"])
SPACE = st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\r\n"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORD, max_size=4))
    parts = [draw(SPACE) if draw(st.booleans()) else ""]
    for w in words:
        parts += [w, draw(SPACE)]
    return "".join(parts[:-1] if words and draw(st.booleans()) else parts)


@settings(max_examples=500, deadline=None)
@given(st.lists(texts(), max_size=14), st.sets(st.integers(0, 13), max_size=4))
def test_made_up_texts_give_the_same_duplicates(bodies, seeds):
    items = [(f"n{i}", text) for i, text in enumerate(bodies)]
    protected = frozenset(f"n{i}" for i in seeds)
    assert find_duplicates(items, exact=True, near=False, protected=protected) == _by_hash(items, protected)
