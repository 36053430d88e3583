"""With vectors, a passage is never priced below what either ranking alone makes of it
(``passage_rank.at_least_alone``, issue 23, docs/scale.md memory20)."""

from __future__ import annotations

from ctx.assemble.passage_rank import RRF_K, SURE_FIRST, at_least_alone
from ctx.semantic.fusion import reciprocal_rank_fusion


def test_a_passage_full_text_scores_near_its_best_keeps_that_share_whatever_its_rank():
    # Full text's scores are flat at the top of a log whose entries share the question's words:
    # the answer is its 17th passage at 0.74 of the best score and the vectors' 39th; both rank
    # passage 1 first.
    full_text_order = list(range(1, 21))
    scores = {pid: 1.0 - 0.016 * (rank - 1) for rank, pid in enumerate(full_text_order, start=1)}
    by_meaning = [1] + [100 + i for i in range(37)] + [17]
    fused = dict(reciprocal_rank_fusion([full_text_order, by_meaning], k=RRF_K))
    shares = at_least_alone(fused, scores, by_meaning)
    best = max(fused.values())
    assert fused[17] / best < 0.35  # rank fusion alone buried it
    assert shares[17] == scores[17]  # ~0.74: as the graph without vectors prices it
    # A passage full text found too keeps at least the share its rank by meaning gives it; one
    # only the vectors found keeps its fused share (no word says which of its paragraphs answers).
    assert shares[1] == 1.0
    assert shares[100] == fused[100] / best < 0.5
    lifted = at_least_alone(fused, {**scores, 100: 0.01}, by_meaning)
    assert lifted[100] == (RRF_K + 1) / (RRF_K + 2)
    # No passage is priced below its fused share, and none above 1.
    assert all(fused[pid] / best <= shares[pid] <= 1.0 for pid in fused)


def test_a_passage_neither_ranking_is_sure_of_keeps_its_fused_share():
    fused = dict(reciprocal_rank_fusion([[1, 2, 3], [3, 1, 2]], k=RRF_K))
    shares = at_least_alone(fused, {1: 1.0, 2: 0.1, 3: 0.1}, [3, 1, 2])
    best = max(fused.values())
    assert shares[2] == max(fused[2] / best, (RRF_K + 1) / (RRF_K + 3))
    assert at_least_alone({}, {}, []) == {}


def test_where_full_text_is_unsure_a_passage_only_the_vectors_found_keeps_their_rank_share():
    # An open question asked in other words: full text's first passages hold only its common
    # words, its scores flat below its best at 0.5-0.7; the evidence is the vectors' 4th passage
    # and full text never found it (memory22).
    full_text_order = list(range(1, 21))
    scores = {pid: 1.0 if rank == 1 else 0.7 - 0.01 * rank for rank, pid in enumerate(full_text_order, start=1)}
    by_meaning = [1, 101, 102, 104, *range(105, 140)]  # both rank passage 1 first
    fused = dict(reciprocal_rank_fusion([full_text_order, by_meaning], k=RRF_K))
    best = max(fused.values())
    sure = at_least_alone(fused, scores, by_meaning)
    unsure = at_least_alone(fused, scores, by_meaning, unsure=True)
    # Sure, full text's lifted entries outbid it; unsure, the vectors' rank share lifts it over
    # full text's 6th-20th passages, but not over full text's first five: those answer the
    # questions full text had found, and a lifted passage is shown whole (memory24).
    first_five = full_text_order[:SURE_FIRST]
    assert sure[104] == fused[104] / best < min(scores.values())
    assert max(scores[pid] for pid in full_text_order[SURE_FIRST:]) < unsure[104] < min(unsure[pid] for pid in first_five)
    assert unsure[104] < (RRF_K + 1) / (RRF_K + 4)
    # Below full text's first five, the vectors' own rank share is the floor, uncapped.
    assert unsure[139] == max(fused[139] / best, (RRF_K + 1) / (RRF_K + 39))
    # Full text's own passages are priced as before either way.
    assert all(unsure[pid] == sure[pid] for pid in full_text_order)
    assert all(fused[pid] / best <= unsure[pid] <= 1.0 for pid in fused)


def _log_vault(root, solar: bool):
    """Thirty meeting notes, each deciding something "after going back and forth" and "in the
    end"; one holds the kayak, and with ``solar`` one says the roof gets solar panels."""
    vault = root / "vault"
    vault.mkdir()
    topics = ["the printer", "the venue", "the caterer", "the logo", "the newsletter", "the bike rack"]
    for day in range(1, 31):
        lines = [f"After going back and forth, {topics[day % len(topics)]} is settled in the end.",
                 "We looked at the budget again and moved on."]
        if day == 12:
            lines.append("After going back and forth, the kayak for the lake trip is the red one.")
        if solar and day == 17:
            lines.append("Panels from Sunwise go up on the garage next month.")
        (vault / f"Meeting {day:02d}.md").write_text(f"---\ndate: 2024-03-{day:02d}\n---\n" + "\n\n".join(lines) + "\n")
    return vault


def test_full_text_is_sure_where_its_best_match_holds_the_question_s_rare_words(tmp_path_factory):
    from conftest import imported_graph

    from ctx.assemble.passage_rank import UNSURE, full_text_sureness, query_terms
    from ctx.store import as_store, connect

    root = tmp_path_factory.mktemp("sureness")
    reader = as_store(connect(imported_graph(tmp_path_factory, _log_vault(root, solar=True)))).reader()

    def sureness(question: str) -> float:
        hits = reader.search_passages(query_terms(question), limit=200)
        return full_text_sureness(reader, question, hits)

    # "kayak", "lake" and "trip" are in one note: its entry holds the question's rare words.
    assert sureness("What did we end up going with for the kayak for the lake trip?") >= UNSURE
    # Asked in other words: no note says "power", "generation" or "roof"; full text's best
    # holds only "going" and "end", which every note holds.
    assert sureness("What did we end up going with for putting power generation on the roof?") < UNSURE
