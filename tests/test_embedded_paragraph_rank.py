"""With embeddings, a log's passage whose own paragraph is among the nearest paragraphs by meaning
is worth at least what that paragraph's rank alone makes of it (issue 23; ``passage_rank``'s
``at_least_alone`` reading ``_by_paragraphs``' ranks; docs/scale.md, memory39).

The memory benchmark's set 3 (bench/memory_logs2.py: a stand-up log, a lab notebook and an
allotment society's mail digest, one note per session), imported and embedded as ``ctx embed``
embeds it (paragraph vectors too). Asked "How did the numbers look for people who want a patch
but do not have one yet when Yannick checked?", the answer is one paragraph of a digest message
("Yannick measured the plot waiting list again: ... 407 names"), asked in other words. Its own
vector is among the first few paragraphs nearest the question; its passage's one vector is not,
and lent half a paragraph's rank (``PARAGRAPH_WEIGHT``) the passage ranked ~58th fused, its
relevance a third of the best. Every other message "From: Yannick" matched the name, and at
4,000 tokens the answer was in no context (main 037d967), where a chunk ranked by MiniLM alone
is among the first few.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

factcheck = bench_module("factcheck")

SEED = 3
QUESTION_ID = "s3-094"
# The answering paragraph's rank among the graph's paragraph vectors is at most this (it is 3rd).
NEAR = 5


@pytest.fixture(scope="module")
def set3(tmp_path_factory):
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs2", SEED, True)
    return questions, conn


@pytest.fixture(scope="module")
def digest(set3):
    questions, conn = set3
    return questions[QUESTION_ID], conn


def _paragraph_rank(conn, question: str, evidence: str) -> int:
    """The evidence paragraph's rank among the stored paragraph vectors nearest the question."""
    from ctx.assemble.paragraph_vectors import paragraph_hash, paragraphs_of
    from ctx.assemble.similarity import text_vector
    from ctx.store import as_store

    reader = as_store(conn).reader()
    topic = text_vector(reader, question)
    assert topic is not None and topic.model is not None
    owners, nodes, hashes, matrix = reader.paragraph_vectors(topic.model)
    sims = matrix @ np.asarray(topic.vector, dtype=np.float32)
    wanted = factcheck.normalise(evidence)
    found = {p.id: p.text for rows in reader.passages_of(sorted(set(nodes))).values() for p in rows}
    keys = {(pid, paragraph_hash(para)) for pid, text in found.items() for para in paragraphs_of(text)
            if factcheck.normalise(para) == wanted}
    assert keys, "the evidence is one paragraph of a passage with paragraph vectors"
    order = np.argsort(-sims, kind="stable")
    return next(rank for rank, i in enumerate(order, start=1) if (owners[i], hashes[i]) in keys)


def test_a_passage_is_worth_its_nearest_paragraph_s_rank(digest):
    question, conn = digest
    assert question["kind"] == "open"
    (evidence,) = question["evidence"]
    assert _paragraph_rank(conn, question["question"], evidence) <= NEAR
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=4000)).text
    assert count_tokens(text) <= 4000
    assert factcheck.normalise(evidence) in factcheck.normalise(text)


# Asked in other words ("watching which flowers the hives visit" for "the bee foraging study"),
# answered by one paragraph of a lab-notebook session.
FLOORED_ID = "s3-058"


def test_a_note_whose_passage_is_floored_high_is_read(set3):
    """The answering passage's paragraph is among the nearest by meaning, so its floor
    (``at_least_alone``) is well above most passages', but by fused share it is ~35th: the notes
    read for packing were those of the best passages by share alone (``prepare.passage_owners``),
    its note was not among them, and at 2,000 tokens the answer was in no context (d736bcb),
    though a log's passage is packed at its floor. The notes of the best passages by floor are
    read too."""
    from ctx.assemble.passage_rank import rank_passages
    from ctx.assemble.similarity import text_vector
    from ctx.store import as_store

    questions, conn = set3
    question = questions[FLOORED_ID]
    assert question["kind"] == "open"
    (evidence,) = question["evidence"]
    reader = as_store(conn).reader()
    ranking = rank_passages(reader, question["question"], text_vector(reader, question["question"]))
    rows = reader.passages_of(sorted(set(ranking.node_of.values())))
    (pid,) = [p.id for found in rows.values() for p in found
              if p.id in ranking.passages and factcheck.normalise(evidence) in factcheck.normalise(p.text)]
    by_share = sorted(ranking.passages, key=lambda p: -ranking.passages[p])
    assert ranking.floors[pid] > 2 * ranking.passages[pid]
    assert by_share.index(pid) >= 20  # past what 2,000 tokens read by share (2 x 2,000 + 200 at 250 a passage)
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=2000)).text
    assert count_tokens(text) <= 2000
    assert factcheck.normalise(evidence) in factcheck.normalise(text)
