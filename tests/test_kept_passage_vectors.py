"""A warm process keeps the passage vector matrix between builds, and reads it again as soon as the
graph's vectors or passages change (another connection's embed, an import, its own writes)."""

from __future__ import annotations

import shutil

from conftest import FIXTURES
from fake_encoder import FAKE_MODEL, HashEncoder

from ctx.assemble import BuildRequest, build_context
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.store import connect
from ctx.store.view import GraphView


def embedded(tmp_path):
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    return vault, db, conn


def test_the_matrix_is_read_once_while_nothing_changes(tmp_path):
    _, _, conn = embedded(tmp_path)
    first = GraphView(conn).passage_vector_matrix(FAKE_MODEL.name)
    rows = conn.execute(
        "SELECT COUNT(*) FROM passages p JOIN passage_vectors v ON v.model = ? AND v.hash = p.hash",
        (FAKE_MODEL.name,),
    ).fetchone()[0]
    assert rows > 0 and len(first[0]) == rows and first[2].shape == (rows, 16)
    # A build in between writes its question's vector to the query cache: not a passage vector.
    build_context(conn, BuildRequest(("how are meetings planned?",), max_tokens=600))
    assert GraphView(conn).passage_vector_matrix(FAKE_MODEL.name) is first


def test_a_change_anywhere_reads_it_again(tmp_path):
    vault, db, conn = embedded(tmp_path)
    before = GraphView(conn).passage_vector_matrix(FAKE_MODEL.name)
    # Another connection imports a new note and embeds it: this one sees it on its next read.
    other = connect(db)
    (vault / "Harbour cranes.md").write_text("# Harbour cranes\n\nThe cranes lift containers off ships.\n")
    import_path(other, vault)
    embed_graph(other, FAKE_MODEL, encoder_factory=HashEncoder)
    other.close()
    after = GraphView(conn).passage_vector_matrix(FAKE_MODEL.name)
    assert after is not before and len(after[0]) == len(before[0]) + 1
    # Its own connection's writes too: vectors dropped by a model switch on this connection.
    gone = conn.execute("SELECT MIN(hash) FROM passage_vectors").fetchone()[0]
    sharing = conn.execute("SELECT COUNT(*) FROM passages WHERE hash = ?", (gone,)).fetchone()[0]
    conn.execute("DELETE FROM passage_vectors WHERE hash = ?", (gone,))
    again = GraphView(conn).passage_vector_matrix(FAKE_MODEL.name)
    assert sharing >= 1 and len(again[0]) == len(after[0]) - sharing
