"""How far down the ranking prepare reads (``prepare.worth_reading``) and what each passage is worth
when a section is packed passage by passage (``packing_order.passage_units``): a long note the
topic matched in a few passages enters a context as those passages, so it is reckoned at their size
and its weak passages compete with the next notes' matching ones (issue 23)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctx.assemble.candidate import Candidate
from ctx.assemble.focus import Piece
from ctx.assemble.packing_order import passage_units
from ctx.assemble.passage_rank import PassageRanking
from ctx.assemble.passage_view import STANDING
from ctx.assemble.prepare import OWNER_ESTIMATE, PASSAGE_ESTIMATE, PASSAGES_RECKONED, passage_owners, worth_reading


def _cand(node_id: str, tokens: int, seed: bool = False) -> Candidate:
    c = Candidate(node_id, node_id, "note", [], {}, f"{node_id}.md", None, None, None, None, tokens,
                  0 if seed else 1, 0.0 if seed else 1.0, (), seed)
    c.section = "Sources"
    return c


def test_long_notes_are_reckoned_at_their_whole_size_without_a_passage_ranking():
    ranked = [_cand("log-1", 3000, seed=True), *(_cand(f"log-{i}", 3000) for i in range(2, 12))]
    wanted = [c.id for c in worth_reading(ranked, 1000)]
    # The seed, then notes worth 1,000 tokens each (a node never counts for more than the room)
    # until twice the room and 200 more are reckoned: three after the seed.
    assert wanted == ["log-1", "log-2", "log-3", "log-4"]


def test_matched_long_notes_are_reckoned_at_their_matched_passages():
    ranked = [_cand("log-1", 3000, seed=True), *(_cand(f"log-{i}", 3000) for i in range(2, 12))]
    matched = {f"log-{i}": 1 for i in range(1, 12)}
    wanted = [c.id for c in worth_reading(ranked, 1000, matched)]
    after_seed = -(-(2 * 1000 + 200) // PASSAGE_ESTIMATE)  # notes read before the total passes the bound
    assert wanted == ["log-1", *(f"log-{i}" for i in range(2, 2 + after_seed))]
    assert len(wanted) > len(worth_reading(ranked, 1000))


def test_many_matched_passages_count_up_to_a_cap_and_short_notes_their_own_size():
    ranked = [_cand("a", 5000, seed=True), _cand("b", 5000), _cand("c", 120), _cand("d", 5000),
              _cand("e", 5000), _cand("f", 5000)]
    matched = {"b": 40, "c": 3, "d": 2}  # e, f: the topic matched none of their passages
    wanted = [c.id for c in worth_reading(ranked, 1000, matched)]
    # b: capped at PASSAGES_RECKONED passages; c: its own 120 tokens; d: two passages; e: the room.
    reckoned = [PASSAGE_ESTIMATE * PASSAGES_RECKONED, 120, 2 * PASSAGE_ESTIMATE, 1000, 1000]
    running, expected = 0, ["a"]
    for node_id, size in zip("bcdef", reckoned, strict=True):
        if running < 2 * 1000 + 200:
            expected.append(node_id)
            running += size
    assert wanted == expected == ["a", "b", "c", "d", "e"]


def _with_pieces(node_id: str, score: float, rank: int, relevances: list[float]) -> Candidate:
    c = _cand(node_id, 200 * len(relevances))
    c.score, c.rank = score, rank
    c.pieces = [Piece(i, (), f"passage {i}", 200, r) for i, r in enumerate(relevances)]
    return c


def _order(members: list[Candidate]) -> list[tuple[str, int]]:
    return [(c.id, ord_) for _, _, ord_, c in passage_units(members)]


def test_a_long_note_s_weak_passages_lose_to_the_next_notes_well_matched_ones():
    # The top note (a multi-topic log) matched one passage half as well as the best passage in the
    # graph and the rest weakly; the next note, ranked lower, matched one passage well. Reckoned
    # against the top note's own best, its weak passages (0.2 / 0.5) would beat that one.
    top = _with_pieces("log-1", 1.4, 1, [0.5, 0.2, 0.15, 0.0])
    other = _with_pieces("log-2", 0.5, 2, [0.0, 0.9, 0.1])
    order = _order([top, other])
    assert order.index(("log-2", 1)) < order.index(("log-1", 1)) < order.index(("log-1", 2))
    assert order[0] == ("log-1", 0)
    # Passages the topic did not match are not packed passage by passage.
    assert ("log-1", 3) not in order and ("log-2", 0) not in order


def test_a_note_whose_best_passage_matched_weakly_does_not_price_it_as_an_answer():
    top = _with_pieces("answer", 1.4, 1, [1.0, 0.5])
    hub = _with_pieces("hub", 0.9, 2, [0.1, 0.05])  # linked and well ranked, its text barely matched
    order = _order([top, hub])
    assert order == [("answer", 0), ("answer", 1), ("hub", 0), ("hub", 1)]


def test_a_note_of_one_passage_is_worth_its_node_s_score():
    # One passage is the whole note: what ranked the node (names found through the seeds, the
    # walk) speaks for it, however few of the question's words it has.
    top = _with_pieces("seed", 1.4, 1, [1.0, 0.3])
    second_hop = _with_pieces("second-hop", 0.7, 2, [0.05])
    units = passage_units([top, second_hop])
    value = {(c.id, o): -v for v, _, o, c in units}
    assert value[("second-hop", 0)] == 0.7 / 1.4
    assert value[("seed", 1)] == 0.3
    assert _order([top, second_hop]) == [("seed", 0), ("second-hop", 0), ("seed", 1)]


def test_the_notes_holding_the_graph_s_best_passages_are_read_wherever_their_node_ranks():
    # Eleven long logs, each matched in many passages: the node order alone reads the seed and the
    # next few. The third-best passage of the whole graph sits in the tenth log.
    ranked = [_cand("log-1", 3000, seed=True), *(_cand(f"log-{i}", 3000) for i in range(2, 12))]
    matched = {f"log-{i}": 10 for i in range(1, 12)}
    by_order = [c.id for c in worth_reading(ranked, 1000, matched)]
    assert "log-10" not in by_order
    ranking = PassageRanking(
        passages={1: 1.0, 2: 0.9, 3: 0.85, 4: 0.5, 5: 0.4},
        node_of={1: "log-1", 2: "log-2", 3: "log-10", 4: "log-11", 5: "log-3"},
    )
    owners = passage_owners(ranking, 1000)
    assert owners == ["log-1", "log-2", "log-10", "log-11", "log-3"]
    wanted = [c.id for c in worth_reading(ranked, 1000, matched, owners)]
    assert wanted[: len(by_order)] == by_order  # what the node order reads is still read, first
    assert set(wanted) - set(by_order) == {"log-10", "log-11"}


def test_passage_owners_stop_once_the_best_passages_would_fill_twice_the_room():
    ranking = PassageRanking(
        passages={i: 1.0 - i / 100 for i in range(1, 40)},
        node_of={i: f"note-{i}" for i in range(1, 40)},
    )
    owners = passage_owners(ranking, 1000)
    # Passages are reckoned at OWNER_ESTIMATE each (what a log's core costs, not a whole
    # passage) until twice the room and 200 more: 22 notes at 1,000 tokens.
    assert len(owners) == -(-(2 * 1000 + 200) // OWNER_ESTIMATE) == 22
    assert owners == [f"note-{i}" for i in range(1, len(owners) + 1)]


def _log(node_id: str, score: float, rank: int, relevances: list[float]) -> Candidate:
    c = _with_pieces(node_id, score, rank, relevances)
    c.pieces = [replace(p, standing=STANDING) for p in c.pieces or []]
    return c


def test_a_log_s_standing_is_damped_toward_the_best_log_s_and_a_page_keeps_its_own():
    # All logs: the lower log's standing counts to the power STANDING (its answering entry 0.35 at
    # 0.4 ** STANDING, ahead of the first log's weak entry), as memory14 priced every note.
    first, lower = _log("log-1", 1.0, 1, [0.6, 0.2]), _log("log-2", 0.4, 2, [0.35, 0.0])
    value = {(c.id, o): -v for v, _, o, c in passage_units([first, lower])}
    assert value[("log-2", 0)] == pytest.approx(0.4**STANDING * 0.35)
    assert value[("log-2", 0)] > value[("log-1", 1)] == 0.2
    # A page above them keeps its share to the power 1, and no log is lifted over it: the best
    # log keeps its own share (0.5), the one below is damped toward it, not toward the page's.
    page = _with_pieces("page", 2.0, 1, [1.0, 0.3])
    best, below = _log("log-1", 1.0, 2, [0.6, 0.5]), _log("log-2", 0.4, 3, [0.35, 0.0])
    value = {(c.id, o): -v for v, _, o, c in passage_units([page, best, below])}
    assert value[("page", 1)] == 0.3
    assert value[("log-1", 0)] == pytest.approx(0.5 * 0.6)
    assert value[("log-2", 0)] == pytest.approx(0.5 * (0.4 / 1.0) ** STANDING * 0.35)
    assert value[("log-2", 0)] < 0.5 * 0.35


def test_a_log_stands_no_lower_than_its_best_passage_says():
    # The lower log's node score (a rank in a fused node ranking) is 0.1 of the best log's, but
    # its best passage is 0.8 of the graph's best: it stands at 0.8 ** STANDING of the best log,
    # and its answering entry (0.8 ** 1.5 ~ 0.72) comes before the first log's weak entry (0.5);
    # its other entry is priced at the same standing, by its own relevance.
    first, lower = _log("log-1", 1.0, 1, [1.0, 0.5]), _log("log-2", 0.1, 2, [0.8, 0.2])
    floored = [replace(c, pieces=[replace(p, floored=True) for p in c.pieces or []]) for c in (first, lower)]
    value = {(c.id, o): -v for v, _, o, c in passage_units(floored)}
    assert value[("log-2", 0)] == pytest.approx(0.8**STANDING * 0.8)
    assert value[("log-2", 1)] == pytest.approx(0.8**STANDING * 0.2)
    assert value[("log-2", 0)] > value[("log-1", 1)] == 0.5
    # Never above the best log: its own best passage is the graph's best at most.
    assert value[("log-1", 0)] == 1.0
    # Not floored (a build with vectors, a day page): its node score alone.
    value = {(c.id, o): -v for v, _, o, c in passage_units([first, lower])}
    assert value[("log-2", 0)] == pytest.approx(0.1**STANDING * 0.8)
