"""Heading lines found by one scan of a text without fences are the lines the per-line reading
finds (``passages._heading_lines``): same indexes, levels and texts, on real notes and on texts
made of the characters that decide it (hashes, spaces, tabs, carriage returns, backticks)."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctx.passages import _HEADING, NODE_HEADING_LEVEL, _heading_lines, nest_headings, top_heading_level

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT.parent / "shared" / "corpora"


def _per_line(text: str) -> list[tuple[int, int, str]]:
    """Every line matched alone, as the reading inside fences does (no fence here)."""
    out = []
    for i, line in enumerate(text.split("\n")):
        m = _HEADING.match(line)
        if m:
            out.append((i, len(m.group(1)), m.group(2).strip()))
    return out


def _notes() -> list[str]:
    paths = sorted((ROOT / "fixtures").rglob("*.md"))
    if CORPORA.is_dir():
        paths += sorted(CORPORA.rglob("*.md"))[:3000]
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


def test_real_notes_without_fences_give_the_per_line_headings():
    notes = [t for t in _notes() if "```" not in t and "~~~" not in t]
    with_headings = [t for t in notes if _per_line(t)]
    assert len(with_headings) >= 5  # the demo vault's notes have headings
    for text in notes:
        assert list(_heading_lines(text)) == _per_line(text)
        for variant in (text.replace("\n", "\r\n"), text.replace("\n", "\n\n"), "\n" + text + "\n"):
            assert list(_heading_lines(variant)) == _per_line(variant)


LINE = st.text(alphabet=st.sampled_from(list("#  \t\rab1é`~-*.\u2028\x0b\x0c")), max_size=14)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINE, max_size=12))
def test_made_up_texts_give_the_per_line_headings(lines):
    text = "\n".join(lines)
    assume("```" not in text and "~~~" not in text)  # a fence: the per-line reading itself answers
    assert list(_heading_lines(text)) == _per_line(text)


def test_nesting_uses_the_same_lines():
    text = "intro\n# Top\nbody\n  ## Sub ##\n\tnot a heading\n#no space\n### Deep   \n"
    assert top_heading_level(text) == 1
    assert nest_headings(text) == "intro\n#### Top\nbody\n##### Sub\n\tnot a heading\n#no space\n###### Deep\n"
    assert re.search(r"^#{4} Top$", nest_headings(text), re.M)


def _nested_per_line(text: str, top: int | None) -> str:
    """``nest_headings`` as the line-by-line rewrite defines it (split at "\\n", each heading line
    replaced, joined again), over the per-line headings; no fence in ``text``."""
    found = _per_line(text) if "#" in text else []
    top = min((level for _, level, _ in found), default=None) if top is None else top
    if top is None or NODE_HEADING_LEVEL + 1 - top <= 0:
        return text
    lines = text.split("\n")
    for i, level, heading in found:
        lines[i] = "#" * min(level + NODE_HEADING_LEVEL + 1 - top, 6) + " " + heading
    return "\n".join(lines)


def test_real_notes_nest_and_level_as_the_line_by_line_rewrite():
    """The one-scan nesting and shallowest level (texts without fences) against the line-by-line
    definition: every real note, with CRLF, doubled breaks and outer breaks, at every given level."""
    notes = [t for t in _notes() if "```" not in t and "~~~" not in t]
    changed = 0
    for text in notes:
        for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", "\n\n"), "\n" + text + "\n"):
            levels = [level for _, level, _ in _per_line(variant)]
            assert top_heading_level(variant) == (min(levels) if levels and "#" in variant else None)
            for top in (None, 1, 2, 3, 4, 5):
                nested = nest_headings(variant, top)
                assert nested == _nested_per_line(variant, top)
                changed += nested != variant
    assert changed >= 5  # the demo vault's headings do move


@settings(max_examples=600, deadline=None)
@given(st.lists(LINE, max_size=12), st.sampled_from([None, 1, 2, 3, 4, 6]))
def test_made_up_texts_nest_as_the_line_by_line_rewrite(lines, top):
    text = "\n".join(lines)
    assume("```" not in text and "~~~" not in text)
    levels = [level for _, level, _ in _per_line(text)]
    assert top_heading_level(text) == (min(levels) if levels and "#" in text else None)
    assert nest_headings(text, top) == _nested_per_line(text, top)


def test_fenced_texts_keep_the_per_line_reading():
    text = "# Top\n```\n# not a heading\n```\n## Sub\n~~~\n### no\n~~~\n"
    assert top_heading_level(text) == 1
    assert nest_headings(text) == "#### Top\n```\n# not a heading\n```\n##### Sub\n~~~\n### no\n~~~\n"
    assert nest_headings(text, 2) == "### Top\n```\n# not a heading\n```\n#### Sub\n~~~\n### no\n~~~\n"
