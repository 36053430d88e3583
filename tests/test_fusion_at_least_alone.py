"""With vectors, a passage is never priced below what either ranking alone makes of it
(``passage_rank.at_least_alone``, issue 23, docs/scale.md memory20)."""

from __future__ import annotations

from ctx.assemble.passage_rank import RRF_K, at_least_alone
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
