""""Did you mean …": the titles closest to a topic that matched nothing exactly.

A near-miss of a title ("Canvs") must not silently become a context about something else: the
build says which titles were meant (stderr and JSON meta), and a short topic none of whose words
occur in the graph is reported as not found rather than answered by meaning alone. A topic that
search answered is compared only with the titles of the notes it found (``close_titles_among``);
every title is compared only when nothing was found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from collections.abc import Callable

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


# Topics longer than this are questions, not attempts at a title.
MAX_WORDS = 4
MAX_SUGGESTIONS = 3
CUTOFF = 0.75
# Keys compared at most (only on the path where nothing matched exactly).
MAX_KEYS = 200_000


def looks_like_a_name(topic: str) -> bool:
    words = topic.split()
    return 0 < len(words) <= MAX_WORDS and not topic.rstrip().endswith("?")


def close_titles(graph: GraphReader, topic: str) -> list[str]:
    """Up to three titles or aliases spelled like ``topic`` (not equal to it), closest first."""
    key = " ".join(topic.lower().split())
    if len(key) < 3 or not looks_like_a_name(topic):
        return []
    # difflib keeps a key only if the characters it shares with the topic, as multisets, reach
    # CUTOFF * (both lengths) / 2 (its quick_ratio). The store counts that first, so only keys
    # that can pass are compared in Python: the same suggestions as comparing every key.
    near = graph.name_keys_near(key, cutoff=CUTOFF, max_keys=MAX_KEYS)
    titles = {k: title for k, title in near.items() if k != key}
    # difflib's ratio counts characters in matching blocks, which are in the same order in both
    # strings: never more than their longest common subsequence. A key whose LCS bound is under
    # the cutoff cannot pass, and the bound costs a few integer operations per character instead
    # of the matcher's block search (~0.1 s over the 1,300 keys a 100k-node graph leaves here).
    within = longest_common_subsequence_within(key)
    hopeful = [k for k in titles if 2.0 * within(k) / (len(k) + len(key)) >= CUTOFF]
    if not hopeful:
        return []
    import difflib  # ~1 ms of a cold build, only once a title could be meant

    close = difflib.get_close_matches(key, sorted(hopeful), n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    return [titles[k] for k in close]


def close_titles_among(graph: GraphReader, topic: str, ids: list[str]) -> list[str]:
    """``close_titles`` over the titles and aliases of ``ids`` alone: when search already found
    notes for a topic, the title it probably meant is one of theirs ("Encrypted Graph" finds the
    note "Encrypted Graphs"), and comparing it with every title in the graph is work in proportion
    to the graph for a notice."""
    key = " ".join(topic.lower().split())
    if len(key) < 3 or not looks_like_a_name(topic):
        return []
    titles: dict[str, str] = {}
    for name, title in graph.name_keys_of(ids):
        if name != key and abs(len(name) - len(key)) <= 3:
            titles.setdefault(name, title)
    if not titles:
        return []
    import difflib

    close = difflib.get_close_matches(key, sorted(titles), n=MAX_SUGGESTIONS, cutoff=CUTOFF)
    return [titles[k] for k in close]


def longest_common_subsequence_within(text: str) -> Callable[[str], int]:
    """A function giving the length of the longest common subsequence of ``text`` and its
    argument, bit-parallel over ``text``'s positions (Allison and Dix, 1986)."""
    positions: dict[str, int] = {}
    for i, ch in enumerate(text):
        positions[ch] = positions.get(ch, 0) | (1 << i)
    full = (1 << len(text)) - 1

    def length(other: str) -> int:
        row = full  # a 1 bit: that position of ``text`` is not matched yet
        for ch in other:
            matches = row & positions.get(ch, 0)
            row = ((row + matches) | (row - matches)) & full
        return len(text) - bin(row).count("1")

    return length
