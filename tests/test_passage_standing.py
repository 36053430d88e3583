"""A log's passage is worth its relevance times its note's standing, damped (issue 23,
``packing_order.passage_units``, ``passage_view.STANDING``; logs told by ``note_shape``).

A lab notebook: the sequencing run's own log (the first note for the question: its title names
the run, and its first week says what Halima *will* record) and twelve days of bench notes, one
of which says what she recorded. Every week of the run's log matches the question on its title
alone; the answering paragraph matches it better than any of them, in a note ranked below the
log. All thirteen are logs (their weeks and benches do not repeat their titles' words). Priced at
the note's share of the best score times the passage's relevance, the log's weeks (share 1,
relevance 0.38) outbid the answer (share 0.61, relevance 0.54) and the answer was shown at no
budget up to 1,200 tokens; the note's standing to the power ``STANDING`` prices the answer at
0.48.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

CHATTER = [
    "Restocked gloves and tips; we are low on the small ones.",
    "Cleaned the water bath and changed the water; it had started to smell.",
    "Ran the weekly backup of the analysis folder to the network drive.",
    "Tidied the freezer rack; three unlabeled tubes went in the waste.",
    "Ordered a replacement stir bar set; the old ones have lost their coating.",
    "The centrifuge made the grinding noise for a minute, then settled.",
    "Autoclaved bottles of medium and labelled them for the week.",
    "Spent the afternoon on statistics, the mixed model finally converges.",
    "Read two papers on sampling bias over lunch; one is useful for the methods.",
]
QUESTION = "What read count did Halima record for the sequencing run?"
PLAN = "Halima will record the read count of the sequencing run next week."
ANSWER = "Halima measured the sequencing run again: the read count came out at 822 million reads."
ANSWER_DAY = 4


def chatter(start: int, count: int) -> str:
    return " ".join(CHATTER[(start + i) % len(CHATTER)] for i in range(count))


def write_notebook(vault: Path) -> None:
    weeks = [f"## Week 1\n\n{chatter(0, 4)} {PLAN} {chatter(3, 4)}"]
    weeks += [f"## Week {k + 1}\n\n{chatter(k, 4)} The booking was confirmed again. {chatter(k + 3, 4)}" for k in range(1, 8)]
    (vault / "Sequencing run.md").write_text("---\ndate: 2022-02-01\n---\n" + "\n\n".join(weeks) + "\n")
    for day in range(1, 13):
        benches = [f"## Bench {k + 1}\n\n{chatter(day + k, 3)}" for k in range(8)]
        if day == ANSWER_DAY:
            benches[5] = f"## Bench 6\n\n{chatter(day, 1)} {ANSWER}"
        (vault / f"Lab notebook {day:02d}.md").write_text(
            f"---\ndate: 2022-03-{day:02d}\n---\n" + "\n\n".join(benches) + "\n")


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("standing")
    vault = root / "vault"
    vault.mkdir()
    write_notebook(vault)
    conn = connect(root / "graph.db", create=True)
    import_path(conn, vault)
    return conn


@pytest.mark.parametrize("budget", [500, 800, 1200])
def test_a_later_note_s_answer_outbids_the_first_note_s_weak_passages(notebook, budget):
    text = build_context(notebook, BuildRequest((QUESTION,), max_tokens=budget)).text
    assert count_tokens(text) <= budget
    # The first note still shows its best passage; the answer beside it, with its day.
    assert PLAN in " ".join(text.split())
    assert ANSWER in " ".join(text.split()), text
    assert f"2022-03-{ANSWER_DAY:02d}" in text

