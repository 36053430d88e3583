"""Numbered schema migrations. ``PRAGMA user_version`` records how many have been applied.

Append new migrations to MIGRATIONS (a SQL script, or a function for what SQL alone cannot do);
never edit one that has shipped.
Edges are stored once, in their canonical direction (``child``: parent -> child, ``link``,
``embed``, ``tag``: note -> tag node, ``field:<name>``, ``supports``: supporter -> supported).
The inverse names (parent, backlink, supported_by, ...) are the same rows walked backwards.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ctx.store.transaction import transaction


_M001_GRAPH = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
        INSERT INTO meta (key, value) VALUES ('graph_version', '0');

        CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            root TEXT NOT NULL UNIQUE,      -- absolute path of the imported folder or file
            name TEXT NOT NULL,
            format TEXT NOT NULL,
            imported_at REAL,               -- last import that changed something (epoch s)
            checked_at REAL                 -- last import run, changed or not
        );

        CREATE TABLE files (
            source_id INTEGER NOT NULL REFERENCES sources(id),
            path TEXT NOT NULL,             -- relative to the source root, POSIX separators
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            hash TEXT NOT NULL,
            PRIMARY KEY (source_id, path)
        );

        CREATE TABLE nodes (
            id TEXT PRIMARY KEY,
            title TEXT NOT NULL,
            body TEXT NOT NULL DEFAULT '',
            type TEXT NOT NULL DEFAULT 'note',
            tags TEXT NOT NULL DEFAULT '[]',      -- JSON array of strings
            fields TEXT NOT NULL DEFAULT '{}',    -- JSON object: name -> list of values
            aliases TEXT NOT NULL DEFAULT '[]',   -- JSON array of strings
            source_id INTEGER NOT NULL REFERENCES sources(id),
            source_path TEXT,                     -- file relative to the source root
            file TEXT NOT NULL DEFAULT '',        -- the tracked file that produced it ('' = derived)
            parent_id TEXT,                       -- outline parent, for breadcrumbs and grouping
            position INTEGER,                     -- order among siblings
            created REAL,                         -- epoch seconds, UTC
            updated REAL,
            content_hash TEXT NOT NULL,
            tokens INTEGER NOT NULL DEFAULT 0,    -- cl100k tokens of title + body
            private INTEGER NOT NULL DEFAULT 0    -- 1: withheld from every output (see privacy.py)
        );
        CREATE INDEX nodes_by_file ON nodes (source_id, file);
        CREATE INDEX nodes_by_parent ON nodes (parent_id);
        CREATE INDEX nodes_by_title ON nodes (title COLLATE NOCASE);

        -- Names a node answers to when something links to it or a user types it.
        CREATE TABLE node_keys (
            source_id INTEGER NOT NULL,
            key TEXT NOT NULL,              -- normalized (lowercase) reference text
            node_id TEXT NOT NULL,
            kind TEXT NOT NULL,             -- id | title | alias | path | name
            priority INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX node_keys_by_key ON node_keys (key);
        CREATE INDEX node_keys_by_node ON node_keys (node_id);

        CREATE TABLE edges (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL,
            file TEXT NOT NULL DEFAULT '',  -- the tracked file that produced it ('' = derived)
            src TEXT NOT NULL,
            dst TEXT,                       -- NULL while the target does not exist (unresolved)
            type TEXT NOT NULL,
            target TEXT,                    -- normalized reference used to (re)resolve dst
            by_id INTEGER NOT NULL DEFAULT 0, -- 1: target is a node id, 0: a name/path/alias key
            label TEXT,                     -- display text, heading or block anchor
            position INTEGER
        );
        CREATE INDEX edges_out ON edges (src, type);
        CREATE INDEX edges_in ON edges (dst, type);
        CREATE INDEX edges_by_file ON edges (source_id, file);

        CREATE VIRTUAL TABLE nodes_fts USING fts5 (
            title, aliases, body,
            content='nodes', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER nodes_ai AFTER INSERT ON nodes BEGIN
            INSERT INTO nodes_fts (rowid, title, aliases, body)
            VALUES (new.rowid, new.title, new.aliases, new.body);
        END;
        CREATE TRIGGER nodes_ad AFTER DELETE ON nodes BEGIN
            INSERT INTO nodes_fts (nodes_fts, rowid, title, aliases, body)
            VALUES ('delete', old.rowid, old.title, old.aliases, old.body);
        END;
        CREATE TRIGGER nodes_au AFTER UPDATE OF title, aliases, body ON nodes BEGIN
            INSERT INTO nodes_fts (nodes_fts, rowid, title, aliases, body)
            VALUES ('delete', old.rowid, old.title, old.aliases, old.body);
            INSERT INTO nodes_fts (rowid, title, aliases, body)
            VALUES (new.rowid, new.title, new.aliases, new.body);
        END;
"""

# Vectors live beside the graph so one file is the whole state. A node has at most one vector (the
# active model's); ``content_hash`` is the node's hash when it was embedded, so a changed node is
# stale without re-reading its text. ``seq`` only grows (AUTOINCREMENT), so (count, max seq) changes
# whenever any vector is written or removed: a cheap key for caches of the whole matrix.
# Nothing deletes vectors when the importer deletes a node: re-imports delete and re-insert the nodes
# of a changed file, and the unchanged ones keep their vectors; `ctx embed` prunes the orphans.
_M002_EMBEDDINGS = """
        CREATE TABLE embeddings (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            node_id TEXT NOT NULL UNIQUE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            vector BLOB NOT NULL            -- dim little-endian float32, L2-normalised
        );
        CREATE INDEX embeddings_by_model ON embeddings (model);

        -- Free-text topics embedded once: a repeated question never loads the model again.
        CREATE TABLE query_embeddings (
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            used_at REAL,
            PRIMARY KEY (model, text_hash)
        );
"""

# Each migration is a SQL script, run inside one transaction together with the version bump.
# Recency is measured from the graph's newest update (deterministic, unlike the clock); an index
# makes that MAX() a single lookup instead of a scan on every build.
_M003_UPDATED_INDEX = """
CREATE INDEX nodes_by_updated ON nodes (updated);
"""

# Marks the file as a ctx graph, so that a path holding some other application's database is
# recognised (and refused) before anything is written to it. "ctxG" in ASCII.
APPLICATION_ID = 0x63747847
_M004_APPLICATION_ID = f"""
PRAGMA application_id = {APPLICATION_ID};
"""

# Passages (ctx/passages.py): each node's text in pieces of ~100-250 tokens, the unit of text
# relevance and of shortening. Stored with their text (attachments collapsed) so that full-text
# search, vectors and rendering all see the same words; ``context`` holds the titles of the
# node's outline/hierarchy ancestors (a Logseq block's page, a Dendron note's parents), which
# say what a short passage is about. ``nodes.split`` records the splitter
# version a node's passages were made with (0: not split yet), so imports re-split only new or
# changed nodes, and all of them after the splitter changes.
_M005_PASSAGES = """
        ALTER TABLE nodes ADD COLUMN split INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX nodes_unsplit ON nodes (split) WHERE split = 0;

        CREATE TABLE passages (
            id INTEGER PRIMARY KEY,
            node_id TEXT NOT NULL,
            ord INTEGER NOT NULL,           -- position in the node, from 0
            start INTEGER NOT NULL,         -- character span in the node's body
            "end" INTEGER NOT NULL,
            title TEXT NOT NULL,            -- the node's title (indexed with every passage)
            context TEXT NOT NULL DEFAULT '',  -- ancestor titles, outermost first, ' > '-joined
            heading TEXT NOT NULL DEFAULT '',  -- heading path inside the node, ' > '-joined
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,        -- estimated at import; renders are counted exactly
            hash TEXT NOT NULL              -- of what is embedded: keys the passage's vector
        );
        CREATE INDEX passages_by_node ON passages (node_id, ord);
        CREATE INDEX passages_by_hash ON passages (hash);

        -- Two indexes of the same text: stemmed (a question says "encrypted graphs", the note
        -- "encryption" and "graph") and exact (a name is a name: "Brand" is not "branding").
        CREATE VIRTUAL TABLE passages_fts USING fts5 (
            title, context, heading, text,
            content='passages', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE passages_exact USING fts5 (
            title, context, heading, text,
            content='passages', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts (rowid, title, context, heading, text)
            VALUES (new.id, new.title, new.context, new.heading, new.text);
            INSERT INTO passages_exact (rowid, title, context, heading, text)
            VALUES (new.id, new.title, new.context, new.heading, new.text);
        END;
        CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
            INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text)
            VALUES ('delete', old.id, old.title, old.context, old.heading, old.text);
            INSERT INTO passages_exact (passages_exact, rowid, title, context, heading, text)
            VALUES ('delete', old.id, old.title, old.context, old.heading, old.text);
        END;
        -- A node's passages go with it (a re-import deletes and re-inserts a changed file's nodes).
        CREATE TRIGGER nodes_passages_ad AFTER DELETE ON nodes BEGIN
            DELETE FROM passages WHERE node_id = old.id;
        END;

        -- One vector per distinct passage text and model: unchanged passages keep theirs across
        -- re-imports and re-splits, and a passage that occurs twice is embedded once.
        CREATE TABLE passage_vectors (
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,           -- dim little-endian float32, L2-normalised
            PRIMARY KEY (model, hash)
        );
"""

# Private nodes are few: counting them (``ctx stats``, the key of the stored counts in
# store/counts.py) reads this small index instead of every node.
_M006_PRIVATE_INDEX = """
CREATE INDEX nodes_private ON nodes (private) WHERE private = 1;
"""

# What the walk reads of every node it reaches over an edge (to bound its score and rank a hub's
# neighbours): type, tags, date, title and privacy, found by id. From this index the walk reads no
# node's row, whose body makes it the larger part of a page (a 100k-node build read ~12,000 rows for
# one hub's neighbours).
_M007_WALK_INDEX = """
CREATE INDEX nodes_walked ON nodes (id, private, type, updated, tags, title);
"""

# A passage's text is, nearly always, its node's body from ``start`` to ``end`` (outer newlines
# trimmed), and its title is the node's: storing both again in every passage made the passages
# table as big as the nodes table. They are read through the ``passage_texts`` view, which is also
# the content the two full-text indexes read; ``own_text`` holds the text only where it is not a
# span of the body (an outline page's blocks, collapsed attachment links). The indexes then take
# their deleted rows' words from the view too, so a node's passages must go while the node is still
# there: the deleting trigger runs before the node's row goes, not after.
_M008_PASSAGE_SPANS = """
        CREATE TABLE passages_spans (
            id INTEGER PRIMARY KEY,
            node_id TEXT NOT NULL,
            ord INTEGER NOT NULL,           -- position in the node, from 0
            start INTEGER NOT NULL,         -- character span in the node's body
            "end" INTEGER NOT NULL,
            context TEXT NOT NULL DEFAULT '',  -- ancestor titles, outermost first, ' > '-joined
            heading TEXT NOT NULL DEFAULT '',  -- heading path inside the node, ' > '-joined
            own_text TEXT,                  -- NULL: the text is the body's span, newlines trimmed
            tokens INTEGER NOT NULL,        -- estimated at import; renders are counted exactly
            hash TEXT NOT NULL              -- of what is embedded: keys the passage's vector
        );
        INSERT INTO passages_spans (id, node_id, ord, start, "end", context, heading, own_text, tokens, hash)
            SELECT p.id, p.node_id, p.ord, p.start, p."end", p.context, p.heading,
                   CASE WHEN p.title = n.title
                         AND p.text = trim(substr(n.body, p.start + 1, p."end" - p.start), char(10))
                        THEN NULL ELSE p.text END,
                   p.tokens, p.hash
            FROM passages p LEFT JOIN nodes n ON n.id = p.node_id ORDER BY p.id;
        DROP TRIGGER passages_ai;
        DROP TRIGGER passages_ad;
        DROP TRIGGER nodes_passages_ad;
        DROP TABLE passages_fts;
        DROP TABLE passages_exact;
        DROP TABLE passages;
        ALTER TABLE passages_spans RENAME TO passages;
        CREATE INDEX passages_by_node ON passages (node_id, ord);
        CREATE INDEX passages_by_hash ON passages (hash);

        CREATE VIEW passage_texts AS
            SELECT p.id, p.node_id, p.ord, n.title, p.context, p.heading,
                   COALESCE(p.own_text, trim(substr(n.body, p.start + 1, p."end" - p.start), char(10))) AS text,
                   p.tokens, p.hash
            FROM passages p JOIN nodes n ON n.id = p.node_id;

        CREATE VIRTUAL TABLE passages_fts USING fts5 (
            title, context, heading, text,
            content='passage_texts', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE passages_exact USING fts5 (
            title, context, heading, text,
            content='passage_texts', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts WHERE id = new.id;
            INSERT INTO passages_exact (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts WHERE id = new.id;
        END;
        CREATE TRIGGER passages_bd BEFORE DELETE ON passages BEGIN
            INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts WHERE id = old.id;
            INSERT INTO passages_exact (passages_exact, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts WHERE id = old.id;
        END;
        CREATE TRIGGER nodes_passages_bd BEFORE DELETE ON nodes BEGIN
            DELETE FROM passages WHERE node_id = old.id;
        END;
        INSERT INTO passages_fts (passages_fts) VALUES ('rebuild');
        INSERT INTO passages_exact (passages_exact) VALUES ('rebuild');
"""

# A hub's neighbours are read from the edge indexes alone: each index carries the other end, so
# ranking a 13,000-link tag's neighbours, counting a node's edges and finding which of a batch
# are its neighbours read no edge row (100k typical depth 3: 442 -> 345 ms CPU in-process, for
# ~11 MB more on a 100k-node JSON graph of ~850 MB).
_M009_COVERING_EDGE_INDEXES = """
DROP INDEX edges_out;
CREATE INDEX edges_out ON edges (src, type, dst);
DROP INDEX edges_in;
CREATE INDEX edges_in ON edges (dst, type, src);
"""

# Private nodes get full-text indexes of their own. BM25 weighs a word by the documents of the
# index that hold it and a hit by its length against the index's average: with private notes in
# the same index, a public search's scores and order moved with the words of private notes (an
# oracle over private text, issue 24). The public indexes (nodes_fts, passages_fts,
# passages_exact) now hold the rows of public nodes only, the *_private ones the rest; a reader
# without access to private nodes searches the public ones, and so sees the statistics of the
# graph without its private notes. Rows move between them when a node's private flag changes.
# The indexes keep reading their text from ``nodes`` and ``passage_texts`` (no re-indexing of
# the public rows): each holds a subset of its content table, so FTS5's 'rebuild' must not be
# used on them; the fill statements below are the way to re-index.
_M010_PRIVATE_FTS = """
        DROP TRIGGER nodes_ai;
        DROP TRIGGER nodes_ad;
        DROP TRIGGER nodes_au;
        DROP TRIGGER passages_ai;
        DROP TRIGGER passages_bd;

        CREATE VIRTUAL TABLE nodes_fts_private USING fts5 (
            title, aliases, body,
            content='nodes', content_rowid='rowid',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE passages_fts_private USING fts5 (
            title, context, heading, text,
            content='passage_texts', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE passages_exact_private USING fts5 (
            title, context, heading, text,
            content='passage_texts', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );

        INSERT INTO nodes_fts (nodes_fts, rowid, title, aliases, body)
            SELECT 'delete', rowid, title, aliases, body FROM nodes WHERE private != 0;
        INSERT INTO nodes_fts_private (rowid, title, aliases, body)
            SELECT rowid, title, aliases, body FROM nodes WHERE private != 0;
        INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text)
            SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
            FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE n.private != 0;
        INSERT INTO passages_exact (passages_exact, rowid, title, context, heading, text)
            SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
            FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE n.private != 0;
        INSERT INTO passages_fts_private (rowid, title, context, heading, text)
            SELECT t.id, t.title, t.context, t.heading, t.text
            FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE n.private != 0;
        INSERT INTO passages_exact_private (rowid, title, context, heading, text)
            SELECT t.id, t.title, t.context, t.heading, t.text
            FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE n.private != 0;

        CREATE TRIGGER nodes_ai AFTER INSERT ON nodes BEGIN
            INSERT INTO nodes_fts (rowid, title, aliases, body)
                SELECT new.rowid, new.title, new.aliases, new.body WHERE new.private = 0;
            INSERT INTO nodes_fts_private (rowid, title, aliases, body)
                SELECT new.rowid, new.title, new.aliases, new.body WHERE new.private != 0;
        END;
        CREATE TRIGGER nodes_ad AFTER DELETE ON nodes BEGIN
            INSERT INTO nodes_fts (nodes_fts, rowid, title, aliases, body)
                SELECT 'delete', old.rowid, old.title, old.aliases, old.body WHERE old.private = 0;
            INSERT INTO nodes_fts_private (nodes_fts_private, rowid, title, aliases, body)
                SELECT 'delete', old.rowid, old.title, old.aliases, old.body WHERE old.private != 0;
        END;
        CREATE TRIGGER nodes_au AFTER UPDATE OF title, aliases, body, private ON nodes BEGIN
            INSERT INTO nodes_fts (nodes_fts, rowid, title, aliases, body)
                SELECT 'delete', old.rowid, old.title, old.aliases, old.body WHERE old.private = 0;
            INSERT INTO nodes_fts_private (nodes_fts_private, rowid, title, aliases, body)
                SELECT 'delete', old.rowid, old.title, old.aliases, old.body WHERE old.private != 0;
            INSERT INTO nodes_fts (rowid, title, aliases, body)
                SELECT new.rowid, new.title, new.aliases, new.body WHERE new.private = 0;
            INSERT INTO nodes_fts_private (rowid, title, aliases, body)
                SELECT new.rowid, new.title, new.aliases, new.body WHERE new.private != 0;
        END;
        -- A node's passages follow it from one pair of indexes to the other (the view gives the
        -- same words before and after: only the flag changed).
        CREATE TRIGGER nodes_private_passages AFTER UPDATE OF private ON nodes
        WHEN (old.private != 0) != (new.private != 0) BEGIN
            INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND old.private = 0;
            INSERT INTO passages_exact (passages_exact, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND old.private = 0;
            INSERT INTO passages_fts_private (passages_fts_private, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND old.private != 0;
            INSERT INTO passages_exact_private (passages_exact_private, rowid, title, context, heading, text)
                SELECT 'delete', id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND old.private != 0;
            INSERT INTO passages_fts (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND new.private = 0;
            INSERT INTO passages_exact (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND new.private = 0;
            INSERT INTO passages_fts_private (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND new.private != 0;
            INSERT INTO passages_exact_private (rowid, title, context, heading, text)
                SELECT id, title, context, heading, text FROM passage_texts
                WHERE node_id = new.id AND new.private != 0;
        END;
        CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts (rowid, title, context, heading, text)
                SELECT t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = new.id AND n.private = 0;
            INSERT INTO passages_exact (rowid, title, context, heading, text)
                SELECT t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = new.id AND n.private = 0;
            INSERT INTO passages_fts_private (rowid, title, context, heading, text)
                SELECT t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = new.id AND n.private != 0;
            INSERT INTO passages_exact_private (rowid, title, context, heading, text)
                SELECT t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = new.id AND n.private != 0;
        END;
        CREATE TRIGGER passages_bd BEFORE DELETE ON passages BEGIN
            INSERT INTO passages_fts (passages_fts, rowid, title, context, heading, text)
                SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = old.id AND n.private = 0;
            INSERT INTO passages_exact (passages_exact, rowid, title, context, heading, text)
                SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = old.id AND n.private = 0;
            INSERT INTO passages_fts_private (passages_fts_private, rowid, title, context, heading, text)
                SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = old.id AND n.private != 0;
            INSERT INTO passages_exact_private (passages_exact_private, rowid, title, context, heading, text)
                SELECT 'delete', t.id, t.title, t.context, t.heading, t.text
                FROM passage_texts t JOIN nodes n ON n.id = t.node_id WHERE t.id = old.id AND n.private != 0;
        END;
"""


def _m011_recompute_privacy(conn: sqlite3.Connection) -> None:
    """Derived nodes (tag nodes, hierarchy stubs) that only private nodes account for are private
    (the previous wave's fix): graphs written before it kept, say, a public tag node that only
    private notes carry. Recomputed here from the flags the graph holds, which were set with the
    user's markers (a migration cannot read config files, and must not apply a folder's): it only
    adds private flags, never removes one. The stored fingerprint of the rules is cleared, so the
    next import or sync recomputes every flag with the user's markers of today."""
    from ctx.store.privacy import _add_derived_only_private

    conn.execute("DROP TABLE IF EXISTS temp.private_ids")
    conn.execute("CREATE TEMP TABLE private_ids (id TEXT PRIMARY KEY)")
    conn.execute("INSERT INTO temp.private_ids (id) SELECT id FROM nodes WHERE private = 1")
    _add_derived_only_private(conn)
    changed = conn.execute(
        "UPDATE nodes SET private = 1 WHERE private = 0 AND id IN (SELECT id FROM temp.private_ids)"
    ).rowcount
    conn.execute("DROP TABLE temp.private_ids")
    conn.execute("DELETE FROM meta WHERE key = 'privacy_config'")
    if changed:
        # What every reader may see changed: caches keyed by the graph's version must go.
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'graph_version'")
        from ctx.store import counts

        counts.recount(conn)


# Build manifests (``ctx.store.contexts``): what recent contexts showed, for ``ctx build --since``.
_M014_CONTEXTS = """
CREATE TABLE IF NOT EXISTS contexts (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    private INTEGER NOT NULL DEFAULT 0,
    graph_version INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    manifest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS contexts_by_key ON contexts (key, private, seq);
CREATE INDEX IF NOT EXISTS contexts_by_seq ON contexts (seq);
"""

# A big hub's best neighbours are found by reading nodes newest first (``store/hub_scan.py``);
# among nodes of one date (a vault imported at once, dates clamped to a day) they rank by id, so
# the index holds them in that order too. It serves the newest update (MAX) and the recent nodes
# (ORDER BY updated DESC, id) as well, so it replaces the index on the date alone.
_M015_RECENCY_INDEX = """
CREATE INDEX IF NOT EXISTS nodes_by_recency ON nodes (updated DESC, id);
DROP INDEX IF EXISTS nodes_by_updated;
"""


# A counter of what builds read (``ctx.store.db.content_version``): bumped by every row written to
# the tables a build reads, not by the rows a build itself leaves behind (manifests, cached query
# vectors, freshness notes). ``PRAGMA data_version`` moves on any commit of another connection, so
# a warm MCP server dropped everything it kept whenever a `ctx build` in a terminal recorded its
# manifest; this moves only when the graph did. An import's first fill pays ~2 us a row for it.
_QUIET_META_KEYS = "('sources_pending', 'vectors_version', 'birth')"  # freshness notes, the file's inode


def _bump_triggers(table: str) -> str:
    """Triggers that bump the content counter on every row written to ``table``."""
    conditions = {"INSERT": "", "UPDATE": "", "DELETE": ""}
    if table == "meta":
        conditions = {event: f" WHEN {row}.key NOT IN {_QUIET_META_KEYS}"
                      for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))}
    elif table == "sources":
        # An import run that changed nothing still stamps its source as checked.
        conditions["UPDATE"] = " WHEN NEW.root IS NOT OLD.root OR NEW.name IS NOT OLD.name OR NEW.format IS NOT OLD.format"
    return "".join(
        f"CREATE TRIGGER IF NOT EXISTS {table}_{event.lower()}_content AFTER {event} ON {table}{when} BEGIN\n"
        "    UPDATE content_version SET n = n + 1;\nEND;\n"
        for event, when in conditions.items()
    )


_M016_CONTENT_VERSION = (
    "CREATE TABLE IF NOT EXISTS content_version (n INTEGER NOT NULL);\n"
    "INSERT INTO content_version (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM content_version);\n"
) + "".join(
    _bump_triggers(table)
    for table in ("nodes", "edges", "passages", "node_keys", "embeddings", "passage_vectors", "sources", "meta")
)


def _m017_link_counts(conn: sqlite3.Connection) -> None:
    """How many distinct nodes link to a node by each edge type, for the classes with many, kept
    exact by triggers on ``edges`` (``ctx.store.link_counts``): a hub's count of neighbours without
    reading its index."""
    from ctx.store import link_counts

    link_counts.create(conn)


# A node whose title is only its body's own first words (Tana names a node by its text; outline
# and JSON importers cut a long first line to a title ending in "…") has no title of its own:
# indexed as one, those words counted twice and in the column weighted most (title 2 stemmed,
# 10 exact), so such a paragraph ranked by whether the question's words fell in its first line.
# The ``passage_texts`` view, which the passage indexes read, now gives its passages an empty
# title (``passage_reads.indexed_title`` is the same rule for PostgreSQL). The rows it changes
# leave the indexes with the old view's words and come back with the new view's; no other row
# moves. Readers of the node's own title read ``nodes``.
def _m018_derived_titles(conn: sqlite3.Connection) -> None:
    """Passages of a node whose title is its body's opening are indexed without that title."""
    derived = (
        "(n.body = n.title OR (substr(n.title, -1) = '…'"
        " AND substr(n.body, 1, length(n.title) - 1) = substr(n.title, 1, length(n.title) - 1)))"
    )
    changed = f"JOIN nodes n ON n.id = t.node_id WHERE n.title != '' AND {derived}"
    indexes = [(f"{table}{suffix}", "=" if not suffix else "!=")
               for suffix in ("", "_private") for table in ("passages_fts", "passages_exact")]
    for index, private in indexes:
        conn.execute(
            f"INSERT INTO {index} ({index}, rowid, title, context, heading, text)"
            f" SELECT 'delete', t.id, t.title, t.context, t.heading, t.text FROM passage_texts t {changed}"
            f" AND n.private {private} 0"
        )
    conn.execute("DROP VIEW passage_texts")
    conn.execute(
        "CREATE VIEW passage_texts AS"
        f" SELECT p.id, p.node_id, p.ord, CASE WHEN {derived} THEN '' ELSE n.title END AS title,"
        " p.context, p.heading,"
        ' COALESCE(p.own_text, trim(substr(n.body, p.start + 1, p."end" - p.start), char(10))) AS text,'
        " p.tokens, p.hash"
        " FROM passages p JOIN nodes n ON n.id = p.node_id"
    )
    for index, private in indexes:
        conn.execute(
            f"INSERT INTO {index} (rowid, title, context, heading, text)"
            f" SELECT t.id, t.title, t.context, t.heading, t.text FROM passage_texts t {changed}"
            f" AND n.private {private} 0"
        )


# A long passage's paragraphs' own vectors (``ctx.assemble.paragraph_vectors``): a log note's
# passage of many unrelated paragraphs has one vector diluted over all of them. One row per
# passage text and paragraph text, so a build finds a passage's paragraphs by the passage's hash;
# a paragraph shared by two passages is embedded once and its vector copied.
_M019_PARAGRAPH_VECTORS = """
CREATE TABLE IF NOT EXISTS paragraph_vectors (
    model TEXT NOT NULL,
    passage_hash TEXT NOT NULL,     -- passages.hash of the passage holding the paragraph
    hash TEXT NOT NULL,             -- the paragraph's own text hash
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,           -- dim little-endian float32, L2-normalised
    PRIMARY KEY (model, passage_hash, hash)
);
CREATE INDEX IF NOT EXISTS paragraph_vectors_by_hash ON paragraph_vectors (model, hash);
""" + _bump_triggers("paragraph_vectors")


MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    _M001_GRAPH,
    _M002_EMBEDDINGS,
    _M003_UPDATED_INDEX,
    _M004_APPLICATION_ID,
    _M005_PASSAGES,
    _M006_PRIVATE_INDEX,
    _M007_WALK_INDEX,
    _M008_PASSAGE_SPANS,
    _M009_COVERING_EDGE_INDEXES,
    _M010_PRIVATE_FTS,
    _m011_recompute_privacy,
    # 12 gives the PostgreSQL engine SQLite's BM25 (FTS5 computes it already): nothing here.
    "-- 12: nothing to do on SQLite\n",
    # 13 speeds up the PostgreSQL engine's phrase frequencies: nothing here either.
    "-- 13: nothing to do on SQLite\n",
    _M014_CONTEXTS,
    _M015_RECENCY_INDEX,
    _M016_CONTENT_VERSION,
    _m017_link_counts,
    _m018_derived_titles,
    _M019_PARAGRAPH_VECTORS,
    # 20 stores paragraph vectors on PostgreSQL too (SQLite's came with 19): nothing here.
    "-- 20: nothing to do on SQLite\n",
]
# Migrations a reader can do without (an index, a mark, the passages that builds fall back from
# to whole nodes, passages that store their own text, build manifests, the content counter, link counts, titles left out of the passage indexes, paragraph vectors, 20's empty step): a read-only graph that lacks only these is
# read as it is instead of refused.
NOT_NEEDED_FOR_READING = frozenset({3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> int:
    """Apply every migration not yet applied, each in its own transaction. Returns the version."""
    for number, script in enumerate(MIGRATIONS, start=1):
        if number <= current_version(conn):
            continue
        with transaction(conn):
            # Checked again under the write lock: two processes creating the same new graph both
            # saw the old version, and the one that waited for the lock finds the work done.
            if current_version(conn) < number:
                if callable(script):  # a migration that needs more than SQL
                    script(conn)
                else:
                    for statement in statements(script):
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")  # transactional: undone with the rest
    return current_version(conn)


def statements(script: str) -> list[str]:
    """A SQL script as single statements (a trigger's body stays whole), for ``execute``.

    ``executescript`` would commit any open transaction first, so it cannot run inside one.
    """
    out: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if pending.strip():
                out.append(pending.strip())
            pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def readable_as_is(version: int) -> bool:
    """Whether a graph at schema ``version`` can be read without the migrations it lacks."""
    return all(number in NOT_NEEDED_FOR_READING for number in range(version + 1, len(MIGRATIONS) + 1))
