"""Similarity inside `ctx build`: ranking direction, hybrid resolution, the semantic section,
fallback notes, and no torch on the build path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from semantic_vault import BREAD_QUESTION, write_vault

from ctx.assemble import BuildRequest, build_context
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.semantic.models import resolve_model
from ctx.store import connect

pytest.importorskip("sentence_transformers", reason="needs the embed extra")

SAME_TIME = 1_700_000_000


def _import(folder: Path, db: Path):
    vault = write_vault(folder)
    # Equal times: recency cannot separate the candidates, so only similarity can.
    for note in vault.iterdir():
        os.utime(note, (SAME_TIME, SAME_TIME))
    conn = connect(db, create=True)
    import_path(conn, vault)
    return conn


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same vault twice: embedded, and never embedded."""
    root = tmp_path_factory.mktemp("semantic-build")
    embedded = root / "embedded.db"
    conn = _import(root / "vault-a", embedded)
    embed_graph(conn, resolve_model(None))
    conn.close()
    plain = root / "plain.db"
    _import(root / "vault-b", plain).close()
    return embedded, plain


def _build(db: Path, *topics: str, **options) -> dict:
    request = BuildRequest(topics=topics, format="json", max_tokens=options.pop("max_tokens", 4000), **options)
    result = build_context(connect(db), request)
    return json.loads(result.text)


def _order(doc: dict) -> list[str]:
    return [n["id"] for n in doc["nodes"]]


def test_similarity_moves_the_topic_s_kind_of_note_up(graphs):
    embedded, plain = graphs
    # Kitchen links to Sourdough starter, Knife care and Orbit basics: all one hop away.
    with_vectors = _order(_build(embedded, "Kitchen"))
    without = _order(_build(plain, "Kitchen"))
    # Without similarity the tie breaks by id; with it, the cooking notes beat the orbit note.
    assert without.index("Orbit basics") < without.index("Sourdough starter")
    assert with_vectors.index("Sourdough starter") < with_vectors.index("Orbit basics")
    assert with_vectors.index("Knife care") < with_vectors.index("Orbit basics")


def test_scoring_note_names_the_model_or_the_fallback(graphs):
    embedded, plain = graphs
    doc = _build(embedded, "Kitchen")
    assert doc["meta"]["scoring"]["similarity"] == "embeddings: all-MiniLM-L6-v2, topic nodes' own vectors"
    assert all("similarity" in n["score_parts"] for n in doc["nodes"])
    fallback = _build(plain, "Kitchen")
    assert "no embeddings" in fallback["meta"]["scoring"]["similarity"]
    assert fallback["meta"]["scoring"]["weights"]["similarity"] == 0.0


def test_a_question_sharing_no_word_with_its_note_finds_it(graphs):
    embedded, plain = graphs
    doc = _build(embedded, BREAD_QUESTION, lens="general")
    resolved = doc["meta"]["resolved"][0]
    assert resolved["how"] == "hybrid"
    assert resolved["ids"][0] == "Sourdough starter"
    # The default lens (question, for a question) puts the note first too.
    default = build_context(connect(embedded), BuildRequest(topics=(BREAD_QUESTION,), format="json"))
    assert json.loads(default.text)["nodes"][0]["id"] == "Sourdough starter"
    # Full-text search alone has no content word to go on.
    result = build_context(connect(plain), BuildRequest(topics=(BREAD_QUESTION,), lens="general", format="json"))
    assert "Sourdough starter" not in json.loads(result.text)["meta"].get("resolved", [{}])[0].get("ids", [])


def test_repeated_question_is_answered_from_the_cache_with_the_same_bytes(graphs):
    embedded, _ = graphs
    conn = connect(embedded)
    first = build_context(conn, BuildRequest(topics=("what keeps satellites up?",))).text
    cached = conn.execute("SELECT COUNT(*) FROM query_embeddings").fetchone()[0]
    again = build_context(conn, BuildRequest(topics=("what keeps satellites up?",))).text
    assert first == again
    assert conn.execute("SELECT COUNT(*) FROM query_embeddings").fetchone()[0] == cached >= 1


def test_semantic_section_adds_similar_nodes_the_walk_did_not_reach(graphs, tmp_path):
    embedded, _ = graphs
    lens = tmp_path / "similar.yaml"
    lens.write_text(
        "name: similar\n"
        "depth: 1\n"
        "edges:\n  link: {direction: both, weight: 1.0}\n"
        "semantic: {top_k: 2, min_similarity: 0.0}\n"
        "sections:\n"
        "  - {name: Topic, select: {seed: true}}\n"
        "  - {name: Similar, select: {semantic: true}}\n"
        "  - {name: Linked, select: rest}\n",
        encoding="utf-8",
    )
    doc = _build(embedded, "Telescope", lens=str(lens))
    sections = {n["id"]: n["section"] for n in doc["nodes"]}
    assert sections["Telescope"] == "Topic"
    assert sections["Orbit basics"] == "Linked"  # reached by the walk: not a semantic extra
    similar = [i for i, s in sections.items() if s == "Similar"]
    assert len(similar) == 2 and "Orbit basics" not in similar and "Telescope" not in similar


def test_stale_embeddings_are_reported(tmp_path):
    conn = _import(tmp_path / "vault", tmp_path / "g.db")
    embed_graph(conn, resolve_model(None))
    note = tmp_path / "vault" / "Sourdough starter.md"
    note.write_text("Rye flour makes a sour, dense loaf.\n", encoding="utf-8")
    os.utime(note, (time.time(), time.time()))
    import_path(conn, tmp_path / "vault")
    doc = json.loads(build_context(conn, BuildRequest(topics=("Kitchen",), format="json")).text)
    note_text = doc["meta"]["scoring"]["similarity"]
    assert "have no up-to-date embedding" in note_text and "ctx embed" in note_text
    stale = next(n for n in doc["nodes"] if n["id"] == "Sourdough starter")
    assert stale["score_parts"]["similarity"] == 0.0


_NO_TORCH = """
import json, sys
from ctx.assemble import BuildRequest, build_context
from ctx.store import open_graph
result = build_context(open_graph(sys.argv[1]), BuildRequest(topics=(sys.argv[2],), lens=sys.argv[3], format="json"))
meta = json.loads(result.text)["meta"]
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"heavy": heavy, "similarity": meta.get("scoring", {}).get("similarity"),
                  "found": result.found}))
"""


@pytest.mark.parametrize(
    "topic, lens", [("Kitchen", "general"), (BREAD_QUESTION, "general"), (BREAD_QUESTION, "auto")]
)
def test_build_never_imports_torch(graphs, topic, lens):
    embedded, _ = graphs
    out = subprocess.run(
        [sys.executable, "-c", _NO_TORCH, str(embedded), topic, lens], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["heavy"] == [] and report["found"]
    if lens == "general":  # the question lens's lean header leaves the scoring note out
        assert report["similarity"].startswith("embeddings: all-MiniLM-L6-v2")


def test_a_build_reads_the_passage_vectors_once(graphs):
    """The resolver and the collector both rank the question's passages; the vectors (a build's
    largest read on a big embedded graph) and the full-text hits are read once per build."""
    conn = connect(graphs[0])
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    first = build_context(conn, BuildRequest((BREAD_QUESTION,), max_tokens=1500))
    vector_reads = [s for s in statements if "FROM passages p JOIN passage_vectors" in " ".join(s.split())]
    assert len(vector_reads) == 1, vector_reads
    statements.clear()
    again = build_context(conn, BuildRequest((BREAD_QUESTION,), max_tokens=1500))
    assert first.text == again.text
    # The memo lives only as long as one build: the next build reads the vectors again.
    assert sum("passage_vectors" in s for s in statements) >= 1
