"""Vector search, rank fusion, the matrix cache and the query-vector cache."""

from __future__ import annotations

import numpy as np
import pytest
from semantic_vault import BREAD_QUESTION, write_vault

from ctx.importers.engine import import_path
from ctx.store import vectors as vector_store
from ctx.semantic.fusion import reciprocal_rank_fusion
from ctx.semantic.search import VectorIndex, load_index
from ctx.store import connect, vector_cache
from ctx.store.view import GraphView


def _unit(rows: list[list[float]]) -> np.ndarray:
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_nearest_is_best_first_with_ties_broken_by_id():
    index = VectorIndex(["c", "b", "a", "d"], _unit([[1, 0], [1, 0], [0, 1], [1, 1]]))
    hits = index.nearest(np.array([1.0, 0.0], dtype=np.float32), 3)
    assert [h[0] for h in hits] == ["b", "c", "d"]
    assert hits[0][1] == pytest.approx(1.0)
    assert index.nearest(np.array([1.0, 0.0], dtype=np.float32), 0) == []
    assert VectorIndex([], np.zeros((0, 2), dtype=np.float32)).nearest(np.ones(2), 5) == []


def test_rrf_rewards_agreement_and_is_deterministic():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "x"]])
    # Found by both beats first in one list only; equal scores (a, x) sort by id.
    assert [i for i, _ in fused] == ["b", "a", "x"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    assert reciprocal_rank_fusion([["y"], ["x"]]) == sorted(reciprocal_rank_fusion([["x"], ["y"]]))


@pytest.fixture
def fake_vectors_db(tmp_path):
    """The small vault with deterministic fake vectors (bookkeeping tests need no model)."""
    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    rng = np.random.default_rng(7)
    rows = []
    for node_id, content_hash in conn.execute("SELECT id, content_hash FROM nodes ORDER BY id"):
        v = rng.standard_normal(16).astype(np.float32)
        rows.append((node_id, content_hash, v / np.linalg.norm(v)))
    vector_store.write_vectors(conn, "fake", rows)
    vector_store.set_active_model(conn, "fake")
    return conn, db


def test_matrix_cache_is_written_reused_and_invalidated(fake_vectors_db, monkeypatch):
    conn, db = fake_vectors_db
    monkeypatch.setattr(vector_cache, "CACHE_MIN_ROWS", 1)
    first = load_index(GraphView(conn), "fake")
    cache_dir = db.with_name(db.name + ".vectors")
    files = sorted(p.name for p in cache_dir.iterdir())
    assert len(files) == 2
    again = load_index(GraphView(conn), "fake")
    assert isinstance(again.matrix, np.memmap) and again.ids == first.ids
    assert np.array_equal(np.asarray(again.matrix), first.matrix)
    # A changed vector changes the state key: the old files go, the new matrix has the change.
    v = np.zeros(16, dtype=np.float32)
    v[0] = 1.0
    content_hash = conn.execute("SELECT content_hash FROM nodes WHERE id = 'Telescope'").fetchone()[0]
    vector_store.write_vectors(conn, "fake", [("Telescope", content_hash, v)])
    changed = load_index(GraphView(conn), "fake")
    assert np.array_equal(changed.matrix[changed.ids.index("Telescope")], v)
    assert sorted(p.name for p in cache_dir.iterdir()) != files
    assert len(list(cache_dir.iterdir())) == 2


def test_stale_vectors_are_not_searched(fake_vectors_db):
    conn, _ = fake_vectors_db
    conn.execute("UPDATE nodes SET content_hash = 'edited' WHERE id = 'Tomatoes'")
    index = load_index(GraphView(conn), "fake")
    assert "Tomatoes" not in index.ids
    assert vector_store.status(conn).missing == 1


def test_query_vectors_are_cached_in_the_graph(tmp_path):
    pytest.importorskip("tokenizers")
    from ctx.semantic.models import resolve_model
    from ctx.semantic.topic import from_text

    if resolve_model(None).path is None:
        pytest.skip("default model package not installed")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path / "vault"))
    first_hash = conn.execute("SELECT content_hash FROM nodes LIMIT 1").fetchone()
    vector_store.write_vectors(conn, "all-MiniLM-L6-v2", [("Kitchen", first_hash[0], np.ones(384, np.float32) / np.sqrt(384))])
    conn.execute("UPDATE nodes SET content_hash = ? WHERE id = 'Kitchen'", first_hash)
    vector_store.set_active_model(conn, "all-MiniLM-L6-v2")
    first = from_text(GraphView(conn), [BREAD_QUESTION])
    assert first.method == "numpy"
    second = from_text(GraphView(conn), ["  How do I make   bread rise?"])
    assert second.method == "query-cache"
    assert np.array_equal(first.vector, second.vector)


def test_no_embeddings_gives_a_reason_not_an_error(tmp_path):
    from ctx.semantic.topic import from_seeds, from_text

    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, write_vault(tmp_path / "vault"))
    for topic in (from_text(GraphView(conn), ["anything"]), from_seeds(GraphView(conn), ["Kitchen"])):
        assert topic.vector is None
        assert "ctx embed" in topic.note
