"""Progress moves or names what it waits for (issue 20, item 5): an import's last phase names each
step and counts the long one; the embedding bar's rate is in texts, the unit it counts."""

from __future__ import annotations

from conftest import FIXTURES


def test_the_last_phase_of_an_import_names_its_steps_and_counts_passages(tmp_path):
    from ctx.graph import Graph

    seen: list[tuple[str, int, int]] = []
    with Graph.open(tmp_path / "g.db", create=True) as graph:
        graph.import_path(FIXTURES / "demo-vault", progress=lambda phase, done, total: seen.append((phase, done, total)))
    saving = [s for s in seen if s[0].startswith("saving")]
    steps = list(dict.fromkeys(phase for phase, _, _ in saving))
    assert steps == ["saving: tags", "saving: links", "saving: indexes", "saving: privacy", "saving: passages",
                     "saving: counts", "saving"]
    passages = [(done, total) for phase, done, total in saving if phase == "saving: passages"]
    notes = sum(1 for p in (FIXTURES / "demo-vault").rglob("*.md"))
    # It moves: from nothing to every note looked at, the total known from the start.
    assert passages[0][0] == 0 and passages[-1][0] == passages[-1][1] and passages[-1][1] >= notes
    assert all(total == passages[0][1] for _, total in passages)


def test_the_embedding_rate_is_in_texts():
    from ctx.commands.progress import UNITS
    from ctx.semantic.embedding import EMBEDDING

    # embed_graph counts node texts and passage texts alike as its work.
    assert UNITS[EMBEDDING] == "texts"
