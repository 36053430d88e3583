"""Builds bounded by the budget: the walk stops when nothing further can enter the candidate pool,
hubs are cut to the fan-out in SQL, and what the pool leaves out is said.

The graphs are generated here (seeded): tags shared by many notes (hubs), links, a parent tree,
private notes, and dates either all equal (so distance decides, and the walk's bound can stop it
early) or spread over a year.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import ctx.assemble.pool as pool_module
import ctx.assemble.traverse as traverse
from build_graphs import import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context


def generated_graph(n: int, seed: int, *, same_dates: bool) -> list[dict]:
    rng = random.Random(seed)
    ids = [f"n{i:04d}" for i in range(n)]
    tags = ["alpha", "beta", "gamma", "planning", "task"]
    records = []
    for i, node_id in enumerate(ids):
        # Preferential attachment: low ids are linked to far more often (hubs of backlinks).
        links = sorted({ids[int(rng.random() ** 3 * n)] for _ in range(rng.randint(1, 4))} - {node_id})
        day = 1 if same_dates else 1 + (i * 7) % 365
        record = {
            "id": node_id,
            "title": f"Note {i} {rng.choice(['goal', 'risk', 'sync', 'draft', 'spec'])}",
            "body": " ".join(rng.choice(["crane", "harbour", "launch", "budget", "parser", "design"]) for _ in range(30)),
            "type": rng.choice(["note", "note", "task", "project"]),
            "tags": rng.sample(tags, rng.randint(0, 2)),
            "links": links,
            "updated": f"2024-{1 + (day - 1) // 31 % 12:02d}-{1 + (day - 1) % 28:02d}",
        }
        if i > 10 and rng.random() < 0.3:
            record["parent"] = ids[rng.randrange(0, 10)]
        if rng.random() < 0.03:
            record["tags"] = [*record["tags"], "private"]
        records.append(record)
    return records


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("bounded")
    out = {}
    for name, same in (("same-dates", True), ("spread-dates", False)):
        source = write_jsonl(root / f"{name}.jsonl", generated_graph(400, 11, same_dates=same))
        out[name] = import_into(root / f"{name}.db", source)
    return out


def run(conn, topic: str, **kw) -> tuple[str, list[dict], list[str], dict]:
    result = build_context(conn, BuildRequest((topic,), explain=True, **kw))
    return result.text, result.candidates, result.warnings, result.meta


CASES = [
    ("n0000", "general", 1), ("n0000", "general", 3), ("n0007", "planning", 2), ("n0123", "general", 5),
    ("n0123", "writing", 3), ("n0399", "workspace", 2), ("n0042", "meeting-prep", 3), ("n0333", "coding", 4),
]


@pytest.mark.parametrize("name", ["same-dates", "spread-dates"])
def test_hubs_cut_in_sql_keep_what_the_python_path_keeps(graphs, name, monkeypatch):
    conn = graphs[name]
    for topic, lens, depth in CASES:
        for fmt in ("markdown", "json"):
            monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 10**9)  # every node through the Python path
            python_path = run(conn, topic, lens=lens, depth=depth, format=fmt, max_tokens=3000)
            monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node through the SQL path
            sql_path = run(conn, topic, lens=lens, depth=depth, format=fmt, max_tokens=3000)
            assert sql_path == python_path, (topic, lens, depth, fmt)
    # The cut was exercised: some node had more fresh neighbours than the fan-out.
    assert any(meta.get("fan_out", {}).get("capped_nodes") for *_, meta in [
        run(conn, "n0000", lens="general", depth=2, format="json")])


def small_pool(monkeypatch) -> None:
    """A pool of 12 candidates, a walk capped at 60 nodes and 6 expansions a hop: what a graph of
    millions is to a 4,000-token pool, this graph of 400 is to these."""
    monkeypatch.setattr(pool_module, "MIN_POOL", 12)
    monkeypatch.setattr(pool_module, "TOKENS_PER_CANDIDATE", 10**6)
    monkeypatch.setattr(pool_module, "MIN_REACHED", 60)
    monkeypatch.setattr(pool_module, "MIN_EXPAND", 6)


def top_rows(rows: list[dict], n: int) -> list[tuple]:
    return [(r["rank"], r["id"], r["score"], r["path"], r["distance"], r["distance_term"], r["recency"])
            for r in rows[:n]]


@pytest.mark.parametrize("name", ["same-dates", "spread-dates"])
def test_a_walk_stopped_by_the_bound_keeps_the_same_best_candidates(graphs, name, monkeypatch):
    """Whatever the walk left unreached could not have ranked among the pool: the pool's rows
    (rank, id, score, path) are those of the walk that went all the way."""
    conn = graphs[name]
    stopped = compared = 0
    for topic, lens, depth in CASES:
        monkeypatch.setattr(pool_module, "MIN_POOL", 10**6)  # a pool larger than the graph: full walk
        _, full_rows, _, full_meta = run(conn, topic, lens=lens, depth=depth)
        assert "pool" not in full_meta
        small_pool(monkeypatch)
        _, rows, _, meta = run(conn, topic, lens=lens, depth=depth)
        assert rows, (topic, "names a node in both graphs")
        seeds = sum(1 for r in rows if r["distance"] == 0 and r["path"] == "-")
        if "pool" in meta:
            pool = meta["pool"]
            assert len(rows) == pool["kept"] <= 12 + seeds
            assert pool["reached"] <= len(full_rows)
            stopped += pool["walk"]["stopped"] == "bound"
            if pool["walk"]["stopped"] == "bound" or not (pool["walk"]["stopped"] or pool["walk"]["unexpanded"]):
                # A proof, not a guess: the same best candidates as the whole walk.
                assert top_rows(rows, 12) == top_rows(full_rows, 12), (topic, lens, depth)
                compared += 1
        else:
            assert top_rows(rows, len(rows)) == top_rows(full_rows, len(full_rows))
    if name == "same-dates":
        assert stopped, "the bound never stopped a walk early on a graph where distance decides"
    assert compared >= 2


def test_the_pool_and_an_early_stop_are_said(graphs, monkeypatch):
    conn = graphs["same-dates"]
    small_pool(monkeypatch)
    result = build_context(conn, BuildRequest(("n0000",), depth=4, format="json", explain=True))
    meta = json.loads(result.text)["meta"]
    pool = meta["pool"]
    assert pool["size"] == 12 and pool["kept"] <= 12 + 1 and pool["reached"] > pool["kept"]
    assert pool["walk"]["stopped"] in ("bound", "cap") and pool["walk"]["hops"] < 4
    assert result.meta["pool"] == pool
    # --explain (CLI and MCP) prints it under the table; the markdown header does not spend the
    # budget on it (its "omitted" count still counts every node reached).
    markdown = build_context(conn, BuildRequest(("n0000",), depth=4, explain=True))
    caption = markdown.meta["explain"].splitlines()[-1]
    assert caption.startswith(f"candidates: the best {pool['kept']} of {pool['reached']} reached")
    assert "walk stopped after hop" in caption
    assert "candidates: the best" not in markdown.text


def test_small_graphs_are_walked_whole_and_say_nothing_about_a_pool(graphs):
    conn = graphs["spread-dates"]
    _, rows, _, meta = run(conn, "n0399", lens="general", depth=1)
    assert "pool" not in meta
    text, _, _, _ = run(conn, "n0399", lens="general", depth=1)
    assert "candidates: the best" not in text


def test_a_read_only_graph_walks_hubs_too(graphs, tmp_path: Path, monkeypatch):
    """The hub path keeps the walk's reached nodes in a temporary table: it must work on a graph
    opened from a read-only file as well."""
    import shutil
    import stat

    from ctx.store import connect

    conn = graphs["same-dates"]
    db = tmp_path / "ro.db"
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    source = Path(conn.execute("PRAGMA database_list").fetchone()[2])
    shutil.copy(source, db)
    db.chmod(stat.S_IRUSR)
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        ro = connect(db)
        monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)
        text, *_ = run(ro, "n0000", lens="general", depth=2)
        monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 10**9)
        again, *_ = run(ro, "n0000", lens="general", depth=2)
        assert text == again
    finally:
        tmp_path.chmod(stat.S_IRWXU)


def test_the_walk_reads_what_it_ranks_from_an_index_not_from_node_rows(graphs, monkeypatch):
    """Each node the walk reaches over an edge (and each hub neighbour ranked in SQL) is read for
    its type, tags, date, title and privacy: from the ``nodes_walked`` index, never the node's row
    with its body (at 100k nodes, a hub's 12,000 neighbours were as many row reads)."""
    conn = graphs["spread-dates"]
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        run(conn, "n0000", lens="general", depth=2)
        monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node a hub: neighbours ranked in SQL
        run(conn, "n0000", lens="general", depth=2)
    finally:
        conn.set_trace_callback(None)
    walk_reads = [s for s in statements if "JOIN nodes n ON n.id = e." in s and "n.title" in s]
    kinds = {("best" if s.startswith("WITH fresh") else "edges") for s in walk_reads}
    assert kinds == {"best", "edges"}, "both the edge walk and the hub ranking were exercised"
    for sql in walk_reads:
        plan = " | ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "COVERING INDEX nodes_walked" in plan, plan
        # The other end of each edge comes from the edge index too, not the edge's row.
        assert "SEARCH edges USING COVERING INDEX edges_" in plan or "SEARCH e USING COVERING INDEX edges_" in plan, plan


@pytest.mark.parametrize("name", ["same-dates", "spread-dates"])
def test_the_pool_cut_takes_the_stop_tests_bounds_and_cuts_as_from_its_own(graphs, name, monkeypatch):
    """A walk the bound stopped, or the cap right after the bound's test, hands that test's bounds
    to the pool's cut (``pool._bounds``): the same bytes as when every node is bounded again, and
    the walk that went on past a test (or ended by its depth) hands none."""
    conn = graphs[name]
    small_pool(monkeypatch)
    taken = []
    bounded = pool_module._bounds

    def recorded(walked, ids, bound):
        taken.append(walked.stopped if walked.bounded is not None else None)
        return bounded(walked, ids, bound)

    monkeypatch.setattr(pool_module, "_bounds", recorded)
    outputs = {}
    for topic, lens, depth in CASES:
        outputs[(topic, lens, depth)] = run(conn, topic, lens=lens, depth=depth, format="json")
    assert "bound" in taken, "no walk the bound stopped handed its bounds to the cut"
    assert "cap" in taken, "no walk the cap stopped after the bound's test handed its bounds to the cut"

    real_walk = traverse.walk

    def walk_without(*args, **kwargs):
        walked = real_walk(*args, **kwargs)
        assert walked.bounded is None or walked.stopped in ("bound", "cap")
        walked.bounded = None  # the pool's cut bounds every node itself
        return walked

    monkeypatch.setattr(pool_module, "_bounds", bounded)
    import ctx.assemble.pipeline as pipeline

    monkeypatch.setattr(pipeline, "walk", walk_without)
    for (topic, lens, depth), before in outputs.items():
        assert run(conn, topic, lens=lens, depth=depth, format="json") == before, (topic, lens, depth)
