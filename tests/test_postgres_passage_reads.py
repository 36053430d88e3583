"""On a real PostgreSQL (``pg_server``): a node's passages read by ``PostgresReader.passages_of``
are the spans the ``passage_texts`` view defines (``own_text``, else the body's characters
``start`` to ``end`` with newlines trimmed), now cut from the body sent once per node (through the
view each row decompressed the whole body again: ~1.3 s a read for four 200 KB journals). Row
security still decides what a role reads: a reader outside ctx_private gets none of a private
note's passages, and the rest equal what the view shows that role."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.store.passage_reads import embed_text  # noqa: E402
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


def _random_log(days: int) -> str:
    """A single-file log of made-up words (seeded): text pglz cannot shrink below the size that
    PostgreSQL keeps out of line."""
    draw = random.Random(58)
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = ["# Log\n\n"]
    for i in range(1, days + 1):
        words = ["".join(draw.choice(letters) for _ in range(draw.randint(2, 9))) for _ in range(400)]
        out.append(f"## 2024-04-{i % 28 + 1:02d} {i}\n\n\n" + " ".join(words) + ".\n\n\n")
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
    """The demo vault with two long journals (one private), a long log of words that do not
    compress (its body is kept out of line, in the nodes' TOAST table) and a Logseq outline
    (whose pages' passages hold their own text), imported by the owner; the roles set up and a
    reader login."""
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    (vault / "Journal 2024.md").write_text(_journal("Journal 2024", 28, "Bluebird"), encoding="utf-8")
    (vault / "Diary.md").write_text(_journal("Diary", 20, "Quillfeather", private=True), encoding="utf-8")
    (vault / "Log.md").write_text(_random_log(60), encoding="utf-8")
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


# -- what ctx embed and a two-stage build read: every passage's text to embed, a question's candidates --


def _pending_through_the_view(url: str, model: str) -> list[tuple[str, str]]:
    """``PostgresReader.pending_passages`` as it read through ``passage_texts``."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT * FROM (SELECT DISTINCT ON (p.hash) p.hash, p.title, p.context, p.heading, p.text"
            " FROM passage_texts p"
            " WHERE NOT EXISTS (SELECT 1 FROM passage_vectors v WHERE v.model = %s AND v.hash = p.hash)"
            " ORDER BY p.hash, p.id) x ORDER BY length(x.text), x.hash",
            (model,),
        ).fetchall()
    return [(r[0], embed_text(r[1], r[2], r[3], r[4])) for r in rows]


def _candidates_through_the_view(url: str, model: str, ids: list[int]) -> list[tuple]:
    """``PostgresReader.candidate_passages`` as it read through ``passage_texts`` (the vector as text)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT p.id, p.node_id, p.hash, p.title, p.context, p.heading, p.text, v.vector::text FROM passage_texts p"
            " LEFT JOIN passage_vectors v ON v.model = %s AND v.hash = p.hash WHERE p.id = ANY(%s) ORDER BY p.id",
            (model, ids),
        ).fetchall()
    return [(r[0], r[1], r[2], embed_text(r[3], r[4], r[5], r[6]), r[7]) for r in rows]


def _vectors_for_some(url: str) -> list[str]:
    """Vectors of model "m" for the first passage of each long note and one in the middle of the
    log (the first passage still to embed is then not a note's first), by the owner."""
    import numpy as np

    with psycopg.connect(url) as conn:
        hashes = [r[0] for r in conn.execute(
            "SELECT hash FROM passages WHERE (node_id IN ('Journal 2024', 'Diary', 'Log') AND ord = 0)"
            " OR (node_id = 'Log' AND ord = 7) ORDER BY id")]
    with Graph.open(url, create=False) as graph, graph.store.import_session() as session:
        session.write_passage_vectors("m", [(h, np.full(3, 0.5, dtype=np.float32)) for h in hashes])
    return hashes


def _vector_text(vector) -> str | None:
    return None if vector is None else "[" + ",".join(f"{x:g}" for x in vector.tolist()) + "]"


def test_pending_and_candidate_passages_are_the_views_for_every_role(journals):
    url, agent, _, _ = journals
    assert len(_vectors_for_some(url)) == 4
    with psycopg.connect(url) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM passages ORDER BY id")]
    for who, include_private in ((url, True), (url, False), (agent, True), (agent, False)):
        with Graph.open(who, include_private=include_private) as graph:
            reader = graph.store.reader(include_private=include_private)
            for model in ("m", "another"):
                expected = _pending_through_the_view(who, model)
                assert reader.pending_passages(model) == expected, (who, model)
            for asked in (ids, ids[::3][::-1] + [10**9], []):
                got = [(*r[:4], _vector_text(r[4])) for r in reader.candidate_passages("m", asked)]
                assert got == (_candidates_through_the_view(who, "m", asked) if asked else [])
            embedded = [text for _, text in reader.pending_passages("another")]
            candidates = [r[3] for r in reader.candidate_passages("m", ids)]
        private = [t for t in embedded + candidates if "Quillfeather" in t]
        assert bool(private) == (who == url), who  # the reader role gets nothing of the private diary
        assert any("東京" in t for t in embedded)
    # The owner sees four vectors of "m", the reader role those of the notes it may read.
    assert len(_pending_through_the_view(url, "another")) - len(_pending_through_the_view(url, "m")) == 4
    assert len(_pending_through_the_view(agent, "another")) - len(_pending_through_the_view(agent, "m")) == 3


def test_each_body_is_read_once_not_once_a_passage(journals):
    """Counted in the nodes' TOAST table (``pg_statio_user_tables``, flushed by the reading
    backend itself): reading what ``ctx embed`` embeds, or every passage as candidates, reads no
    more of it than reading each body once. Through ``passage_texts`` every passage row
    detoasted its whole body again: the log's ~60 passages read it ~60 times."""
    url, _, _, _ = journals
    with Graph.open(url, include_private=True) as graph:
        reader = graph.store.reader(include_private=True)
        conn = reader.conn

        def toast_blocks() -> int:
            conn.execute("SELECT pg_stat_force_next_flush()")  # flushed as this statement ends
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute("SELECT coalesce(toast_blks_hit, 0) + coalesce(toast_blks_read, 0)"
                               " FROM pg_statio_user_tables WHERE relname = 'nodes'").fetchone()
            return int(row[0])

        def cost(read) -> int:
            before = toast_blocks()
            read()
            return toast_blocks() - before

        once = cost(lambda: conn.execute("SELECT sum(length(body)) FROM nodes").fetchall())
        log_once = cost(lambda: conn.execute("SELECT length(body) FROM nodes WHERE id = 'Log'").fetchall())
        passages = conn.execute("SELECT count(*) FROM passages WHERE node_id = 'Log'").fetchone()[0]
        ids = [r[0] for r in conn.execute("SELECT id FROM passages ORDER BY id")]
        pending = cost(lambda: reader.pending_passages("m"))
        candidates = cost(lambda: reader.candidate_passages("m", ids))
    assert log_once > 0 and passages >= 20  # the log's body is out of line, and it is many passages
    assert pending <= once and candidates <= once, (pending, candidates, once, log_once)
