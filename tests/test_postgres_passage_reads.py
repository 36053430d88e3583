"""On a real PostgreSQL (``pg_server``): a node's passages read by ``PostgresReader.passages_of``
are the spans the ``passage_texts`` view defines (``own_text``, else the body's characters
``start`` to ``end`` with newlines trimmed), now cut from the body sent once per node (through the
view each row decompressed the whole body again: ~1.3 s a read for four 200 KB journals). Row
security still decides what a role reads: a reader outside ctx_private gets none of a private
note's passages, and the rest equal what the view shows that role."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.store.postgres.roles import setup_sql  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _journal(title: str, days: int, codename: str, private: bool = False) -> str:
    """A single-file journal: a dated heading a day, characters of every width before and inside
    its spans (a byte offset taken for a character would cut elsewhere), blank lines at the
    edges of every span."""
    head = "---\nprivate: true\n---\n" if private else ""
    out = [f"{head}# {title}\n\n"]
    for i in range(1, days + 1):
        out.append(
            f"## 2024-03-{i:02d}\n\n\n\nCafé ☕ with Zoë — 東京 trip 🚄 on day {i}, codename {codename}-{i}.\n\n"
            + "Notes on the 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 deck, ñandú sketches and a long paragraph. " * 25
            + "\n\n\n\n"
        )
    return "".join(out)


def _through_the_view(url: str) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    with psycopg.connect(url) as conn:
        for row in conn.execute("SELECT id, node_id, ord, heading, text, tokens, hash FROM passage_texts"
                                " ORDER BY node_id, ord"):
            out.setdefault(row[1], []).append((row[0], row[2], row[3], row[4], row[5], row[6]))
    return out


def _read(url: str, ids: list[str], include_private: bool) -> dict[str, list[tuple]]:
    with Graph.open(url, include_private=include_private) as graph:
        found = graph.store.reader(include_private=include_private).passages_of(ids)
    return {node: [(p.id, p.ord, " > ".join(p.heading), p.text, p.tokens, p.hash) for p in ps]
            for node, ps in found.items()}


@pytest.fixture
def journals(pg_server, pg_url, tmp_path):
    """The demo vault with two long journals (one private) and a Logseq outline (whose pages'
    passages hold their own text), imported by the owner; the roles set up and a reader login."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    (vault / "Journal 2024.md").write_text(_journal("Journal 2024", 28, "Bluebird"), encoding="utf-8")
    (vault / "Diary.md").write_text(_journal("Diary", 20, "Quillfeather", private=True), encoding="utf-8")
    outline = tmp_path / "outline"
    shutil.copytree(FIXTURES / "outline-logseq", outline)
    with Graph.open(pg_url, create=True) as graph:
        graph.import_path(vault)
        graph.import_path(outline, format="logseq")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(setup_sql())
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent')"
                     " THEN CREATE ROLE agent LOGIN; END IF; END $$")
        conn.execute("GRANT ctx_reader TO agent")
        ids = [row[0] for row in conn.execute("SELECT id FROM nodes ORDER BY id")]
        own = conn.execute("SELECT count(*) FROM passages WHERE own_text IS NOT NULL").fetchone()[0]
    return pg_url, pg_server.url(pg_url.rsplit("/", 1)[1], "agent"), ids, own


def test_passages_are_the_views_spans_for_every_node(journals):
    url, _, ids, own = journals
    expected = _through_the_view(url)
    journal = expected["Journal 2024"]
    assert len(journal) >= 28 and any("東京" in row[3] for row in journal)
    assert "Diary" in expected and own > 0  # the private journal and passages holding their own text
    for include_private in (True, False):
        got = _read(url, ids, include_private)
        assert set(got) == set(expected)
        for node, rows in expected.items():
            assert got[node] == rows, node
    # Some nodes only, in any order, and an id with no node.
    some = sorted(expected)[::3][::-1] + ["no such node"]
    got = _read(url, some, False)
    assert set(got) == set(some[:-1]) and all(got[n] == expected[n] for n in got)


def test_a_reader_role_reads_no_passage_of_a_private_note(journals):
    url, agent, ids, _ = journals
    everything = _through_the_view(url)
    seen = _through_the_view(agent)
    assert "Diary" in everything and "Diary" not in seen and "Journal 2024" in seen
    for include_private in (True, False):
        got = _read(agent, ids, include_private)
        assert "Diary" not in got and got == seen
        assert not any("Quillfeather" in row[3] for rows in got.values() for row in rows)
    assert any("Quillfeather" in row[3] for row in everything["Diary"])
