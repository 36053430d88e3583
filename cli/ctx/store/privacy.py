"""Which nodes are private: marked by a tag or a field, below a private ancestor, or derived
(a tag node, a hierarchy stub) only from private nodes.

The markers are the user's (their config file, else the defaults) for every source, plus those the
project holding a source adds for it (``ctx.config.privacy_rules``): only the user widens.
The flag is computed when the graph changes (and when the privacy settings change), stored in
``nodes.private``, and every read path filters on it unless the user explicitly asks otherwise.
Computing it at import time keeps the build path free of a recursive walk per query.
"""

from __future__ import annotations

import sqlite3

from ctx.config import PrivacyConfig, PrivacyRules

TRUE_VALUES = ("true", "yes", "1", "on")
_TRUE_LIST = ", ".join(f"'{v}'" for v in TRUE_VALUES)


# Nodes a marker names, and everything below them (children by edge or by parent).
_MARKED_AND_BELOW = f"""
        INSERT INTO temp.private_ids (id)
        WITH RECURSIVE marked(id) AS (
            SELECT n.id FROM nodes n
            WHERE EXISTS (
                SELECT 1 FROM json_each(n.tags) j JOIN temp.privacy_markers m
                ON m.source_id = n.source_id AND m.kind = 'tag' AND m.name = lower(ltrim(j.value, '#'))
            )
            OR EXISTS (
                SELECT 1 FROM temp.privacy_markers m, json_each(n.fields, m.name) v
                WHERE m.source_id = n.source_id AND m.kind = 'field'
                  AND lower(CAST(v.value AS TEXT)) IN ({_TRUE_LIST})
            )
        ),
        below(id) AS (
            SELECT id FROM marked
            UNION
            SELECT e.dst FROM edges e JOIN below b ON e.src = b.id
            WHERE e.type = 'child' AND e.dst IS NOT NULL
            UNION
            SELECT n.id FROM nodes n JOIN below b ON n.parent_id = b.id
        )
        SELECT DISTINCT id FROM below
"""

# An outline page's passages hold its blocks' text, private blocks left out: when a block's
# privacy changes, the pages above it are split again (store/passages.py).
_RESPLIT_PAGES_ABOVE_CHANGED = """
        UPDATE nodes SET split = 0 WHERE split != 0 AND id IN (
            WITH RECURSIVE up(id, depth) AS (
                SELECT parent_id, 1 FROM nodes
                WHERE parent_id IS NOT NULL AND (
                    (private = 1 AND id NOT IN (SELECT id FROM temp.private_ids))
                    OR (private = 0 AND id IN (SELECT id FROM temp.private_ids)))
                UNION
                SELECT n.parent_id, up.depth + 1 FROM nodes n JOIN up ON n.id = up.id
                WHERE n.parent_id IS NOT NULL AND up.depth < 64
            )
            SELECT id FROM up
        )
"""


def refresh_private_flags(conn: sqlite3.Connection, rules: PrivacyRules | PrivacyConfig) -> int:
    """Recompute ``nodes.private`` for the whole graph; returns how many nodes are private.

    ``rules``: the user's markers for every source, plus those a project adds for its own sources.
    Must run inside the caller's transaction when it follows an import.
    """
    if isinstance(rules, PrivacyConfig):
        rules = PrivacyRules(rules)
    _load_markers(conn, rules)
    conn.execute("DROP TABLE IF EXISTS temp.private_ids")
    conn.execute("CREATE TEMP TABLE private_ids (id TEXT PRIMARY KEY)")
    conn.execute(_MARKED_AND_BELOW)
    conn.execute("DROP TABLE temp.privacy_markers")
    _add_derived_only_private(conn)
    conn.execute(_RESPLIT_PAGES_ABOVE_CHANGED)
    count = _store_flags(conn)
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('privacy_config', ?)", (rules.fingerprint(),)
    )
    return count


def _load_markers(conn: sqlite3.Connection, rules: PrivacyRules) -> None:
    """Each source's private tags and fields, in ``temp.privacy_markers``."""
    conn.execute("DROP TABLE IF EXISTS temp.privacy_markers")
    conn.execute(
        "CREATE TEMP TABLE privacy_markers (source_id INTEGER, kind TEXT, name TEXT,"
        " PRIMARY KEY (source_id, kind, name)) WITHOUT ROWID"
    )
    markers = []
    for (source_id,) in conn.execute("SELECT id FROM sources").fetchall():
        config = rules.for_source(source_id)
        markers += [(source_id, "tag", t.lower()) for t in config.tags]
        # A field's JSON path, quoted as json_each wants it.
        markers += [(source_id, "field", '$."' + name.replace('"', '""') + '"') for name in config.fields]
    conn.executemany("INSERT OR IGNORE INTO temp.privacy_markers VALUES (?, ?, ?)", markers)


def _store_flags(conn: sqlite3.Connection) -> int:
    """Write ``temp.private_ids`` into ``nodes.private`` (touching only rows that change) and
    drop it; returns how many nodes are private."""
    conn.execute(
        "UPDATE nodes SET private = 0 WHERE private = 1"
        " AND id NOT IN (SELECT id FROM temp.private_ids)"
    )
    conn.execute(
        "UPDATE nodes SET private = 1 WHERE private = 0 AND id IN (SELECT id FROM temp.private_ids)"
    )
    count = conn.execute("SELECT COUNT(*) FROM temp.private_ids").fetchone()[0]
    conn.execute("DROP TABLE temp.private_ids")
    return int(count)


def _add_derived_only_private(conn: sqlite3.Connection) -> None:
    """Derived nodes that only private nodes account for are private too.

    A tag node (``#acquisition-target``), a namespace or hierarchy stub (``Secret/`` of a
    private ``Secret/Plan``) exists because some file's node named it. When every node that
    names it is private, showing it would show a private note's words: it is private unless a
    public node read from a file is adjacent to it, or to a derived node that is (stubs chain).
    Runs after the marked/below set is in ``temp.private_ids``.
    """
    conn.execute("DROP TABLE IF EXISTS temp.derived_ids")
    conn.execute("CREATE TEMP TABLE derived_ids (id TEXT PRIMARY KEY)")
    conn.execute("INSERT INTO temp.derived_ids (id) SELECT id FROM nodes WHERE file = ''")
    conn.execute(
        """
        INSERT OR IGNORE INTO temp.private_ids (id)
        WITH RECURSIVE supported(id) AS (
            -- One public file node beside a derived node is enough: asked per derived node, the
            -- search stops at the first (all the links of every tag were read: 0.7 s at 100k).
            SELECT d.id FROM temp.derived_ids d WHERE EXISTS (
                SELECT 1 FROM edges e JOIN nodes s ON s.id = e.src
                WHERE e.dst = d.id AND s.file != '' AND s.id NOT IN (SELECT id FROM temp.private_ids)
            ) OR EXISTS (
                SELECT 1 FROM edges e JOIN nodes t ON t.id = e.dst
                WHERE e.src = d.id AND t.file != '' AND t.id NOT IN (SELECT id FROM temp.private_ids)
            )
            UNION
            SELECT e.dst FROM edges e JOIN supported u ON e.src = u.id
            WHERE e.dst IN (SELECT id FROM temp.derived_ids)
            UNION
            SELECT e.src FROM edges e JOIN supported u ON e.dst = u.id
            WHERE e.src IN (SELECT id FROM temp.derived_ids)
        )
        SELECT id FROM temp.derived_ids
        WHERE id NOT IN (SELECT id FROM supported) AND id NOT IN (SELECT id FROM temp.private_ids)
        """
    )
    conn.execute("DROP TABLE temp.derived_ids")


def privacy_config_changed(conn: sqlite3.Connection, rules: PrivacyRules | PrivacyConfig) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key = 'privacy_config'").fetchone()
    return row is None or row[0] != rules.fingerprint()
