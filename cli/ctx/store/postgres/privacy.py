"""Which nodes are private, on PostgreSQL: the rules of ``ctx.store.privacy`` in its SQL.

Marked by a tag or a field set to a true value, below a marked node (child edges or parent_id),
or derived (a tag node, a hierarchy stub) and supported only by private nodes. Runs inside the
import's transaction, as the graph's writer (row security does not apply to it). SQLite's
``lower()`` folds ASCII letters only: ``ctx_ascii_lower`` does the same here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctx.store.privacy import TRUE_VALUES

if TYPE_CHECKING:
    import psycopg

    from ctx.config import PrivacyConfig, PrivacyRules


# Nodes a marker names, and everything below them (children by edge or by parent_id).
_MARKED_AND_BELOW = """
        INSERT INTO ctx_private_ids (id)
        WITH RECURSIVE marked(id) AS (
            SELECT n.id FROM nodes n
            WHERE EXISTS (
                SELECT 1 FROM json_array_elements(n.tags::json) AS j(x) JOIN ctx_privacy_markers m
                ON m.source_id = n.source_id AND m.kind = 'tag'
                   AND m.name = ctx_ascii_lower(ltrim(x #>> '{}', '#'))
                WHERE json_typeof(x) = 'string'
            )
            OR EXISTS (
                -- a field holds a list of values (or, from an older importer, one value)
                SELECT 1 FROM ctx_privacy_markers m, json_array_elements(
                    CASE json_typeof(n.fields::json -> m.name) WHEN 'array' THEN n.fields::json -> m.name
                    ELSE json_build_array(n.fields::json -> m.name) END) AS v(x)
                WHERE m.source_id = n.source_id AND m.kind = 'field'
                  AND ctx_ascii_lower(x #>> '{}') = ANY(%s)
            )
        ),
        below(id) AS (
            SELECT id FROM marked
            UNION
            SELECT x.id FROM below b, LATERAL (
                SELECT e.dst AS id FROM edges e WHERE e.src = b.id AND e.type = 'child' AND e.dst IS NOT NULL
                UNION ALL
                SELECT n.id FROM nodes n WHERE n.parent_id = b.id
            ) x
        )
        SELECT DISTINCT id FROM below WHERE id IS NOT NULL
"""

# The pages above a block whose privacy changes are split again (``ctx.store.privacy``).
_RESPLIT_PAGES_ABOVE_CHANGED = """
        UPDATE nodes SET split = 0 WHERE split <> 0 AND id IN (
            WITH RECURSIVE up(id, depth) AS (
                SELECT parent_id, 1 FROM nodes
                WHERE parent_id IS NOT NULL AND (
                    (private AND id NOT IN (SELECT id FROM ctx_private_ids))
                    OR (NOT private AND id IN (SELECT id FROM ctx_private_ids)))
                UNION
                SELECT n.parent_id, up.depth + 1 FROM nodes n JOIN up ON n.id = up.id
                WHERE n.parent_id IS NOT NULL AND up.depth < 64
            )
            SELECT id FROM up
        )
"""


def refresh_private_flags(conn: "psycopg.Connection[Any]", rules: PrivacyRules | PrivacyConfig) -> int:
    """``rules``: the user's markers for every source, plus those a project adds for its own."""
    from ctx.config import PrivacyConfig, PrivacyRules

    if isinstance(rules, PrivacyConfig):
        rules = PrivacyRules(rules)
    _load_markers(conn, rules)
    conn.execute("DROP TABLE IF EXISTS ctx_private_ids")
    conn.execute("CREATE TEMP TABLE ctx_private_ids (id text COLLATE \"C\" PRIMARY KEY) ON COMMIT DROP")
    conn.execute(_MARKED_AND_BELOW, [list(TRUE_VALUES)])
    _add_derived_only_private(conn)
    conn.execute(_RESPLIT_PAGES_ABOVE_CHANGED)
    conn.execute("UPDATE nodes SET private = false WHERE private AND id NOT IN (SELECT id FROM ctx_private_ids)")
    conn.execute("UPDATE nodes SET private = true WHERE NOT private AND id IN (SELECT id FROM ctx_private_ids)")
    count = int(conn.execute("SELECT count(*) FROM ctx_private_ids").fetchone()[0])  # type: ignore[index]
    conn.execute("DROP TABLE ctx_private_ids")
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('privacy_config', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (rules.fingerprint(),),
    )
    conn.execute("DROP TABLE ctx_privacy_markers")
    return count


def _load_markers(conn: "psycopg.Connection[Any]", rules: PrivacyRules) -> None:
    """Each source's private tags and fields, copied into ``ctx_privacy_markers``."""
    markers: set[tuple[int, str, str]] = set()
    for (source_id,) in conn.execute("SELECT id FROM sources").fetchall():
        config = rules.for_source(source_id)
        markers |= {(source_id, "tag", t.lower()) for t in config.tags}
        markers |= {(source_id, "field", name) for name in config.fields}
    conn.execute("DROP TABLE IF EXISTS ctx_privacy_markers")
    conn.execute(
        "CREATE TEMP TABLE ctx_privacy_markers (source_id integer, kind text, name text COLLATE \"C\")"
        " ON COMMIT DROP"
    )
    with conn.cursor().copy("COPY ctx_privacy_markers (source_id, kind, name) FROM STDIN") as copy:
        for row in sorted(markers):
            copy.write_row(row)


def _add_derived_only_private(conn: "psycopg.Connection[Any]") -> None:
    """Derived nodes (file '') that no public node read from a file supports, directly or
    through a chain of derived nodes, are private too (``ctx.store.privacy``)."""
    conn.execute("DROP TABLE IF EXISTS ctx_derived_ids")
    conn.execute("CREATE TEMP TABLE ctx_derived_ids (id text COLLATE \"C\" PRIMARY KEY) ON COMMIT DROP")
    conn.execute("INSERT INTO ctx_derived_ids (id) SELECT id FROM nodes WHERE file = ''")
    conn.execute(
        """
        INSERT INTO ctx_private_ids (id)
        WITH RECURSIVE supported(id) AS (
            SELECT e.dst FROM edges e JOIN nodes s ON s.id = e.src
            WHERE s.file <> '' AND e.dst IN (SELECT id FROM ctx_derived_ids)
              AND s.id NOT IN (SELECT id FROM ctx_private_ids)
            UNION
            SELECT e.src FROM edges e JOIN nodes d ON d.id = e.dst
            WHERE d.file <> '' AND e.src IN (SELECT id FROM ctx_derived_ids)
              AND d.id NOT IN (SELECT id FROM ctx_private_ids)
            UNION
            SELECT x.id FROM supported u, LATERAL (
                SELECT e.dst AS id FROM edges e WHERE e.src = u.id AND e.dst IN (SELECT id FROM ctx_derived_ids)
                UNION ALL
                SELECT e.src FROM edges e WHERE e.dst = u.id AND e.src IN (SELECT id FROM ctx_derived_ids)
            ) x
        )
        SELECT id FROM ctx_derived_ids
        WHERE id NOT IN (SELECT id FROM supported WHERE id IS NOT NULL) AND id NOT IN (SELECT id FROM ctx_private_ids)
        ON CONFLICT DO NOTHING
        """
    )
    conn.execute("DROP TABLE ctx_derived_ids")
