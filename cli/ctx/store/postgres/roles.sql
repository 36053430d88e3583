-- ctx team graph: the roles, in one script. Run it once, after the first `ctx import` made the
-- graph, connected to the graph's database as a superuser or a role with CREATEROLE that owns
-- the graph's tables (psql "$URL" -f roles.sql; `ctx` prints it with `python -m ctx.store.postgres.roles`).
-- It can be run again: it creates what is missing and grants again.
--
--   ctx_writer   owns the graph: imports, sync, watch, embed, migrations, index builds.
--                Owners are not subject to row-level security: a writer sees private notes.
--   ctx_reader   reads the graph (build, search, show, stats, mcp) without private notes:
--                row-level security hides their rows, titles, passages, tags, edges and
--                vectors, whatever SQL the role sends.
--   ctx_private  added to a reader, lets it read private notes too.
--
-- Login roles are members of these, e.g.
--   CREATE ROLE sync_bot LOGIN PASSWORD '...' IN ROLE ctx_writer;
--   CREATE ROLE agents   LOGIN PASSWORD '...' IN ROLE ctx_reader;
--   CREATE ROLE maya     LOGIN PASSWORD '...' IN ROLE ctx_reader, ctx_private;

DO $roles$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctx_writer') THEN
        CREATE ROLE ctx_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctx_reader') THEN
        CREATE ROLE ctx_reader NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ctx_private') THEN
        CREATE ROLE ctx_private NOLOGIN;
    END IF;
END
$roles$;

DO $grants$
DECLARE
    graph_schema text := current_schema();
    object record;
BEGIN
    IF to_regclass('ctx_schema') IS NULL THEN
        RAISE EXCEPTION 'no ctx graph in schema %: run ctx import first', graph_schema;
    END IF;
    -- The writers own every object of the graph (tables, the view, the functions).
    FOR object IN
        SELECT c.relname AS name, c.relkind AS kind FROM pg_class c
        JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE s.nspname = graph_schema AND c.relkind IN ('r', 'v')
    LOOP
        EXECUTE format('ALTER %s %I.%I OWNER TO ctx_writer',
                       CASE object.kind WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, graph_schema, object.name);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS signature FROM pg_proc p
        JOIN pg_namespace s ON s.oid = p.pronamespace
        WHERE s.nspname = graph_schema AND p.proname LIKE 'ctx\_%'
    LOOP
        EXECUTE format('ALTER FUNCTION %s OWNER TO ctx_writer', object.signature);
    END LOOP;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO ctx_reader, ctx_writer', graph_schema);
    EXECUTE format('GRANT CREATE ON SCHEMA %I TO ctx_writer', graph_schema);
    EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO ctx_reader', graph_schema);
    EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA %I TO ctx_reader', graph_schema);
END
$grants$;

-- A reader may not write, except the cache of embedded questions (a question embedded once is
-- not embedded again; what it holds is a hash of the question and its vector).
GRANT INSERT, UPDATE ON query_embeddings TO ctx_reader;
