"""Test-side reading of outliner inline syntax, written apart from ctx's own parser on purpose:
the importer tests compare ctx's counts against what these few regexes find in the raw files."""

from __future__ import annotations

import re
from collections import Counter

CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
EMBED = re.compile(r"\{\{\s*(?:\[\[)?embed(?:-path)?(?:\]\])?\s*:?(.*?)\}\}", re.IGNORECASE)
ATTRIBUTE = re.compile(r"^\s*([^\s:`\[\]][^:`\[\]]*?)::(.*)$")
PAGE = re.compile(r"\[\[([^\[\]]+?)\]\]")
BRACKET_TAG = re.compile(r"#\[\[([^\[\]]+?)\]\]")
BLOCK = re.compile(r"\(\(([A-Za-z0-9_-]{6,64})\)\)")
WORD_TAG = re.compile(r"(?<![\w#/&])#([^\s#\[\]()\"',;.!?:{}]+)")


def references(text: str) -> dict[str, list[str]]:
    """Distinct references of one block's text: link, ref, embed_block, embed_page, tag."""
    text = CODE.sub(" ", text)
    embedded = EMBED.findall(text)
    text = EMBED.sub(" ", text)
    tags = BRACKET_TAG.findall(text)
    text = BRACKET_TAG.sub(" ", text)
    links = [n.strip() for n in PAGE.findall(text)]
    tags += [t for t in WORD_TAG.findall(PAGE.sub(" ", text)) if not t.isdigit()]
    unique = lambda items: list(dict.fromkeys(items))  # noqa: E731
    return {
        "link": unique(links),
        "ref": unique(BLOCK.findall(text)),
        "embed_block": unique(m for inner in embedded for m in BLOCK.findall(inner)),
        "embed_page": unique(m for inner in embedded for m in PAGE.findall(inner)),
        "tag": unique(t.strip().lower() for t in tags),
    }


def attribute_targets(value: str) -> list[str]:
    """Pages an attribute value names: [[x]], #[[x]] and #x (not inside code)."""
    value = CODE.sub(" ", value)
    names = PAGE.findall(value) + [
        t for t in WORD_TAG.findall(PAGE.sub(" ", value)) if not t.isdigit()
    ]
    return list(dict.fromkeys(n.strip() for n in names))


def edge_counts(kinds: dict[str, list[str]]) -> Counter[str]:
    """Edges per stored type (both kinds of embed are ``embed`` edges)."""
    counts: Counter[str] = Counter()
    for kind, items in kinds.items():
        counts[kind.split("_")[0]] += len(items)
    return +counts
