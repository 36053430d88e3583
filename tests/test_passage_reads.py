"""A node's passages read from the store are the spans the ``passage_texts`` view defines (its
``own_text``, else the body's characters ``start`` to ``end`` with newlines trimmed), now cut from
the body read once per node: through the view, each passage row read the whole body again and
``substr`` walked it to the span, so a 250 KB single-file journal cost ~0.65 s a read."""

from __future__ import annotations

import shutil

from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.passage_reads import passages_of


def _through_the_view(conn) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for row in conn.execute("SELECT id, node_id, ord, heading, text, tokens, hash FROM passage_texts ORDER BY node_id, ord"):
        out.setdefault(row[1], []).append((row[0], row[2], row[3], row[4], row[5], row[6]))
    return out


def test_passages_are_the_views_spans_in_every_kind_of_note(tmp_path, demo_vault):
    vault = tmp_path / "vault"
    shutil.copytree(demo_vault, vault)
    # A long single-file journal with characters of every width before and inside its spans (a
    # byte offset taken for a character one would cut them elsewhere), blank lines at the edges.
    days = []
    for i in range(1, 29):
        days.append(f"## 2024-02-{i:02d}\n\n\nCafé ☕ with Zoë — 東京 trip planned 🚄 for day {i}.\n\n"
                    + "Notes on the 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 deck, ñandú sketches and a long paragraph. " * 30 + "\n\n\n")
    (vault / "Journal 2024.md").write_text("# Journal 2024\n\n" + "".join(days), encoding="utf-8")
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
