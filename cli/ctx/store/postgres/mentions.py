"""Names mentioned in a free-text topic, looked up in one round trip.

The rules and the order are SQLite's (``ctx.store.reads.find_mentions``: longest name first,
then position in the text, then id); only the lookups differ: SQLite asks one indexed query per
candidate phrase (cheap in-process), a server is asked once for every phrase at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ctx.store.reads import (
    _MENTION_WORD,
    _POSSESSIVE,
    MENTION_MAX_TEXT_WORDS,
    MENTION_MAX_WORDS,
    _written_as_name,
)


def mentioned(text: str, named_by: Callable[[list[str]], dict[str, list[str]]]) -> list[str]:
    """Ids of the nodes ``text`` names; ``named_by(names)`` answers name -> ids for all names."""
    from ctx.stopwords import STOPWORDS

    lowered = text.lower()
    words = list(itertools.islice(_MENTION_WORD.finditer(lowered), MENTION_MAX_TEXT_WORDS))
    ranks: dict[str, tuple[int, int]] = {}  # name -> its best (longest, earliest) occurrence
    for i, first in enumerate(words):
        for j in range(i, min(len(words), i + MENTION_MAX_WORDS)):
            if all(w.group() in STOPWORDS for w in words[i : j + 1]):
                continue
            if i == j and not _written_as_name(text, first.start(), first.end()):
                continue
            phrase = lowered[first.start() : words[j].end()]
            for name in dict.fromkeys((phrase, _POSSESSIVE.sub("", phrase))):
                if len(name) < 3:
                    continue
                rank = (-(j - i + 1), first.start())
                if name not in ranks or rank < ranks[name]:
                    ranks[name] = rank
    seen: dict[str, tuple[int, int]] = {}
    for name, ids in named_by(sorted(ranks)).items():
        for node_id in ids:
            if node_id not in seen or ranks[name] < seen[node_id]:
                seen[node_id] = ranks[name]
    return sorted(seen, key=lambda node_id: (seen[node_id], node_id))
