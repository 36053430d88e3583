"""An outliner's day page and its own blocks in one context: the same entry is never paid twice,
and a day page "whole" never hides the entries it was chosen for (issue 23).

A Logseq journal page enters a context as its matching entries (its passages); every entry is
also a block node of its own, ranked on its own words. Built on real Logseq journals imported
into real SQLite graphs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

CHATTER = [
    "Took the recycling out, the blue bin was full again.",
    "Booked a haircut for Saturday.",
    "Watched half a documentary about octopuses.",
    "Paid the window cleaner.",
    "Rain all afternoon, stayed in.",
    "Sorted the sock drawer, finally.",
    "Podcast about city planning, worth a second listen.",
    "Fixed the squeaky hinge on the back door.",
    "TODO defrost the freezer",
]
NAMES = ["Ana", "Carmen", "Edda", "Greta"]
# (day, the entry that answers): each names the kayak the question asks about.
FACTS = {
    3: "Greta says the kayak rental for the lake trip is 35 pounds a day.",
    7: "Edda booked the kayak for the lake trip on the first Saturday.",
    11: "Carmen found a second kayak on the lake trip's noticeboard.",
    15: "Ana says the kayak has to be back at the lake by six.",
}
QUESTION = "what do we know about the kayak for the lake trip?"
DAYS = 18


def logseq_graph(root: Path, days: dict[str, list[str]]):
    """A Logseq graph under ``root`` (a ``[[Lake trip]]`` page and one journal file per name in
    ``days``, its entries one per line) imported into ``root``/graph.db; the open connection."""
    from ctx.importers.engine import import_path
    from ctx.store import connect

    graph = root / "graph"
    (graph / "logseq").mkdir(parents=True)
    (graph / "logseq" / "config.edn").write_text("{}\n")
    (graph / "journals").mkdir()
    (graph / "pages").mkdir()
    (graph / "pages" / "Lake trip.md").write_text("- The summer outing.\n")
    for name, items in days.items():
        (graph / "journals" / name).write_text("\n".join(items) + "\n")
    conn = connect(root / "graph.db", create=True)
    import_path(conn, graph)
    return conn


def chatter(day: int, entries: int) -> list[str]:
    return [f"- {NAMES[(day + k) % 4]}: {CHATTER[(day * 7 + k) % len(CHATTER)]} ({k})" for k in range(entries)]


def journals(root: Path, entries: int, at: int):
    """``DAYS`` day pages of ``entries`` top-level entries; a fact day holds its fact under a
    ``[[Lake trip]]`` entry at position ``at``."""
    days = {}
    for day in range(1, DAYS + 1):
        items = chatter(day, entries)
        if day in FACTS:
            items[at] = f"- [[Lake trip]]\n\t- {FACTS[day]}"
        days[f"2024_05_{day:02d}.md"] = items
    return logseq_graph(root, days)


def folded(text: str) -> str:
    return " ".join(text.casefold().split())


@pytest.fixture(scope="module")
def short_days(tmp_path_factory):
    return journals(tmp_path_factory.mktemp("short-days"), entries=24, at=12)


@pytest.fixture(scope="module")
def long_days(tmp_path_factory):
    # 60 entries a day: more than an outline shows (output.outline_max_nodes, 30), the fact at 45.
    return journals(tmp_path_factory.mktemp("long-days"), entries=60, at=45)


def test_a_matching_entry_is_shown_once_with_its_day(short_days):
    # Before: the entry was shown in its day page's passage and again as its own block under a
    # heading "### <entry> (in May 3rd, 2024) (2024-05-03)": ~25 tokens paid twice.
    for budget in (700, 1000, 1500, 2000, 3000, 4000):
        text = build_context(short_days, BuildRequest((QUESTION,), max_tokens=budget)).text
        assert count_tokens(text) <= budget
        flat = folded(text)
        for day, fact in FACTS.items():
            assert flat.count(folded(fact)) == 1, (budget, fact, text)
            assert f"2024-05-{day:02d}" in text
        headings = re.findall(r"^### (.*)$", text, re.M)
        assert not any("kayak" in h for h in headings), (budget, headings)


def test_the_block_left_out_is_said_where_it_is_shown(short_days):
    result = build_context(short_days, BuildRequest((QUESTION,), max_tokens=1500, explain=True))
    rows = {r["id"]: r for r in result.candidates}
    blocks = [r for r in rows.values() if r["title"] in FACTS.values()]
    assert blocks and all(r["decision"] == "dropped" for r in blocks)
    assert all(r["reason"].startswith("shown in its page") for r in blocks), [r["reason"] for r in blocks]


def test_a_long_day_page_is_never_shown_as_its_first_entries_in_place_of_its_matching_ones(long_days):
    # A day page of 60 entries "whole" was its outline's first 30 and a gap: at a loose budget
    # the page grew from its matching passage to that, and the fact 45 entries down was gone
    # from it (only its block, shown again on its own, still held it).
    for budget in (1500, 2500, 4000, 6000):
        doc = json.loads(build_context(long_days, BuildRequest((QUESTION,), max_tokens=budget, format="json")).text)
        pages = {n["title"]: n.get("content", "") + "\n".join(e["text"] for e in n.get("outline") or [])
                 for n in doc["nodes"] if n["type"] == "journal"}
        assert len(pages) >= (3 if budget < 2500 else 4), (budget, sorted(pages))
        for day, fact in FACTS.items():
            title = f"May {day}{'rd' if day == 3 else 'th'}, 2024"
            assert fact in pages.get(title, fact), (budget, title, pages[title][:300])


# ---------------------------------------------------------------------------------------------
# By meaning: a day page's passage ranks where its best entry's own vector does


ASKED = "who can we hire boats from by the water?"  # shares no word with the entries


def _embedded_days(root: Path):
    """The short days, embedded with the hash encoder; the question's vector is each answering
    entry's (the block is a node of its own, with its own vector) and the opposite of every
    day passage holding one: what MiniLM did on the generated journals, where a day passage of
    ~20 unrelated entries ranked its answering entry 100th-140th by meaning and the entry's own
    block ranked it in the first ten."""
    import numpy as np

    from fake_encoder import FAKE_MODEL, HashEncoder

    from ctx.semantic.embedding import embed_graph
    from ctx.store import vectors

    conn = journals(root, entries=24, at=12)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    # Along no single word's axis: only the answering blocks lie exactly on it.
    query = np.random.default_rng(23).normal(size=16).astype(np.float32)
    query /= np.linalg.norm(query)
    vectors.cache_query_vector(conn, FAKE_MODEL.name, ASKED, query)
    blocks = conn.execute(
        f"SELECT id, content_hash FROM nodes WHERE type = 'block' AND title IN ({','.join('?' * len(FACTS))})",
        list(FACTS.values())).fetchall()
    assert len(blocks) == len(FACTS)
    vectors.write_vectors(conn, FAKE_MODEL.name, [(b, h, query) for b, h in blocks])
    holding = [h for h, text in conn.execute("SELECT hash, text FROM passage_texts")
               if any(f in text for f in FACTS.values())]
    assert len(holding) == len(FACTS)
    vectors.write_passage_vectors(conn, FAKE_MODEL.name, [(h, -query) for h in holding])
    return conn, FAKE_MODEL.name, query


@pytest.fixture(scope="module")
def embedded_days(tmp_path_factory):
    conn, model, query = _embedded_days(tmp_path_factory.mktemp("embedded-days"))
    yield conn, model, query
    conn.close()


def test_a_day_passage_ranks_by_meaning_where_its_answering_entry_does(embedded_days):
    from ctx.assemble.passage_rank import rank_passages
    from ctx.semantic.topic import TopicVector
    from ctx.store.view import GraphView

    conn, model, query = embedded_days
    ranking = rank_passages(GraphView(conn, include_private=False), ASKED, TopicVector(model, query, "test"),
                            mode="vector")
    order = sorted(ranking.passages, key=lambda p: (-ranking.passages[p], p))
    holding = [i for i, p in enumerate(order) if any(f in _text(conn, p) for f in FACTS.values())]
    # The entries' blocks are the four nearest nodes: their passages come among the first third
    # by meaning (before: the four last of all), beside passages near by their own vectors and
    # their blocks' both.
    assert len(holding) == len(FACTS) and max(holding) < len(order) // 3, (holding, len(order))


def _text(conn, pid: int) -> str:
    return conn.execute("SELECT text FROM passage_texts WHERE id = ?", (pid,)).fetchone()[0]


def test_an_embedded_journal_shows_the_entries_its_vectors_find(embedded_days):
    conn, _, _ = embedded_days
    # No word of the question is in the graph: the vectors alone rank, and a day passage shows
    # whole (~300 tokens): the four days and those ranked beside them need ~3,000.
    for budget in (3000, 4000):
        text = build_context(conn, BuildRequest((ASKED,), max_tokens=budget)).text
        assert all(f in text for f in FACTS.values()), (budget, text)


# ---------------------------------------------------------------------------------------------
# Wide: every day that holds a matching entry can be shown when the budget holds them all


def test_a_loose_budget_shows_every_day_s_matching_entry_not_only_the_searched_nodes_days(tmp_path):
    # 40 days, each with one entry about the kayak: the candidates were the walk from the best
    # day plus the 30 best nodes by search (blocks and pages alike), so at most ~30 days could
    # be shown however large the budget; the days holding the budget's best passages are
    # candidates too now.
    facts, days = {}, {}
    for day in range(1, 41):
        facts[day] = f"{NAMES[day % 4]} says kayak number {100 + day} is ready at the lake."
        items = chatter(day, 12)
        items[6] = f"- [[Lake trip]]\n\t- {facts[day]}"
        month, mday = (6, day) if day <= 30 else (7, day - 30)
        days[f"2024_{month:02d}_{mday:02d}.md"] = items
    conn = logseq_graph(tmp_path, days)
    text = build_context(conn, BuildRequest(("which kayak is ready at the lake?",), max_tokens=8000)).text
    shown = [d for d, f in facts.items() if f in text]
    assert len(shown) == len(facts), (len(shown), sorted(set(facts) - set(shown)))
