"""The team graph's ``with_outline_link`` on a real PostgreSQL (``pg_server``): for 500 ids of a real
outliner graph (logseq-docs) it gives the SQLite view's answer at both ends of the edges, and its
plan looks both nodes of an edge up by id. Joined plainly, the planner matched the parent through
``nodes_by_file`` and then filtered every node of that file (40-80 ms a call against ~8 ms)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import corpus_path, imported_graph

psycopg = pytest.importorskip("psycopg")

from ctx import Graph  # noqa: E402
from ctx.lenses.model import OutputOptions  # noqa: E402
from ctx.store.postgres.reader import outline_link_sql  # noqa: E402
from ctx.store.view import GraphView  # noqa: E402

OUTLINE_FORMATS = OutputOptions().outline_formats


def _indexes(plan: object) -> set[str]:
    """Every index an EXPLAIN (FORMAT JSON) plan names, at any depth."""
    if isinstance(plan, dict):
        found = {plan["Index Name"]} if "Index Name" in plan else set()
        for value in plan.values():
            found |= _indexes(value)
        return found
    if isinstance(plan, list):
        return set().union(*(_indexes(item) for item in plan)) if plan else set()
    return set()


def test_outline_links_on_postgres_are_sqlites_and_read_by_id(pg_url, tmp_path_factory, run_cli):
    corpus = corpus_path("logseq-docs")
    lite = imported_graph(tmp_path_factory, corpus)
    assert run_cli("import", str(corpus), "--quiet", db=pg_url).exit_code == 0  # type: ignore[arg-type]
    conn = sqlite3.connect(lite)
    try:
        ids = [r[0] for r in conn.execute("SELECT dst FROM edges WHERE type = 'child' ORDER BY dst LIMIT 500")]
        assert len(ids) == 500
        view = GraphView(conn)
        with Graph.open(pg_url, include_private=True) as graph:
            reader = graph.reader
            for end in ("src", "dst"):
                want = view.with_outline_link(ids, OUTLINE_FORMATS, end)
                assert want, end
                assert reader.with_outline_link(ids, OUTLINE_FORMATS, end) == want, end
                [(plan,)] = reader._rows(  # type: ignore[attr-defined]
                    "EXPLAIN (FORMAT JSON) " + outline_link_sql(end), (ids, list(OUTLINE_FORMATS))
                )
                plan = json.loads(plan) if isinstance(plan, str) else plan
                used = _indexes(plan)
                assert "nodes_by_file" not in used, used
                assert "nodes_pkey" in used, used
    finally:
        conn.close()
