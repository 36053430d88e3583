"""The free-text topics' vector cache (query_embeddings) keeps its newest entries and no more."""

from __future__ import annotations

import numpy as np

from ctx.store import vectors
from ctx.store.db import connect


def test_the_query_vector_cache_keeps_only_its_newest_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(vectors, "QUERY_CACHE_ENTRIES", 5)
    conn = connect(tmp_path / "g.db", create=True)
    questions = [f"question number {n}?" for n in range(8)]
    for n, question in enumerate(questions):
        vector = np.full(4, n + 1, dtype=np.float32)
        vectors.cache_query_vector(conn, "m", question, vector)
    conn.commit()
    assert conn.execute("SELECT COUNT(*) FROM query_embeddings").fetchone()[0] == 5
    for n, question in enumerate(questions):
        cached = vectors.cached_query_vector(conn, "m", question)
        if n < 3:
            assert cached is None, question  # the oldest three were pruned
        else:
            assert cached is not None and float(cached[0]) == n + 1
    # Asking an old question again stores it as the newest; the oldest left goes.
    vectors.cache_query_vector(conn, "m", questions[0], np.ones(4, dtype=np.float32))
    assert vectors.cached_query_vector(conn, "m", questions[0]) is not None
    assert vectors.cached_query_vector(conn, "m", questions[3]) is None
    conn.close()
