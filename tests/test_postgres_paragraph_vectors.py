"""Paragraph vectors on a team graph (PostgreSQL migration 20, on a real server: ``pg_server``):
``ctx embed`` stores a dated log's paragraphs' own vectors there as it does on SQLite
(``ctx.assemble.paragraph_vectors``), builds read them as SQLite's do, and row security keeps a
private log's paragraphs from a role that may not read the log.

The vault is ``test_paragraph_vectors``' lab notebook (a log of timed sessions, joined into
passages of one or two sessions) and its page about pipettes (not a log). Every count is read
from the graph's passages with a plain split (``_expected``) or compared with SQLite's for the
same files, never copied from an earlier run.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.assemble.paragraph_vectors import paragraph_hash, pending  # noqa: E402
from ctx.inspection import stats_report  # noqa: E402
from ctx.semantic.embedding import embed_graph  # noqa: E402
from ctx.store.postgres.roles import setup_sql  # noqa: E402
from fake_encoder import FAKE_MODEL, HashEncoder  # noqa: E402
from test_paragraph_vectors import FILLER, PIPETTES, _dated_notes, _expected, _notebook  # noqa: E402

MODEL = FAKE_MODEL.name


def _vault(root: Path, notebook: str | None = None) -> Path:
    notes = root / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "entry.md").write_text(notebook or _notebook())
    (notes / "pipettes.md").write_text(PIPETTES)
    return notes


def _embed(graph: Graph):
    """``ctx embed``'s paragraphs, with a deterministic encoder: the same texts give the same
    float32 vectors on both engines, so builds can be compared byte for byte."""
    return embed_graph(graph.store, FAKE_MODEL, encoder_factory=HashEncoder, paragraphs=pending)


@pytest.fixture
def both(tmp_path: Path, pg_url: str):
    """The vault imported into a SQLite file and a PostgreSQL database."""
    notes = _vault(tmp_path)
    graphs = []
    for target in (tmp_path / "g.db", pg_url):
        graph = Graph.open(target, create=True)
        graph.import_path(notes)
        graphs.append(graph)
    yield notes, tmp_path / "g.db", pg_url, graphs
    for graph in graphs:
        graph.close()


def _pg_rows(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        return [(r[0], r[1]) for r in conn.execute("SELECT passage_hash, hash FROM paragraph_vectors ORDER BY 1, 2")]


def test_ctx_embed_stores_the_paragraph_vectors_sqlite_stores(both, run_cli):
    """The real ``ctx embed`` (the default model) on both engines: the same paragraphs embedded,
    the same rows stored (one per passage and paragraph), the same vector for a paragraph up to
    the batch's arithmetic; a second run has nothing to do."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    _, lite, url, _ = both
    reports = []
    for target in (lite, url):
        done = run_cli("embed", "--output", "json", "--quiet", db=target)  # type: ignore[arg-type]
        assert done.exit_code == 0, done.stderr
        reports.append(json.loads(done.stdout))
    distinct, rows = _expected(lite)
    assert distinct == set(FILLER)
    assert reports[0]["paragraphs_embedded"] == reports[1]["paragraphs_embedded"] == len(distinct)
    assert len(_pg_rows(url)) == rows > len(distinct)
    with Graph.open(lite, include_private=True) as g1, Graph.open(url, include_private=True) as g2:
        model = g1.reader.active_model()
        assert model is not None and g2.reader.active_model() == model
        assert g1.reader.paragraph_vector_keys(model) == g2.reader.paragraph_vector_keys(model)
        assert g1.reader.paragraph_vector_count(model) == g2.reader.paragraph_vector_count(model) == rows
        a, b = g1.reader.paragraph_vectors(model), g2.reader.paragraph_vectors(model)
        assert a[:3] == b[:3] and len(a[0]) == rows
        assert a[3].dtype == b[3].dtype == np.float32 and np.allclose(a[3], b[3], atol=1e-5)
        # One paragraph by its own key: the same vector on both engines.
        key = paragraph_hash(FILLER[4])
        i, j = a[2].index(key), b[2].index(key)
        assert a[3].shape[1] == 384 and np.allclose(a[3][i], b[3][j], atol=1e-5)
    again = run_cli("embed", "--output", "json", "--quiet", db=url)  # type: ignore[arg-type]
    assert json.loads(again.stdout)["paragraphs_embedded"] == 0 and len(_pg_rows(url)) == rows


def _unsynced(text: str) -> str:
    return re.sub(r'"last_sync":"[^"]*"', '"last_sync":"<time>"', text)


QUESTION = "the water bath thermostat reads under the dial"
CELLS = [(lens, budget) for lens in ("general", "question", "answer") for budget in (200, 300, 400)]


def _builds(graph: Graph) -> dict[tuple[str, int], str]:
    return {(lens, budget): _unsynced(graph.build(QUESTION, lens=lens, max_tokens=budget, format="json").text)
            for lens, budget in CELLS}


def test_builds_with_paragraph_vectors_are_byte_identical_on_both_engines(both):
    """The same vectors on both engines (a deterministic encoder; the question's vector cached in
    each graph as a build caches it): every build is the same bytes. Without its paragraph
    vectors the SQLite graph builds some of them differently, so the comparison covers them."""
    _, lite, _, graphs = both
    vector = HashEncoder(FAKE_MODEL).encode([QUESTION])[0]
    for graph in graphs:
        report = _embed(graph)
        assert report.paragraphs == len(FILLER)
        graph.store.reader().remember_query_vector(MODEL, QUESTION, vector)
    one, two = (_builds(graph) for graph in graphs)
    assert one == two
    graphs[0].close()
    with sqlite3.connect(lite) as conn:
        conn.execute("DELETE FROM paragraph_vectors")
    conn.close()
    graphs[0] = Graph.open(lite)
    without = _builds(graphs[0])
    assert [cell for cell in CELLS if without[cell] != one[cell]]


def test_editing_one_paragraph_re_embeds_only_it(both):
    notes, lite, url, graphs = both
    pg = graphs[1]
    _embed(pg)
    before = set(_pg_rows(url))
    edited = list(FILLER)
    edited[3] = "Seminar on field methods moved to Thursday; the speaker asked for a projector that takes the new cable and a pointer."
    (notes / "entry.md").write_text(_notebook(filler=edited))
    for graph in graphs:
        graph.import_path(notes)
    # Edited, not embedded again: the session's passage has a new hash, so none of its old
    # paragraph vectors is read for it (the stale rows are still stored; the other sessions keep
    # theirs).
    owners, _, _, matrix = pg.store.reader(include_private=True).paragraph_vectors(MODEL)
    with psycopg.connect(url) as conn:
        texts = dict(conn.execute("SELECT id, text FROM passage_texts").fetchall())
    moved = [paras for paras in _rows_of(lite, "entry") if edited[3] in paras]
    assert len(moved) == 1 and len(_pg_rows(url)) == len(before)
    assert matrix.shape[0] == len(owners) == len(before) - len(moved[0])
    assert not any("Seminar" in texts[pid] for pid in owners)
    report = _embed(pg)
    assert report.paragraphs == 1  # paragraph 3's new text; its passage's others are copied
    assert report.passages == 1  # the session's passage
    after = set(_pg_rows(url))
    assert len(after) == _expected(lite)[1]  # the old passage's rows pruned
    assert {h for _, h in after} - {h for _, h in before} == {paragraph_hash(edited[3])}
    # The copied paragraph's vector is the one it had.
    a = pg.store.reader(include_private=True).paragraph_vectors(MODEL)
    key = paragraph_hash(FILLER[4])
    rows = [i for i, h in enumerate(a[2]) if h == key]
    assert len(rows) >= 1 and all(np.array_equal(a[3][i], HashEncoder(FAKE_MODEL).encode([FILLER[4]])[0]) for i in rows)


def test_a_note_no_longer_a_log_loses_its_paragraph_vectors_on_both_engines(tmp_path: Path, pg_url: str):
    """The ``date`` field taken out of a log dated by it alone: the same passage texts (and
    hashes), so only ``pending``'s stale pairs tell ``ctx embed`` to drop the paragraph vectors,
    which PostgreSQL's prune must take as SQLite's does."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "entry.md").write_text(_dated_notes("2026-03-02"))
    graphs = [Graph.open(target, create=True) for target in (tmp_path / "g.db", pg_url)]
    try:
        for graph in graphs:
            graph.import_path(notes)
            _embed(graph)
        dated = _expected(tmp_path / "g.db")[1]
        assert dated > 0 and len(_pg_rows(pg_url)) == dated
        (notes / "entry.md").write_text(_dated_notes(None))
        for graph in graphs:
            graph.import_path(notes)
            assert _embed(graph).paragraphs == 0
        assert _pg_rows(pg_url) == []
        assert _stats_count(pg_url, True) == _stats_count(tmp_path / "g.db", True) == 0
    finally:
        for graph in graphs:
            graph.close()


def _rows_of(db: Path, node_id: str) -> list[list[str]]:
    """``node_id``'s passages in the SQLite graph, each as its paragraphs (blank-line separated,
    headings left out), read with a plain split rather than ctx's own."""
    with sqlite3.connect(db) as conn:
        texts = [r[0] for r in conn.execute("SELECT text FROM passage_texts WHERE node_id = ? ORDER BY id", (node_id,))]
    conn.close()
    return [[p.strip() for p in t.split("\n\n") if p.strip() and not p.lstrip().startswith("#")] for t in texts]


def _stored(db: Path, node_id: str) -> int:
    """The rows ``ctx embed`` stores for ``node_id``: one per distinct paragraph of each passage of
    two paragraphs or more (a passage of two sessions can hold one paragraph twice)."""
    return sum(len(set(paras)) for paras in _rows_of(db, node_id) if len(paras) >= 2)


# -- privacy: a private log's paragraph vectors --------------------------------------------------


def _private_notebook() -> str:
    return _notebook().replace("---\ntitle:", "---\nprivate: true\ntitle:", 1)


# A second notebook, public, of the same shape (sessions of these paragraphs: ``SESSIONS``).
PUBLIC_LOG = [
    "Calibrated the pH meter against both buffers; the slope came out at ninety eight percent and the offset was small enough to leave alone.",
    "The autoclave failed twice with a door seal warning, so the afternoon sterilisation runs moved to the other building until Monday.",
    "Inventory of the chemical store: two bottles past their date went to disposal, with the paperwork signed by the safety officer.",
    "Trained the new student on the fume hood checklist, including the sash height and where the spill kit is kept behind the door.",
    "The plate reader software asked for an update that needs an administrator; a ticket is open with the department's support desk.",
    "Counted the seedlings in the growth chamber: most trays germinated evenly, but the corner tray by the fan lagged by two days.",
    "Booked the confocal for next week and wrote down the laser settings from last time, so the images can be compared directly.",
    "Sorted the printed protocols into binders by technique and threw out the drafts that had been superseded since the spring.",
]


def _public_log() -> str:
    return _notebook(filler=PUBLIC_LOG).replace("entry 1", "entry 2")


@pytest.fixture
def private_log(pg_server, pg_url, tmp_path):
    """A private lab notebook beside a public dated log, in SQLite and in PostgreSQL, embedded;
    the roles set up and a reader login (``agent``) made."""
    notes = _vault(tmp_path, _private_notebook())
    (notes / "public-log.md").write_text(_public_log())
    lite = tmp_path / "g.db"
    for target in (lite, pg_url):
        with Graph.open(target, create=True) as graph:
            graph.import_path(notes)
            _embed(graph)
    assert _stored(lite, "entry") > 0 and _stored(lite, "public-log") > 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(setup_sql())
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent')"
                     " THEN CREATE ROLE agent LOGIN; END IF; END $$")
        conn.execute("GRANT ctx_reader TO agent")
    return lite, pg_url, pg_server.url(pg_url.rsplit("/", 1)[1], "agent")


def _stats_count(target: str | Path, include_private: bool) -> int:
    return int(_stats_embeddings(target, include_private)["paragraph_vectors"])


def _stats_embeddings(target: str | Path, include_private: bool) -> dict:
    with Graph.open(target, include_private=include_private) as graph:
        return json.loads(stats_report(graph, fmt="json").text)["embeddings"]


def test_a_private_log_s_paragraph_vectors_never_reach_a_reader_role(private_log):
    lite, url, agent = private_log
    public = _stored(lite, "public-log")
    assert len(_pg_rows(url)) == public + _stored(lite, "entry")
    # Raw SQL as the reader role: only the public log's rows, and not one of the private
    # paragraphs' hashes.
    with psycopg.connect(agent) as conn:
        seen = conn.execute("SELECT passage_hash, hash FROM paragraph_vectors").fetchall()
    assert len(seen) == public
    assert not {paragraph_hash(p) for p in FILLER} & {h for _, h in seen}
    # The reader's own methods, even asked for private notes: the database withholds them.
    for include_private in (False, True):
        with Graph.open(agent, include_private=include_private) as graph:
            reader = graph.store.reader(include_private=include_private)
            owners, nodes, hashes, matrix = reader.paragraph_vectors(MODEL)
            assert set(nodes) == {"public-log"} and len(owners) == matrix.shape[0] == public
            assert reader.paragraph_vector_keys(MODEL) == set(seen)
            assert reader.paragraph_vector_count(MODEL) == public
        assert _stats_count(agent, include_private) == public
    # A question one private paragraph answers: the owner asking for private notes is shown it;
    # the owner not asking, and the reader role either way, none of the notebook.
    question = "the water bath thermostat reads under the dial"
    answer = "thermostat was checked"
    for target, include_private, shown in ((url, True, True), (url, False, False), (agent, True, False),
                                           (agent, False, False)):
        with Graph.open(target, include_private=include_private) as graph:
            graph.store.reader().remember_query_vector(MODEL, question, HashEncoder(FAKE_MODEL).encode([question])[0])
            text = graph.build(question, max_tokens=1000).text
        assert (answer in text, "Bench book, entry 1" in text) == (shown, shown), (target, include_private, text)


def test_stats_count_a_private_log_s_paragraph_vectors_only_with_include_private(private_log):
    """The graph's owner sees every row; ``ctx stats`` counts the private log's only with
    --include-private, as on SQLite."""
    lite, url, _ = private_log
    public, total = _stored(lite, "public-log"), _stored(lite, "public-log") + _stored(lite, "entry")
    assert len(_pg_rows(url)) == total
    counts = {(str(target), flag): _stats_count(target, flag) for target in (lite, url) for flag in (False, True)}
    assert counts == {(str(lite), False): public, (str(lite), True): total,
                      (url, False): public, (url, True): total}
    # The whole embeddings report, node coverage too: the owner's stats without --include-private
    # count neither the private log's node nor its vector, on either engine.
    for flag in (False, True):
        assert _stats_embeddings(url, flag) == _stats_embeddings(lite, flag), flag
    assert _stats_embeddings(lite, False) != _stats_embeddings(lite, True)


def test_stats_count_paragraph_vectors_by_their_owners_without_reading_them(private_log):
    """``ctx stats`` counts paragraph vectors from their owners (node, passage hash, paragraph
    hash: ``paragraph_vector_owners``) without reading the vectors: the owners are exactly what
    ``paragraph_vectors`` reads, for every reader on both engines (the reader role sees only the
    public log's), and the counts are the same on both engines."""
    lite, url, agent = private_log
    public, total = _stored(lite, "public-log"), _stored(lite, "public-log") + _stored(lite, "entry")
    lite_conn = sqlite3.connect(lite)
    try:
        hashes = dict(lite_conn.execute("SELECT id, hash FROM passages").fetchall())
    finally:
        lite_conn.close()
    with psycopg.connect(url) as conn:
        pg_hashes = dict(conn.execute("SELECT id, hash FROM passages").fetchall())
    for target, passage_hash, seen in ((lite, hashes, total), (url, pg_hashes, total), (agent, pg_hashes, public)):
        for flag in (False, True):
            with Graph.open(target, include_private=flag) as graph:
                reader = graph.store.reader(include_private=flag)
                owners = reader.paragraph_vector_owners(MODEL)
                ids, nodes, keys, matrix = reader.paragraph_vectors(MODEL)
            assert owners == {(n, passage_hash[i], h) for i, n, h in zip(ids, nodes, keys, strict=True)}
            assert len(owners) == matrix.shape[0] == seen, (target, flag)
    counts = {(str(target), flag): _stats_count(target, flag) for target in (lite, url, agent) for flag in (False, True)}
    assert counts == {(str(lite), False): public, (str(lite), True): total, (url, False): public,
                      (url, True): total, (agent, False): public, (agent, True): public}


def test_a_graph_whose_roles_were_set_up_before_migration_20_is_readable_after_it(private_log):
    """A team graph at schema 19 with its roles set up then (``roles.sql``'s grants name the tables
    there were): migration 20 makes the table and grants it as ``roles.sql`` would, so a reader
    role reads the public paragraph vectors, and only those."""
    from ctx.store.postgres import db
    from ctx.store.postgres.migrations import MIGRATIONS

    lite, url, agent = private_log
    public = _stored(lite, "public-log")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE paragraph_vectors")
        conn.execute("UPDATE ctx_schema SET version = 19")
    with Graph.open(url) as graph:  # the owner opens it: migrated
        assert db.current_version(graph.store.connection) == len(MIGRATIONS) >= 20  # type: ignore[attr-defined]
        assert _embed(graph).paragraphs == len(FILLER) + len(PUBLIC_LOG)
    with psycopg.connect(url) as conn:
        owner = conn.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'paragraph_vectors'").fetchone()[0]
    assert owner == "ctx_writer"
    assert _stats_count(agent, True) == public
    with psycopg.connect(agent) as conn:
        assert conn.execute("SELECT count(*) FROM paragraph_vectors").fetchone()[0] == public
