"""A markdown summary line priced as its parts (``Packer.summary_parts``) costs what the whole line
costs, and the floor ``Packer.summary_exceeds`` tells lines that cannot fit from never overstates a
line: on a real graph's walk and the real corpora's titles and paths, in both encodings, and on
made-up lines meant to break a split (punctuation, apostrophes, spaces and non-ASCII letters at
the joins)."""

from __future__ import annotations

import itertools
import random

import pytest

from conftest import CORPORA
from ctx.assemble import packer as packer_module
from ctx.assemble.candidate import Candidate
from ctx.assemble.counter import TokenCounter
from ctx.assemble.document import SUMMARY, Document, Item, SectionOut
from ctx.assemble.enrich import enrich
from ctx.assemble.packer import HEAD_FLOOR, Packer
from ctx.assemble.plan import fill_summaries, shown_in_page
from ctx.assemble.render import block_text
from ctx.assemble.traverse import walk
from ctx.graph import Graph
from ctx.lenses import load_lens

ENCODINGS = ["cl100k_base"]  # o200k_base is not installed offline (and is counted whole)


def packer_for(cands: list[Candidate], encoding: str, show_scores: bool = True, fmt: str = "markdown",
               named: str | None = None) -> Packer:
    doc = Document(label="q", topics=("q",), lens="general", budget=4000, fmt=fmt, found=True,
                   sections=[SectionOut("Notes", "rank", "none")])
    doc.show_scores = show_scores
    counter = TokenCounter(encoding)
    if named is not None:
        counter.encoding = named  # an encoding whose pieces were not checked at the joins
    return Packer(doc, cands, load_lens("general"), counter, set())


def made(node_id: str, title: str, type_: str = "note", hops: int = 2, score: float = 0.5,
         stamp: float | None = 1_700_000_000.0, **flags: bool) -> Candidate:
    return Candidate(
        id=node_id, title=title, type=type_, tags=[], fields={}, source_path=None, parent_id=None,
        position=None, created=stamp, updated=None, store_tokens=10, hops=hops, cost=1.0, path=(),
        seed=flags.get("seed", False), semantic=flags.get("semantic", False), recent=flags.get("recent", False),
        score=score, section="Notes",
    )


def real_candidates(demo_db) -> list[Candidate]:
    lens = load_lens("general")
    with Graph.open(demo_db) as graph:
        reader = graph.store.reader()
        seeds = [s for s in (reader.resolve_one("Project Apollo"),) if s is not None]
        return enrich(reader, walk(reader, lens, seeds, 3), lens, False)


def corpus_candidates(limit: int = 1500) -> list[Candidate]:
    """Titles and paths of the real corpora's notes (their names hold punctuation, digits, spaces
    and non-ASCII letters), as ids and titles, at varied distances, scores and dates."""
    if not CORPORA.exists():
        pytest.skip("the real corpora are absent in this checkout")
    rng = random.Random(21)
    files = sorted(p for p in CORPORA.rglob("*") if p.is_file() and p.suffix in {".md", ".txt", ".json", ".org"})
    out = []
    for i, path in enumerate(rng.sample(files, min(limit, len(files)))):
        rel = str(path.relative_to(CORPORA))
        node_id = rel if i % 3 else path.stem  # a path ends in a letter; a stem in anything
        out.append(made(node_id, path.stem, type_=rng.choice(["note", "task", "page", "block", ""]),
                        hops=rng.randrange(0, 12), score=rng.uniform(-2, 3),
                        stamp=None if i % 7 == 0 else rng.uniform(-1e10, 4e9),
                        seed=i % 11 == 0, semantic=i % 13 == 0, recent=i % 17 == 0))
    return out


def tricky_candidates() -> list[Candidate]:
    """Joins a split could get wrong: an id or title ending in punctuation, an apostrophe, a space,
    a line break, a non-ASCII letter or digit, a contraction's letters; empty parts."""
    ends = ["a", "Z", "9", "é", "ß", "٣", "'", "'s", "s'", ";", ")", "-", "/", " ", "\n", "x\n", "42'", "ﬁ", "Ⅻ", "_"]
    titles = ["", "Plain", "it's", "x (", "ends with (", "  spaced  ", "line\nbreak", "émigré", "數學", "a;b", "?!"]
    # The shortest head there is: "-", " ", " (;", " id", ":", " a".
    out = [made("a", "", type_=""), made("7", "", type_="", hops=0, seed=True)]
    for n, (end, title) in enumerate(itertools.product(ends, titles)):
        out.append(made(f"n{n}{end}", title + end, type_=["note", "x.", "", "é", "t'"][n % 5], hops=n % 4,
                        score=[0.0, -0.0, 1.5, -3.25, 0.1234567][n % 5], stamp=None if n % 6 == 0 else 1e9 + n * 86400))
    return out


def whole_line_cost(p: Packer, c: Candidate) -> int:
    return p.counter.count(block_text(p.doc, Item(c, SUMMARY)))


def check_costs(cands: list[Candidate], encoding: str, show_scores: bool) -> int:
    """Every line's cost through the packer equals the whole line's count; every floor is at most
    that cost and says "exceeds" exactly when the cost exceeds the room. The lines split."""
    split = 0
    for room in (0, 7, 18, 24, 31, 60):
        p = packer_for(cands, encoding, show_scores)
        for c in cands:
            whole = whole_line_cost(p, c)
            assert p.summary_exceeds(c, room) == (whole > room), (c.id, c.title, room)
            for near in (whole - 1, whole, whole + 1):
                fresh = packer_for(cands, encoding, show_scores)
                assert fresh.summary_exceeds(c, near) == (whole > near), (c.id, c.title, near)
            assert p.cost(Item(c, SUMMARY)) == whole, (c.id, c.title)
            parts = p.summary_parts(c)
            if parts is not None:
                split += 1
                count = p.counter.count
                assert HEAD_FLOOR <= count(parts[0])
                assert count(parts[0]) + sum(map(count, parts[1])) == whole
                assert parts[0] + "".join(parts[1]) == block_text(p.doc, Item(c, SUMMARY))
    return split


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("show_scores", [True, False])
def test_parts_cost_the_whole_line_on_a_real_walk(demo_db, encoding, show_scores):
    cands = real_candidates(demo_db)
    assert len(cands) > 10
    assert check_costs(cands, encoding, show_scores) > 0


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_parts_cost_the_whole_line_on_the_corpora(encoding):
    cands = corpus_candidates()
    assert check_costs(cands, encoding, True) > len(cands)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("show_scores", [True, False])
def test_parts_cost_the_whole_line_on_made_up_joins(encoding, show_scores):
    cands = tricky_candidates()
    assert check_costs(cands, encoding, show_scores) > 0


def test_other_encodings_and_json_are_counted_whole():
    cands = tricky_candidates()[:20]
    for p in (packer_for(cands, "cl100k_base", named="o200k_base"), packer_for(cands, "cl100k_base", fmt="json")):
        assert all(p.summary_parts(c) is None for c in cands)
        for c in cands:
            assert p.cost(Item(c, SUMMARY)) == whole_line_cost(p, c)


def old_fill(p: Packer, skipped: list[Candidate], room: int) -> tuple[list[str], int]:
    """fill_summaries as it was: every line priced whole, listed while it fits."""
    used, listed = 0, []
    title = p.counter.count("## Also related\n")
    for c in skipped:
        if shown_in_page(p, c):
            continue
        cost = whole_line_cost(p, c) + (title if not listed else 0)
        if cost <= room - used:
            listed.append(c.id)
            used += cost
    return listed, used


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_fill_summaries_lists_what_pricing_every_line_listed(demo_db, encoding):
    cands = real_candidates(demo_db) + corpus_candidates(400) + tricky_candidates()
    for room in (0, 20, 33, 90, 250, 1000, 5000):
        old = old_fill(packer_for(cands, encoding), cands, room)
        p = packer_for(cands, encoding)
        used = fill_summaries(p, cands, room)
        assert ([i.cand.id for i in p.doc.also], used) == old
        # The fit's later pass with what is left lists as the old rule would too.
        rest = [c for c in cands if c.id not in set(old[0])]
        more = fill_summaries(p, rest, 40)
        q = packer_for(cands, encoding)
        q.doc.also = list(p.doc.also[: len(old[0])])
        assert more == old_fill_after(q, rest, 40)


def old_fill_after(p: Packer, skipped: list[Candidate], room: int) -> int:
    used, title = 0, p.counter.count("## Also related\n")
    for c in skipped:
        if shown_in_page(p, c):
            continue
        cost = whole_line_cost(p, c) + (title if not p.doc.also else 0)
        if cost <= room - used:
            p.doc.also.append(Item(c, SUMMARY))
            used += cost
    return used


def test_a_higher_floor_would_overstate_some_line(monkeypatch):
    """The floor is as high as it may be on lines that exist: one more and some line's cost is
    below it (so the tests above would catch a floor that overstates)."""
    cands = tricky_candidates()
    p = packer_for(cands, "cl100k_base")
    heads = [p.counter.count(parts[0]) for c in cands if (parts := p.summary_parts(c)) is not None]
    assert min(heads) == HEAD_FLOOR
    monkeypatch.setattr(packer_module, "HEAD_FLOOR", HEAD_FLOOR + 1)
    with pytest.raises(AssertionError):
        check_costs(cands, "cl100k_base", True)
