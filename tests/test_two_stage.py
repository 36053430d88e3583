"""`ctx embed`'s first stage and the builds it serves: static vectors for every passage in
seconds, then each question's candidates ranked by the model's own vectors, computed when missing
and kept by content hash (``ctx.semantic.first_stage``, ``ctx.semantic.two_stage``).

Real model throughout (the bundled MiniLM, and the static model ctx distils from it once per
machine: ``CTX_MODEL_CACHE`` in conftest keeps one for the whole run)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from semantic_vault import BREAD_QUESTION, NOTES, write_vault

from ctx.assemble import BuildRequest, build_context
from ctx.importers.engine import import_path
from ctx.semantic import first_stage, two_stage
from ctx.semantic.embedding import embed_graph
from ctx.semantic.models import resolve_model
from ctx.store import connect

pytest.importorskip("sentence_transformers", reason="needs the embed extra")

MODEL = "all-MiniLM-L6-v2"
STATIC = first_stage.name_for(MODEL)
WORDS = (
    "ledger invoice harbour ferry granite quarry violin rehearsal glacier moraine orchard cider"
    " compiler linker turbine rotor tapestry loom marathon stride lantern wick kiln pottery"
).split()


def _filler(count: int) -> dict[str, str]:
    """``count`` notes about nothing the questions ask, one passage each (seeded, so the vault is
    the same every run)."""
    rng = random.Random(21)
    return {f"Filler {i:03d}.md": " ".join(rng.choice(WORDS) for _ in range(14)) + ".\n" for i in range(count)}


def _graph(folder: Path, db: Path, notes: dict[str, str]) -> None:
    conn = connect(db, create=True)
    import_path(conn, write_vault(folder, notes))
    conn.close()


def _count(db: Path, sql: str, *args: object) -> int:
    conn = connect(db)
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def _distinct_passages(db: Path) -> int:
    return _count(db, "SELECT COUNT(DISTINCT hash) FROM passages")


def _model_vectors(db: Path, model: str = MODEL) -> int:
    return _count(db, "SELECT COUNT(*) FROM passage_vectors WHERE model = ?", model)


@pytest.fixture(scope="module")
def fast_graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The small semantic vault, and the same with 320 filler notes, each imported and embedded
    with `ctx embed --fast` (the first stage only); plus the small vault never embedded."""
    root = tmp_path_factory.mktemp("two-stage")
    out = {}
    for name, notes in (("small", NOTES), ("large", NOTES | _filler(320))):
        db = root / f"{name}.db"
        _graph(root / name, db, notes)
        conn = connect(db)
        report = embed_graph(conn, resolve_model(None), first_stage_only=True)
        conn.close()
        assert report.first_stage == STATIC and not report.complete
        assert report.static_passages == _distinct_passages(db)
        out[name] = db
    _graph(root / "plain", root / "plain.db", NOTES)
    out["plain"] = root / "plain.db"
    return out


def _copy(db: Path, tmp_path: Path, name: str = "copy.db") -> Path:
    target = tmp_path / name
    shutil.copyfile(db, target)
    return target


def _build(db: Path, question: str, **options: object) -> str:
    conn = connect(db)
    try:
        return build_context(conn, BuildRequest(topics=(question,), format="json", **options)).text  # type: ignore[arg-type]
    finally:
        conn.close()


def test_the_first_stage_gives_every_passage_a_static_vector_and_nothing_else(fast_graphs):
    db = fast_graphs["large"]
    assert _model_vectors(db, STATIC) == _distinct_passages(db) > 320
    assert _model_vectors(db) == 0
    assert _count(db, "SELECT COUNT(*) FROM embeddings") == 0
    conn = connect(db)
    assert conn.execute("SELECT value FROM meta WHERE key = ?", (first_stage.SETTING,)).fetchone()[0] == STATIC
    # The static model's vectors are its own (256 dimensions), not the model's (384).
    assert [tuple(r) for r in conn.execute("SELECT DISTINCT dim FROM passage_vectors")] == [(256,)]
    conn.close()


def test_a_paraphrase_is_answered_at_the_first_stage(fast_graphs, tmp_path):
    """No word of the question is in its note: full text alone cannot find it, the first stage
    does -- through the model's vectors of the candidates, since the graph has no other."""
    db = _copy(fast_graphs["small"], tmp_path)
    doc = json.loads(_build(db, BREAD_QUESTION))
    assert doc["nodes"][0]["id"] == "Sourdough starter"
    plain = json.loads(_build(fast_graphs["plain"], BREAD_QUESTION))
    assert "Sourdough starter" not in [n["id"] for n in plain["nodes"]][:1]
    # The candidates (every passage of this small vault) now have the model's vectors.
    assert _model_vectors(db) == _distinct_passages(db)


def test_only_the_candidates_are_embedded_and_kept_for_the_next_question(fast_graphs, tmp_path):
    db = _copy(fast_graphs["large"], tmp_path)
    first = _build(db, BREAD_QUESTION)
    assert json.loads(first)["nodes"][0]["id"] == "Sourdough starter"
    embedded = _model_vectors(db)
    assert two_stage.LAST["embedded"] == embedded == two_stage.LAST["candidates"]
    # The static model's nearest STATIC_K plus full text's top LEXICAL_B: far from every passage.
    assert 0 < embedded <= two_stage.STATIC_K + two_stage.LEXICAL_B < _distinct_passages(db)
    # Asked again: every candidate's vector is stored, nothing is embedded, the bytes are the same.
    again = _build(db, BREAD_QUESTION)
    assert two_stage.LAST["embedded"] == 0 and _model_vectors(db) == embedded
    assert again == first


def test_a_question_does_not_depend_on_what_earlier_questions_embedded(fast_graphs, tmp_path):
    """The candidates are a function of the graph and the question; vectors another question
    stored only save work. (Their values may differ in the last bits -- bfloat16 sums depend on
    the batch a text was embedded in -- so near-ties among this vault's look-alike filler notes
    may order differently; the answer does not move.)"""
    fresh = _copy(fast_graphs["large"], tmp_path, "fresh.db")
    used = _copy(fast_graphs["large"], tmp_path, "used.db")
    _build(used, "what keeps satellites up in the sky?")
    before = _model_vectors(used)
    alone = json.loads(_build(fresh, BREAD_QUESTION))
    candidates = two_stage.LAST["candidates"]
    after_other = json.loads(_build(used, BREAD_QUESTION))
    assert two_stage.LAST["candidates"] == candidates
    assert [n["id"] for n in after_other["nodes"]][:3] == [n["id"] for n in alone["nodes"]][:3]
    assert two_stage.LAST["embedded"] < candidates  # some were stored already
    assert _model_vectors(used) > before


def test_candidate_vectors_are_the_model_s_own(fast_graphs, tmp_path):
    """What a build stores for a candidate is what `ctx embed` would store for its text."""
    from ctx.semantic.encoder import DocumentEncoder

    db = _copy(fast_graphs["small"], tmp_path)
    _build(db, BREAD_QUESTION)
    conn = connect(db)
    rows = conn.execute(
        "SELECT p.title, p.context, p.heading, p.text, v.vector FROM passage_texts p"
        " JOIN passage_vectors v ON v.model = ? AND v.hash = p.hash ORDER BY p.id", (MODEL,),
    ).fetchall()
    conn.close()
    from ctx.store.passage_reads import embed_text

    reference = DocumentEncoder(resolve_model(None)).encode([embed_text(*r[:4]) for r in rows])
    stored = np.vstack([np.frombuffer(r[4], dtype="<f4") for r in rows])
    assert stored.shape == reference.shape
    assert float(np.min(np.sum(stored * reference, axis=1))) > 0.99


def test_the_full_embed_fills_the_rest_and_builds_rank_every_passage_again(fast_graphs, tmp_path):
    db = _copy(fast_graphs["large"], tmp_path)
    _build(db, BREAD_QUESTION)
    kept = _model_vectors(db)
    conn = connect(db)
    report = embed_graph(conn, resolve_model(None))
    assert report.static_passages == 0  # the first stage had nothing left to do
    # Only the passages no question had embedded.
    assert report.passages == _distinct_passages(db) - kept
    assert conn.execute("SELECT value FROM meta WHERE key = ?", (first_stage.SETTING,)).fetchone()[0] == ""
    conn.close()
    assert _model_vectors(db) == _distinct_passages(db) == _model_vectors(db, STATIC)
    two_stage.LAST.clear()
    doc = json.loads(_build(db, BREAD_QUESTION))
    assert doc["nodes"][0]["id"] == "Sourdough starter"
    assert two_stage.LAST == {}  # ranked over every passage, no candidates


_NUMPY_ONLY = """
import json, sys
from ctx.assemble import BuildRequest, build_context
from ctx.semantic import two_stage
from ctx.store import open_graph
result = build_context(open_graph(sys.argv[1]), BuildRequest(topics=(sys.argv[2],), format="json"))
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"heavy": heavy, "first": json.loads(result.text)["nodes"][0]["id"], "last": two_stage.LAST}))
"""


def test_a_few_missing_candidates_are_embedded_without_torch(fast_graphs, tmp_path):
    db = _copy(fast_graphs["small"], tmp_path)
    assert _distinct_passages(db) <= two_stage.NUMPY_UP_TO
    out = subprocess.run(
        [sys.executable, "-c", _NUMPY_ONLY, str(db), BREAD_QUESTION], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["heavy"] == [] and report["first"] == "Sourdough starter"
    assert report["last"]["encoder"] == "numpy" and report["last"]["embedded"] == _distinct_passages(db)


def test_many_missing_candidates_are_embedded_by_torch_alone(fast_graphs, tmp_path):
    """More than NUMPY_UP_TO: torch's forward pass, without sentence-transformers' imports."""
    db = _copy(fast_graphs["large"], tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", _NUMPY_ONLY, str(db), BREAD_QUESTION], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["heavy"] == ["torch"] and report["first"] == "Sourdough starter"
    assert report["last"]["encoder"].startswith("torch") and report["last"]["embedded"] > two_stage.NUMPY_UP_TO


def test_the_torch_forward_pass_gives_sentence_transformers_vectors():
    """Many candidates are embedded by numpy_bert's forward pass in torch (only torch imported);
    its vectors are the model's, in the same precision `ctx embed` runs."""
    from ctx.semantic.encoder import DocumentEncoder
    from ctx.semantic.torch_bert import TorchBertEncoder

    texts = [*NOTES.values(), BREAD_QUESTION, "a" * 3000, "Satellites: sideways velocity."]
    model = resolve_model(None)
    reference = DocumentEncoder(model)
    ours = TorchBertEncoder(model.path, precision=reference.precision, threads=1)
    mine, theirs = ours.encode(texts, batch_size=4), reference.encode(texts)
    assert mine.shape == theirs.shape == (len(texts), 384)
    assert float(np.min(np.sum(mine * theirs, axis=1))) > 0.999
    assert np.allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)


def test_distilling_through_torch_alone_gives_sentence_transformers_piece_vectors():
    """The static model is distilled through numpy_bert's forward pass in torch (no
    sentence-transformers import); each `[CLS] piece [SEP]` row's mean output is the one
    sentence-transformers' transformer gives, over the same pieces of the vocabulary."""
    import torch

    from ctx.semantic import distil

    model = resolve_model(None)
    ours = distil._torch_pieces(model)
    reference = distil._sentence_transformer_pieces(model)
    assert ours is not None and (ours.cls, ours.sep, ours.dim) == (reference.cls, reference.sep, reference.dim)
    assert ours.vocab == reference.vocab and ours.special == reference.special
    pieces = sorted(ours.vocab.values())[1000:30000:450]  # words, subwords and symbols alike
    batch = torch.tensor([[ours.cls, i, ours.sep] for i in pieces], dtype=torch.long)
    with torch.inference_mode():
        mine, theirs = ours.forward(batch), reference.forward(batch)
    assert mine.shape == theirs.shape == (len(pieces), 384)
    cosines = np.sum(mine * theirs, axis=1) / np.linalg.norm(mine, axis=1) / np.linalg.norm(theirs, axis=1)
    assert float(np.min(cosines)) > 0.999


def test_a_machine_distilling_for_a_graph_embedded_elsewhere_says_so_on_stderr(fast_graphs, tmp_path, monkeypatch, run_cli):
    """A team graph's first stage was distilled on another machine: this machine's first question
    distils its own static model (seconds, once). `ctx build` names that wait on stderr instead of
    sitting silent, stdout holds only the context, and the answer is the one a machine that already
    had the model gives; the second question waits for nothing and says nothing."""
    db = _copy(fast_graphs["small"], tmp_path)
    expected = run_cli("build", BREAD_QUESTION, "--format", "json", db=db)
    assert expected.exit_code == 0 and "distilling" not in expected.stderr
    monkeypatch.setenv(first_stage.CACHE_ENV, str(tmp_path / "fresh-cache"))
    assert first_stage.ready(resolve_model(None)) is None  # this "machine" has never distilled it
    first = run_cli("build", BREAD_QUESTION, "--format", "json", db=db)
    assert first.exit_code == 0, first.stderr
    waits = [line for line in first.stderr.splitlines() if "distilling static model" in line]
    assert waits == ["ctx: distilling static model (a one-off wait of some seconds)"]
    assert json.loads(first.stdout)["nodes"][0]["id"] == json.loads(expected.stdout)["nodes"][0]["id"] == "Sourdough starter"
    assert first_stage.ready(resolve_model(None)) is not None
    again = run_cli("build", BREAD_QUESTION, "--format", "json", db=db)
    assert again.exit_code == 0 and "distilling" not in again.stderr
    assert again.stdout == first.stdout


def test_a_sync_keeps_a_first_stage_graph_at_its_first_stage(tmp_path):
    """After `ctx embed --fast`, a sync gives a new note's passages static vectors (seconds) and
    leaves the model's own to `ctx embed`; the new note is then found by meaning."""
    from ctx.sync import sync

    vault = write_vault(tmp_path / "vault", dict(list(NOTES.items())[:3]))
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    embed_graph(conn, resolve_model(None), first_stage_only=True)
    conn.close()
    write_vault(vault, {"Orbit basics.md": NOTES["Orbit basics.md"]})
    conn = connect(db)
    sync(conn)
    conn.close()
    assert _model_vectors(db, STATIC) == _distinct_passages(db) > 3
    assert _model_vectors(db) == 0 and _count(db, "SELECT COUNT(*) FROM embeddings") == 0
    doc = json.loads(_build(db, "what keeps satellites up in the sky?"))
    assert doc["nodes"][0]["id"] == "Orbit basics"


def _stale_line(run_cli, db: Path) -> str | None:
    built = run_cli("build", BREAD_QUESTION, db=db)
    assert built.exit_code == 0, built.stderr
    return next((line for line in built.stdout.splitlines() if line.startswith("stale:")), None)


def test_a_first_stage_graph_is_stale_only_for_passages_without_static_vectors(fast_graphs, tmp_path, run_cli):
    """After `ctx embed --fast` the model's own node vectors are made per question, by design: at
    1fdd446 every context built from such a graph said "stale: vectors 0 stale, N missing" (N =
    every node) and warned. Now only a passage without its static vector makes it stale, as an
    import that nobody embedded leaves it; counted by nodes."""
    assert _stale_line(run_cli, _copy(fast_graphs["small"], tmp_path)) is None
    lacking = _copy(fast_graphs["small"], tmp_path, "lacking.db")
    conn = connect(lacking)
    node, hash_ = conn.execute("SELECT node_id, hash FROM passages ORDER BY id LIMIT 1").fetchone()
    conn.execute("DELETE FROM passage_vectors WHERE model = ? AND hash = ?", (STATIC, hash_))
    owners = conn.execute("SELECT COUNT(DISTINCT node_id) FROM passages WHERE hash = ?", (hash_,)).fetchone()[0]
    conn.commit()
    conn.close()
    assert _stale_line(run_cli, lacking) == f"stale: vectors 0 stale, {owners} missing"


def test_stats_on_a_first_stage_graph_says_what_builds_say(fast_graphs, tmp_path, run_cli):
    """At dc7f3bd `ctx stats` on a graph after `ctx embed --fast` said "0/N nodes fresh; N
    missing (`ctx embed` or `ctx sync` updates them)", though a sync keeps such a graph at its
    first stage and builds call it fresh. Now it names the first stage, and counts as missing only
    the nodes whose passages lack static vectors, as the builds' freshness line does."""
    db = _copy(fast_graphs["small"], tmp_path)
    stats = run_cli("stats", db=db)
    assert stats.exit_code == 0, stats.stderr
    line = next(line for line in stats.stdout.splitlines() if line.startswith("embeddings:"))
    assert line.startswith(f"embeddings: first stage ({STATIC})") and "ctx sync" not in line
    listed = run_cli("sources", db=db).stdout.splitlines()[-1]
    assert listed == (f"vectors: fresh/nodes for {MODEL}; first stage ({STATIC}): each question embeds its"
                      " candidates, `ctx embed` computes them all")
    assert json.loads(run_cli("stats", "--format", "json", db=db).stdout)["embeddings"]["first_stage"] == {
        "model": STATIC, "nodes_without_static_vectors": 0,
    }
    conn = connect(db)
    hash_ = conn.execute("SELECT hash FROM passages ORDER BY id LIMIT 1").fetchone()[0]
    conn.execute("DELETE FROM passage_vectors WHERE model = ? AND hash = ?", (STATIC, hash_))
    owners = conn.execute("SELECT COUNT(DISTINCT node_id) FROM passages WHERE hash = ?", (hash_,)).fetchone()[0]
    conn.commit()
    conn.close()
    assert _stale_line(run_cli, db) == f"stale: vectors 0 stale, {owners} missing"
    lacking = run_cli("stats", db=db).stdout
    assert f"; {owners} nodes with passages lacking static vectors (`ctx sync` or `ctx embed` gives them)" in lacking
