"""'Did you mean': the prefilters (characters shared with the topic, as difflib's quick_ratio
counts them, in SQL; then the longest common subsequence) never drop a title difflib would
suggest: the same suggestions as comparing every title, on typos of generated titles."""

from __future__ import annotations

import difflib
import random

from build_graphs import import_into, write_jsonl
from ctx.assemble.suggest import (
    CUTOFF,
    MAX_SUGGESTIONS,
    close_titles,
    longest_common_subsequence_within,
    looks_like_a_name,
)
from ctx.store.view import GraphView

WORDS = "harbour crane launch budget parser design review sync plan risk goal spec draft note ünïcode".split()


def every_title_compared(graph: GraphView, topic: str) -> list[str]:
    key = " ".join(topic.lower().split())
    if len(key) < 3 or not looks_like_a_name(topic):
        return []
    rows = graph.conn.execute(
        "SELECT k.key, MIN(n.title) FROM node_keys k JOIN nodes n ON n.id = k.node_id"
        " WHERE k.kind IN ('title', 'alias') AND length(k.key) BETWEEN ? AND ? AND n.private = 0 GROUP BY k.key",
        (max(1, len(key) - 3), len(key) + 3),
    ).fetchall()
    titles = {r[0]: r[1] for r in rows if r[0] != key}
    return [titles[k] for k in difflib.get_close_matches(key, sorted(titles), n=MAX_SUGGESTIONS, cutoff=CUTOFF)]


def test_the_prefilter_keeps_every_close_title(tmp_path, db_path):
    rng = random.Random(5)
    titles = sorted({" ".join(rng.sample(WORDS, rng.randint(1, 3))).title() for _ in range(400)})
    records = [{"id": f"n{i}", "title": t, "body": "text", "aliases": [t.lower()[::-1]] if i % 7 == 0 else []}
               for i, t in enumerate(titles)]
    records.append({"id": "secret", "title": "Harbour Cranes", "body": "x", "tags": ["private"]})
    graph = GraphView(import_into(db_path, write_jsonl(tmp_path / "titles.jsonl", records)))
    suggested = 0
    for title in rng.sample(titles, 30):
        chars = list(title)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(chars))
            chars[i] = rng.choice("aeiouxyzü ")
        for topic in ("".join(chars), title[:-1], title + "s"):
            expected = every_title_compared(graph, topic)
            assert close_titles(graph, topic) == expected, topic
            suggested += bool(expected)
    assert suggested > 20  # the typos were close enough to be suggested most of the time


def _lcs_by_table(a: str, b: str) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        row = [0]
        for j, y in enumerate(b):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1]


def test_the_subsequence_bound_is_exact_and_never_below_difflibs_ratio():
    rng = random.Random(9)
    for _ in range(2000):
        a = "".join(rng.choice("abcde ü") for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice("abcdef ü") for _ in range(rng.randint(0, 40)))
        lcs = longest_common_subsequence_within(a)(b)
        assert lcs == _lcs_by_table(a, b), (a, b)
        if a or b:
            matcher = difflib.SequenceMatcher(None, b, a)  # as get_close_matches compares
            assert matcher.ratio() <= 2.0 * lcs / (len(a) + len(b)), (a, b)
