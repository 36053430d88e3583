"""Names mentioned in a free-text topic, looked up in one round trip.

The rules and the order are SQLite's (``ctx.store.reads.find_mentions``: longest name first,
then position in the text, then id); only the lookups differ: SQLite asks one indexed query per
candidate phrase (cheap in-process), a server is asked once for every phrase at once.
"""

from __future__ import annotations

from collections.abc import Callable

from ctx.store.reads import mention_phrases


def mentioned(text: str, named_by: Callable[[list[str]], dict[str, list[str]]]) -> list[str]:
    """Ids of the nodes ``text`` names; ``named_by(names)`` answers name -> ids for all names."""
    ranks = mention_phrases(text)
    seen: dict[str, tuple[int, int]] = {}
    for name, ids in named_by(sorted(ranks)).items():
        for node_id in ids:
            if node_id not in seen or ranks[name] < seen[node_id]:
                seen[node_id] = ranks[name]
    return sorted(seen, key=lambda node_id: (seen[node_id], node_id))
