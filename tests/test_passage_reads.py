"""A node's passages read from the store are the spans the ``passage_texts`` view defines (its
``own_text``, else the body's characters ``start`` to ``end`` with newlines trimmed), now cut from
the body read once per node: through the view, each passage row read the whole body again and
``substr`` walked it to the span, so a 250 KB single-file journal cost ~0.65 s a read. So are the
texts ``ctx embed`` embeds (``pending_passages``) and a two-stage build's candidates
(``candidate_passages``): the same texts, in the same order, as through the view."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.passage_reads import embed_text, passages_of
from ctx.store.vectors import candidate_passages, pending_passages, write_passage_vectors

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _through_the_view(conn) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for row in conn.execute("SELECT id, node_id, ord, heading, text, tokens, hash FROM passage_texts ORDER BY node_id, ord"):
        out.setdefault(row[1], []).append((row[0], row[2], row[3], row[4], row[5], row[6]))
    return out


def _write_journal(vault: Path) -> None:
    """A long single-file journal with characters of every width before and inside its spans (a
    byte offset taken for a character would cut them elsewhere), blank lines at the edges."""
    days = []
    for i in range(1, 29):
        days.append(f"## 2024-02-{i:02d}\n\n\nCafé ☕ with Zoë — 東京 trip planned 🚄 for day {i}.\n\n"
                    + "Notes on the 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 deck, ñandú sketches and a long paragraph. " * 30 + "\n\n\n")
    (vault / "Journal 2024.md").write_text("# Journal 2024\n\n" + "".join(days), encoding="utf-8")


def test_passages_are_the_views_spans_in_every_kind_of_note(tmp_path, demo_vault):
    vault = tmp_path / "vault"
    shutil.copytree(demo_vault, vault)
    _write_journal(vault)
    conn = connect(tmp_path / "g.db", create=True)
    try:
        import_path(conn, vault)
        expected = _through_the_view(conn)
        ids = [row[0] for row in conn.execute("SELECT id FROM nodes ORDER BY id")]
        got = passages_of(conn, ids)
    finally:
        conn.close()
    journal = expected["Journal 2024"]
    assert len(journal) >= 28 and any("東京" in row[3] for row in journal)
    assert set(got) == set(expected)
    for node, rows in expected.items():
        assert [(p.id, p.ord, " > ".join(p.heading), p.text, p.tokens, p.hash) for p in got[node]] == rows, node


def test_passages_of_some_nodes_only_and_in_any_order(tmp_path, demo_vault):
    conn = connect(tmp_path / "g.db", create=True)
    try:
        import_path(conn, demo_vault)
        expected = _through_the_view(conn)
        some = sorted(expected)[::3][::-1] + ["no such node"]
        got = passages_of(conn, some)
    finally:
        conn.close()
    assert set(got) == set(some[:-1])
    assert all([p.text for p in got[n]] == [row[3] for row in expected[n]] for n in got)


# -- what ctx embed and a two-stage build read: every passage's text to embed, a question's candidates --


def _pending_through_the_view(conn, model: str) -> list[tuple[str, str]]:
    """``vectors.pending_passages`` as it read through ``passage_texts`` (before reading each body once)."""
    rows = conn.execute(
        "SELECT p.hash, n.title, p.context, p.heading, p.text FROM passage_texts p JOIN nodes n ON n.id = p.node_id"
        " WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = ? AND v.hash = p.hash"
        " AND length(v.vector) = 4 * v.dim)"
        " GROUP BY p.hash ORDER BY length(p.text), p.hash",
        (model,),
    ).fetchall()
    return [(r[0], embed_text(r[1], r[2], r[3], r[4])) for r in rows]


def _candidates_through_the_view(conn, model: str, ids: list[int]) -> list[tuple]:
    """``vectors.candidate_passages`` as it read through ``passage_texts``."""
    rows = conn.execute(
        "SELECT p.id, p.node_id, p.hash, n.title, p.context, p.heading, p.text, v.vector FROM passage_texts p"
        " JOIN nodes n ON n.id = p.node_id LEFT JOIN passage_vectors v ON v.model = ? AND v.hash = p.hash"
        f" WHERE p.id IN ({','.join('?' * len(ids))}) ORDER BY p.id",
        (model, *ids),
    ).fetchall()
    return [(r[0], r[1], r[2], embed_text(r[3], r[4], r[5], r[6]), r[7]) for r in rows]


@pytest.fixture
def long_graph(tmp_path, demo_vault):
    """The demo vault, a long single-file journal (characters of every width, blank lines at the
    spans' edges), the same note twice (one text, one hash, two passages), and a Logseq outline
    (whose pages' passages hold their own text); vectors of model "m" for some passages: the
    journal's first (its first passage still to embed is not its first), one stored short (a
    vector whose length is not its dimension's is none), and a note's in the middle."""
    vault = tmp_path / "vault"
    shutil.copytree(demo_vault, vault)
    _write_journal(vault)
    for folder in ("a", "b"):
        (vault / folder).mkdir()
        (vault / folder / "Twice.md").write_text("# Twice\n\nThe same words in two places, ñ and 東京.\n", encoding="utf-8")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    import_path(conn, FIXTURES / "outline-logseq", format="logseq")
    journal = [r[0] for r in conn.execute("SELECT hash FROM passages WHERE node_id = 'Journal 2024' ORDER BY ord")]
    middle = conn.execute("SELECT hash FROM passages ORDER BY id LIMIT 1 OFFSET 20").fetchone()[0]
    write_passage_vectors(conn, "m", [(h, np.ones(4, dtype=np.float32)) for h in (journal[0], journal[5], middle)])
    conn.execute("UPDATE passage_vectors SET dim = 5 WHERE hash = ?", (journal[5],))
    yield conn
    conn.close()


def test_pending_passages_are_the_views_texts_in_the_views_order(long_graph):
    conn = long_graph
    own = conn.execute("SELECT count(*) FROM passages WHERE own_text IS NOT NULL").fetchone()[0]
    twice = conn.execute("SELECT count(DISTINCT node_id), count(DISTINCT hash) FROM passages"
                         " WHERE node_id LIKE '%Twice'").fetchone()
    assert own > 0 and tuple(twice) == (2, 1)
    for model in ("m", "another"):
        expected = _pending_through_the_view(conn, model)
        assert pending_passages(conn, model) == expected
        assert any("東京" in text for _, text in expected)
    assert len(_pending_through_the_view(conn, "another")) - len(pending_passages(conn, "m")) == 2


def test_candidate_passages_are_the_views_texts_and_vectors(long_graph):
    conn = long_graph
    ids = [r[0] for r in conn.execute("SELECT id FROM passages ORDER BY id")]
    for asked in (ids, ids[::3][::-1] + [10**9], [ids[-1]], []):
        expected = _candidates_through_the_view(conn, "m", asked) if asked else []
        got = candidate_passages(conn, "m", asked)
        assert [r[:4] for r in got] == [r[:4] for r in expected]
        assert [None if r[4] is None else r[4].tobytes() for r in got] == [r[4] for r in expected]
    assert sum(r[4] is not None for r in candidate_passages(conn, "m", ids)) >= 3


def test_each_body_is_read_once_not_once_a_passage(long_graph):
    """No statement goes through ``passage_texts``, which loads the whole body again for every
    passage row and walks it to the span (a 250 KB single-file log's 300 passages: ~0.35 s for
    ``ctx embed``'s list where one read of the body costs ~1 ms); the bodies come in one
    statement per window of nodes."""
    conn = long_graph
    ids = [r[0] for r in conn.execute("SELECT id FROM passages ORDER BY id")]
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        pending_passages(conn, "m")
        candidate_passages(conn, "m", ids)
    finally:
        conn.set_trace_callback(None)
    assert statements and not [s for s in statements if "passage_texts" in s]
    assert len([s for s in statements if "body" in s]) == 2  # one window of nodes each
