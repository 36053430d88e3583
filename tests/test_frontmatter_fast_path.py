"""The markdown importer's hand-written frontmatter fast path agrees with YAML exactly.

``_simple_frontmatter`` reads the line structure of simple frontmatter itself and leaves each
scalar to PyYAML's resolver and constructors; for anything else it must say None (and the
importer falls back to the YAML loader). Hypothesis writes frontmatter from the shapes and
scalars where the two could disagree (implicit types, quotes, indicators, indentation, comments,
random text) and checks: whenever the fast path answers, the YAML loader the importer would
otherwise use gives the same data, types included.
"""

from __future__ import annotations

import pytest

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx import yaml_safe
from ctx.importers.markdown import _simple_frontmatter

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

KEYS = ["title", "tags", "aliases", "date", "a_b", "key-1", "Key", "yes", "no", "null", "on", "true",
        "1a", "_x", "é", "x y", "k"]
SCALARS = ["", " ", "plain text", "true", "True", "no", "off", "~", "null", "NULL", "12", "-3", "+4",
           "0x1F", "0o17", "017", "1_000", "3.5", "1e3", ".inf", "-.Inf", ".nan", "2024-01-05",
           "2024-13-45", "2024-01-05 10:00:00", "2024-01-05T10:00:00Z", "2024-01-05T10:00:00",
           "2024-01-05t23:59:59", "2024-02-30T10:00:00", "2024-02-29", "2023-02-29", "0000-01-01",
           "0000-01-01T00:00:00", "2024-1-5", "2024-01-05T24:00:00", "2024-01-05T10:00:00.25",
           "2024-01-05T10:00", "20240-01-05", "'quoted'", '"double"',
           "'it''s'", '"esc\\"aped"', "'unclosed", "a: b", "a:b", "a #b", "a#b", "#c", "[x]", "{y}",
           "x]", "- z", "x:", "?", ":", "%", "@x", "`x`", "!tag x", "&anchor x", "*alias", "|", ">",
           "é ü", "tab\there", "[[Wiki Link]]", "#tag", "http://x.y/z?a=b", "trailing  ", "=", "<<"]


def _items(values: list[str], indent: str) -> str:
    return "".join(f"{indent}- {v}\n" for v in values)


line = st.one_of(
    st.builds(lambda k, v: f"{k}: {v}\n", st.sampled_from(KEYS), st.sampled_from(SCALARS)),
    st.builds(lambda k, v: f"{k}:{v}\n", st.sampled_from(KEYS), st.sampled_from(SCALARS)),
    st.builds(lambda k, vs, ind: f"{k}:\n" + _items(vs, ind), st.sampled_from(KEYS),
              st.lists(st.sampled_from(SCALARS), min_size=1, max_size=3), st.sampled_from(["", "  ", "    "])),
    st.builds(lambda k: f"{k}:\n  - a\n    - b\n", st.sampled_from(KEYS)),  # uneven items
    st.sampled_from(["# a comment\n", "\n", "  indented: x\n", "nested:\n  child: x\n", "- top item\n",
                     "key: [a, b]\n", "key: >\n  folded\n", "k: v # note\n", "---\n"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20).map(lambda t: t + "\n"),
)


def typed(value: Any) -> Any:
    """Data with every scalar's type made part of it (True is not 1, 1.0 is not 1; nan equals nan)."""
    if isinstance(value, dict):
        return {typed(k): typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line, min_size=1, max_size=6).map("".join))
def test_the_fast_path_reads_what_yaml_reads_or_declines(raw: str) -> None:
    fast = _simple_frontmatter(raw)
    if fast is None:
        return  # declined: the importer uses the YAML loader itself
    assert typed(fast) == typed(yaml_safe.load(raw)), raw


@pytest.mark.parametrize("value", [v for v in SCALARS if v[:1].isdigit()])
def test_dates_read_as_yaml_reads_them(value: str) -> None:
    # Dates have a shortcut of their own past PyYAML's timestamp constructor (issue 21).
    raw = f"created: {value}\n"
    assert typed(_simple_frontmatter(raw)) == typed(yaml_safe.load(raw))


def test_the_fast_path_takes_the_common_shapes() -> None:
    raw = "title: Apollo\ntags:\n  - project\n  - launch\ndate: 2024-01-05\ndone: false\ncount: 3\n"
    assert _simple_frontmatter(raw) == yaml_safe.load(raw)
    assert _simple_frontmatter("nested:\n  child: x\n") is None
