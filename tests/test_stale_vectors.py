"""A note edited or added since the last `ctx embed` competes fully through full text: an embedded
graph never ranks it below where the same graph without vectors would, and never hides it.

Property-tested on random vaults with random edits: each vault is imported and embedded (the
deterministic fake encoder), edited, re-imported without embedding; a twin graph imports the edited
vault and is never embedded. The rankings of the two are compared item by item.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_encoder import FAKE_MODEL, HashEncoder

from ctx.assemble import BuildRequest, build_context
from ctx.assemble.passage_rank import PassageRanking, rank_passages
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.semantic.fusion import reciprocal_rank_fusion
from ctx.semantic.topic import from_text
from ctx.store import connect, vectors
from ctx.store.view import GraphView

WORDS = (
    "apple river stone cloud maple tiger lemon violet harbor copper meadow falcon orbit pepper"
    " quartz saddle timber walnut basil cedar"
).split()
RARE = "zephyrine"  # in no note until an edit puts it in one


# -- the fusion itself ---------------------------------------------------------------------------


def _position(scores: dict, item, *, ties_first: bool) -> int:
    """1-based position of ``item``; tied items count before it unless ``ties_first``."""
    own = scores[item]
    if ties_first:
        return 1 + sum(1 for s in scores.values() if s > own)
    return sum(1 for s in scores.values() if s >= own)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(st.integers(0, 40), min_size=1, max_size=30, unique=True),
    data=st.data(),
    k=st.sampled_from([1, 5, 60]),
)
def test_an_item_a_ranking_cannot_see_never_falls_below_the_other_rankings_order(items, data, k):
    full_text = data.draw(st.permutations(items))
    feedback = data.draw(st.lists(st.sampled_from(items), unique=True))
    unseen = set(data.draw(st.lists(st.sampled_from(items), unique=True)))
    pool = [i for i in range(50) if i not in unseen]
    nearest = data.draw(st.lists(st.sampled_from(pool), unique=True)) if pool else []
    without = dict(reciprocal_rank_fusion([r for r in (full_text, feedback) if r], k=k))
    fused = dict(reciprocal_rank_fusion(
        [r for r in (full_text, nearest, feedback) if r], k=k,
        unseen=[None, unseen, None] if nearest else None,
    ) if nearest else reciprocal_rank_fusion([r for r in (full_text, feedback) if r], k=k))
    for item in unseen & set(without):
        assert _position(fused, item, ties_first=True) <= _position(without, item, ties_first=False)


# -- embedded vs never embedded, on random vaults --------------------------------------------------

section = st.lists(st.sampled_from(WORDS), min_size=3, max_size=30).map(" ".join)
note = st.tuples(st.lists(section, min_size=1, max_size=3), st.lists(st.integers(0, 9), max_size=2))
edit = st.tuples(
    st.integers(0, 9),
    st.sampled_from(["append", "rewrite", "delete"]),
    st.lists(st.sampled_from(WORDS), min_size=2, max_size=12).map(" ".join),
)


def _text(title: str, sections: list[str], links: list[int], count: int) -> str:
    parts = [f"# {title}"]
    for i, words in enumerate(sections):
        if i:
            parts.append(f"## {words.split()[0].title()} {i}")
        parts.append(words + ".")
    parts += [f"See [[Note {j % count}]]." for j in links]
    return "\n\n".join(parts) + "\n"


def _rankings_agree(embedded: sqlite3.Connection, plain: sqlite3.Connection, text: str) -> None:
    topic = from_text(GraphView(embedded), [text])
    if topic.vector is None:  # every vector stale: the embedded graph ranks as the plain one does
        return
    ranked = rank_passages(GraphView(embedded, include_private=False), text, topic)
    baseline = rank_passages(GraphView(plain, include_private=False), text, None)
    key_e = {r[0]: (r[1], r[2]) for r in embedded.execute("SELECT id, node_id, ord FROM passages")}
    key_p = {r[0]: (r[1], r[2]) for r in plain.execute("SELECT id, node_id, ord FROM passages")}
    unvectored = {key_e[p] for p in vectors.unembedded_passages(embedded, FAKE_MODEL.name, list(key_e))}
    shares_e = {key_e[p]: s for p, s in ranked.passages.items()}
    shares_p = {key_p[p]: s for p, s in baseline.passages.items()}
    for passage in unvectored & set(shares_p):
        assert _position(shares_e, passage, ties_first=True) <= _position(shares_p, passage, ties_first=False)
    # A note all of whose matching passages changed ranks by them: never below its place in the
    # full-text ranking the fusion is given (a note is as relevant as its best passage).
    changed = _wholly_unvectored(baseline, key_p, unvectored)
    full_text: dict[str, float] = {}
    for pid, share in baseline.passages.items():
        full_text[baseline.node_of[pid]] = max(full_text.get(baseline.node_of[pid], 0.0), round(share, 6))
    for node in changed:
        assert _position(ranked.nodes, node, ties_first=True) <= _position(full_text, node, ties_first=False)


def _wholly_unvectored(ranking: PassageRanking, key: dict, unvectored: set) -> set[str]:
    out = set(ranking.nodes)
    for pid, node in ranking.node_of.items():
        if pid in ranking.passages and key[pid] not in unvectored:
            out.discard(node)
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(
    notes=st.lists(note, min_size=3, max_size=8),
    edits=st.lists(edit, min_size=1, max_size=6),
    new_notes=st.lists(note, max_size=2),
    rare_in=st.integers(0, 20),
    query_words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=3, unique=True),
)
def test_edited_and_new_notes_rank_as_high_as_without_vectors(tmp_path_factory, notes, edits, new_notes, rare_in,
                                                               query_words):
    root = tmp_path_factory.mktemp("stale")
    vault = root / "vault"
    vault.mkdir()
    count = len(notes)
    for i, (sections, links) in enumerate(notes):
        (vault / f"Note {i}.md").write_text(_text(f"Note {i}", sections, links, count), encoding="utf-8")
    embedded = connect(root / "embedded.db", create=True)
    import_path(embedded, vault)
    embed_graph(embedded, FAKE_MODEL, encoder_factory=HashEncoder)
    for index, kind, words in edits:
        path = vault / f"Note {index % count}.md"
        if not path.exists():
            continue
        if kind == "append":
            path.write_text(path.read_text(encoding="utf-8") + f"\n{words}.\n", encoding="utf-8")
        elif kind == "rewrite":
            path.write_text(_text(path.stem, [words], [], count), encoding="utf-8")
        else:
            path.unlink()
    for i, (sections, links) in enumerate(new_notes):
        (vault / f"New {i}.md").write_text(_text(f"New {i}", sections, links, count), encoding="utf-8")
    files = sorted(vault.glob("*.md"))
    if not files:
        return
    target = files[rare_in % len(files)]
    target.write_text(target.read_text(encoding="utf-8") + f"\nThe ledger lists {RARE} entries.\n", encoding="utf-8")
    import_path(embedded, vault)  # as `ctx sync --no-embed` leaves it
    plain = connect(root / "plain.db", create=True)
    import_path(plain, vault)
    try:
        for text in (" ".join(query_words) or WORDS[0], " ".join([*query_words, RARE])):
            query = HashEncoder(FAKE_MODEL).encode([text])[0]
            vectors.cache_query_vector(embedded, FAKE_MODEL.name, text, query)
            _rankings_agree(embedded, plain, text)
        # The words only the edit wrote are found on the embedded graph whenever on the plain one.
        question = " ".join([*query_words, RARE])
        shown = build_context(embedded, BuildRequest((question,), lens="answer", max_tokens=400)).text
        baseline = build_context(plain, BuildRequest((question,), lens="answer", max_tokens=400)).text
        assert (RARE in shown) >= (RARE in baseline)
    finally:
        embedded.close()
        plain.close()
        shutil.rmtree(root, ignore_errors=True)


# -- the repro, through the CLI ------------------------------------------------------------


def _cache_question(db: Path, text: str) -> None:
    """What the build would embed the question as, with the fake model (no model loads)."""
    conn = connect(db)
    vectors.cache_query_vector(conn, FAKE_MODEL.name, text, HashEncoder(FAKE_MODEL).encode([text])[0])
    conn.close()


def test_a_note_edited_or_added_after_embed_is_found_by_its_own_words(tmp_path, run_cli, db_path):
    from conftest import FIXTURES

    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    assert run_cli("import", str(vault)).exit_code == 0
    conn = connect(db_path)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    conn.close()
    notes = sorted(vault.rglob("*.md"))
    edited = notes[len(notes) // 2]
    edited.write_text(edited.read_text(encoding="utf-8") + "\nThe badger checklist has MARMOT-11 items.\n",
                      encoding="utf-8")
    (vault / "Heron ledger.md").write_text("# Heron ledger\n\nThe heron ledger lists FALCON-8 entries.\n",
                                           encoding="utf-8")
    assert run_cli("sync", "--no-embed").exit_code == 0
    conn = connect(db_path)
    assert vectors.status(conn).fresh < vectors.status(conn).nodes  # stale, as the repro is
    conn.close()
    changed = {"badger": edited.relative_to(vault).as_posix(), "what does the heron ledger list": "Heron ledger.md"}
    for question, word in (("badger", "MARMOT-11"), ("what does the heron ledger list", "FALCON-8")):
        _cache_question(db_path, question)
        for lens in ("auto", "answer", "question"):
            out = run_cli("build", question, "--max-tokens", "600", "--lens", lens)
            assert out.exit_code == 0, out.stderr
            assert word in out.stdout, (lens, question)
        # research shares 600 tokens among its ten best sources: the changed note is the first.
        out = run_cli("build", question, "--max-tokens", "600", "--lens", "research", "--format", "json")
        assert json.loads(out.stdout)["nodes"][0]["source_path"] == changed[question]
