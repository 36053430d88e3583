"""A big hub's best neighbours read newest first (``ctx.store.hub_scan``) are the ones SQLite's
ranking of every neighbour gives: the same rows in the same order, the same count, whatever the
walk holds, the reader may see, the ranker boosts, and however dates tie.

The graph is generated here (seeded) with what makes the scan's shortcuts risky: a tag on most
notes and a note most notes link to (hubs), a third of the notes on one clamped date (ties broken
by id), undated notes, private notes, a note linking the hub twice and one linking itself, the
hub's own few outgoing links (a second, small class), and ``ref`` and ``supports`` edges to the hub
(more small classes, bigger than a build's fan-out: some of their nodes link the hub too, some are
in both, some are private)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

import ctx.assemble.traverse as traverse
from build_graphs import import_into, write_jsonl
from ctx.assemble import BuildRequest, build_context
from ctx.assemble.score import NeighbourRanker
from ctx.lenses import load_lens
from ctx.store import hub_scan, link_counts
from ctx.store.view import GraphView

N = 600


def records(seed: int, *, undated: bool) -> list[dict]:
    rng = random.Random(seed)
    ids = [f"n{i:04d}" for i in range(N)]
    out = []
    for i, node_id in enumerate(ids):
        links = sorted({ids[int(rng.random() ** 2 * N)] for _ in range(rng.randint(0, 3))})
        if rng.random() < 0.6:
            links.append("n0000")
        if i % 97 == 5:
            links += ["n0000", "n0000"]  # the same link twice: one neighbour, two edge rows
        record = {
            "id": node_id,
            "title": f"Note {i}",
            "body": f"Body of note {i}.",
            "type": rng.choice(["note", "note", "task", "project"]),
            "tags": (["big"] if rng.random() < 0.7 else []) + (["private"] if rng.random() < 0.04 else []),
            "links": links,
        }
        if i < N // 3:
            record["updated"] = "2024-12-31"  # ties: the newest date, like dates clamped to a day
        elif not (undated and i % 11 == 0):
            record["updated"] = f"2024-{1 + i % 12:02d}-{1 + (i * 7) % 28:02d}T{i % 24:02d}:00:00"
        out.append(record)
    out[0]["links"] = ["n0000", "n0001", "n0002", "n0003"]  # a self-loop and a few outgoing links
    # Small classes of the hub n0000, a quarter of its backlinks at most: every 15th note refers
    # to it, every 23rd supports it (every 345th does both), whether or not it links it too.
    out += [{"source": node_id, "target": "n0000", "type": "ref"} for node_id in ids[1::15]]
    out += [{"source": node_id, "target": "n0000", "type": "supports"} for node_id in ids[2::23]]
    out += [{"source": "n0000", "target": "n0000", "type": "ref"}]  # a self-loop of a small class
    return out


def hub_graphs(root: Path) -> dict[str, sqlite3.Connection]:
    """The hub graphs under ``root``: "dated", and "some-undated" where some notes have no time."""
    out = {
        name: import_into(root / f"{name}.db", write_jsonl(root / f"{name}.jsonl", records(5, undated=undated)))
        for name, undated in (("dated", False), ("some-undated", True))
    }
    # A note without a date is given its file's time at import; these have none at all.
    undated = [f"n{i:04d}" for i in range(N // 3, N) if i % 11 == 0]
    out["some-undated"].execute(f"UPDATE nodes SET updated = NULL WHERE id IN ({','.join('?' * len(undated))})", undated)
    return out


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, sqlite3.Connection]:
    return hub_graphs(tmp_path_factory.mktemp("hub-scan"))


@pytest.fixture
def scan_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a hub of 100,000s of links is to a graph of millions, these hubs are to 600 notes."""
    monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 20)
    monkeypatch.setattr(hub_scan, "SCAN_SHARE", 1000.0)


def sql_ranking(view: GraphView, *args: object) -> object:
    scan = hub_scan.scan_best
    hub_scan.scan_best = lambda *a, **k: None  # type: ignore[assignment]
    try:
        return view.best_neighbours(*args)  # type: ignore[arg-type]
    finally:
        hub_scan.scan_best = scan


def rankers(conn) -> list[NeighbourRanker]:
    reference = GraphView(conn).newest_update()
    plain = NeighbourRanker(load_lens("general"), reference)
    boosted = NeighbourRanker(load_lens("general"), reference)
    boosted.type_boosts = {"task": 2.0, "project": 0.5}
    damped = NeighbourRanker(load_lens("general"), reference)
    damped.type_boosts = {"note": 0.25}
    return [plain, boosted, damped]


def compare_scan_with_sql(conn, hubs, limits, held_sets, rng, *, through_view=False) -> tuple[int, int]:
    """The scan's ranking of each hub against SQL's, over both views, every ranker, each limit and
    each walk state (``held_sets``: the hub's own cost and how many other nodes the walk holds, at
    random costs); with ``through_view`` the reader's own ``best_neighbours`` too. Returns (how many
    the scan answered, how many were compared)."""
    ids = [f"n{i:04d}" for i in range(N)]
    scanned = compared = 0
    for include_private in (False, True):
        view = GraphView(conn, include_private=include_private)
        for ranker in rankers(conn):
            for hub, weights in hubs:
                for limit in limits:
                    for base, held in held_sets:
                        costs = [(hub, base)] + [(v, rng.choice([0.5, 1.5, 2.0, 3.0, 4.0])) for v in rng.sample(ids, held)]
                        view.remember_reached(costs, reset=True)
                        fast = hub_scan.scan_best(conn, hub, base, weights, ranker, limit, include_private)
                        expected = sql_ranking(view, hub, base, weights, ranker, limit)
                        compared += 1
                        if fast is not None:
                            scanned += 1
                            assert fast == expected, (hub, weights, limit, base, held, include_private)
                        if through_view:
                            assert view.best_neighbours(hub, base, weights, ranker, limit) == expected
    return scanned, compared


HUBS = [
    ("tag:big", {("tag", "in"): 0.5}),
    ("n0000", {("link", "in"): 1.0, ("link", "out"): 1.0}),
    ("n0000", {("link", "in"): 0.5, ("link", "out"): 2.0}),
    # The small classes valued and cut in SQL: one heavier than the big class, one lighter
    # (a node in it and in the big class is worth the big class's weight).
    ("n0000", {("link", "in"): 1.0, ("ref", "in"): 2.0, ("supports", "in"): 0.5}),
    ("n0000", {("link", "in"): 1.0, ("link", "out"): 1.0, ("ref", "in"): 1.0, ("supports", "in"): 1.0}),
]


@pytest.mark.parametrize("counts", ["kept", "counted"])
@pytest.mark.parametrize("name", ["dated", "some-undated"])
def test_the_newest_first_scan_ranks_as_sql_does(graphs, name, counts, scan_everywhere, monkeypatch):
    conn = graphs[name]
    # The hubs' link counts kept (``link_counts``), or counted from the index.
    monkeypatch.setattr(link_counts, "KEPT_AT_LEAST", 20 if counts == "kept" else 10**9)
    link_counts.fill(conn)
    assert (conn.execute("SELECT COUNT(*) FROM link_counts").fetchone()[0] > 0) == (counts == "kept")
    scanned, compared = compare_scan_with_sql(
        conn, HUBS, (1, 7, 40), ((0.0, 0), (1.0, 30), (2.0, 300)), random.Random(9), through_view=True,
    )
    # The scan answered most of them (not a test of the SQL path against itself).
    assert scanned > compared // 2, (scanned, compared)


def test_what_the_scan_leaves_to_sql(graphs, scan_everywhere, monkeypatch):
    conn = graphs["some-undated"]
    ranker = rankers(conn)[0]
    view = GraphView(conn)
    view.remember_reached([("tag:big", 0.0)], reset=True)
    args = (conn, "tag:big", 0.0, {("tag", "in"): 0.5})
    assert hub_scan.scan_best(*args, ranker, 7, False) is not None
    # Tag boosts are not monotonic in the date; no reference date, no recency: ranked in SQL.
    tagged = NeighbourRanker(load_lens("general"), ranker.reference)
    tagged.tag_boosts = {"big": 2.0}
    assert hub_scan.scan_best(*args, tagged, 7, False) is None
    assert hub_scan.scan_best(*args, NeighbourRanker(load_lens("general"), None), 7, False) is None
    # A class too small to be worth it, or a scan that would read too many nodes.
    monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 10**6)
    assert hub_scan.scan_best(*args, ranker, 7, False) is None
    monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 20)
    monkeypatch.setattr(hub_scan, "COST_SQL", 0.001)  # one class, so ranked as a uniform hub
    assert hub_scan.scan_best(*args, ranker, 7, False) is None
    monkeypatch.setattr(hub_scan, "COST_SQL", 7.0)
    monkeypatch.setattr(hub_scan, "SCAN_SHARE", 0.001)
    assert hub_scan.scan_best(conn, "n0000", 0.0, {("link", "in"): 1.0, ("ref", "in"): 2.0}, ranker, 7, False) is None
    # More private nodes than it asks one by one.
    monkeypatch.setattr(hub_scan, "SCAN_SHARE", 1000.0)
    monkeypatch.setattr(hub_scan, "PRIVATE_AT_MOST", 0)
    assert hub_scan.scan_best(*args, ranker, 7, False) is None
    assert hub_scan.scan_best(*args, ranker, 7, True) is not None


CASES = [("n0000", "general", 2), ("n0005", "general", 3), ("n0300", "planning", 2), ("n0450", "writing", 3)]


@pytest.mark.parametrize("name", ["dated", "some-undated"])
def test_builds_are_the_same_with_and_without_the_scan(graphs, name, monkeypatch):
    conn = graphs[name]
    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)  # every node ranked by the store
    for topic, lens, depth in CASES:
        for fmt in ("markdown", "json"):
            request = BuildRequest((topic,), lens=lens, depth=depth, format=fmt, max_tokens=3000, explain=True)
            monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 10**9)
            by_sql = build_context(conn, request)
            monkeypatch.setattr(hub_scan, "SCAN_AT_LEAST", 20)
            monkeypatch.setattr(hub_scan, "SCAN_SHARE", 1000.0)
            scanned = build_context(conn, request)
            assert (scanned.text, scanned.candidates, scanned.warnings) == (
                by_sql.text, by_sql.candidates, by_sql.warnings
            ), (topic, lens, depth, fmt)


def test_a_graph_without_the_recency_index_is_ranked_in_sql(tmp_path: Path, scan_everywhere):
    conn = import_into(tmp_path / "g.db", write_jsonl(tmp_path / "g.jsonl", records(3, undated=False)))
    conn.execute("DROP INDEX nodes_by_recency")
    view = GraphView(conn)
    view.remember_reached([("tag:big", 0.0)], reset=True)
    ranker = rankers(conn)[0]
    assert hub_scan.scan_best(conn, "tag:big", 0.0, {("tag", "in"): 0.5}, ranker, 7, False) is None
    assert view.best_neighbours("tag:big", 0.0, {("tag", "in"): 0.5}, ranker, 7)[0] > 7


def test_a_warm_process_asks_the_store_for_scanned_hubs_each_time(graphs, scan_everywhere, monkeypatch):
    """A hub the store ranks by the scan is never read whole and kept: each walk asks the store
    (a few ms) rather than reading its list at the second meeting (~150 ms for a tag of 40,000
    notes at 100k nodes); what the walk makes is what a cold build makes."""
    from ctx.assemble import warm
    from ctx.store import as_store

    graph = as_store(graphs["dated"])
    monkeypatch.setattr(traverse, "HUB_FAN_OUTS", 0)
    warm.enable()
    try:
        for topic, lens, depth in CASES * 2:  # the second round meets every hub again
            request = BuildRequest((topic,), lens=lens, depth=depth, format="json", explain=True, max_tokens=2000)
            with warm.paused():
                expected = build_context(graph, request)
            walked = build_context(graph, request)
            assert (walked.text, walked.candidates, walked.meta) == (expected.text, expected.candidates, expected.meta)
        answers = set(warm._hubs_met.values())
        assert True in answers and False in answers  # the tag and the linked note scanned, small hubs kept
        kept_hubs = {key[2] for key in warm._hubs}
        assert "tag:big" not in kept_hubs and kept_hubs
    finally:
        warm.disable()


@pytest.mark.parametrize("held_by", ["lookups", "ids"])
@pytest.mark.parametrize("name", ["dated", "some-undated"])
def test_a_warm_process_ranks_scanned_hubs_from_their_kept_table(graphs, name, held_by, scan_everywhere, monkeypatch):
    """A hub the store ranks newest first is kept by a warm process as the part of that work no
    walk changes (``scan_table``: the small classes ranked, the big class's size and hidden
    neighbours; its neighbours read newest first as needed) and ranked from there with the walk's
    own costs: the same rows and count as the store's, whatever the walk holds, the reader may
    see and the ranker boosts; small pages, so the kept neighbours are read further many times.
    Which held nodes are the big class's: looked up node by node, or in its ids read whole."""
    from ctx.assemble import warm
    from ctx.assemble.traverse import Reached

    conn = graphs[name]
    monkeypatch.setattr(warm, "MAX_NEWEST_PER_HUB", 10**6)
    monkeypatch.setattr(warm, "BIG_IDS_AFTER", 0 if held_by == "lookups" else 10**9)
    answered = []
    scanned_best = warm.HubNeighbours._scanned_best

    def counted(self, *args):
        answer = scanned_best(self, *args)
        if args[5] < 1000:  # (limit) more than there are fresh: the store must rank the undated
            answered.append(answer is not None)
        return answer

    monkeypatch.setattr(warm.HubNeighbours, "_scanned_best", counted)
    rng = random.Random(11)
    ids = [f"n{i:04d}" for i in range(N)]
    warm.enable()
    try:
        for include_private in (False, True):
            view = GraphView(conn, include_private=include_private)
            kept = warm.HubNeighbours(view, view.warm_state())
            for ranker in rankers(conn):
                for hub, weights in HUBS:
                    for limit in (1, 7, 40, 1000):  # 1000: more than are fresh, the undated too
                        for base, held in ((0.0, 0), (1.0, 30), (2.0, 300), (0.5, 30)):
                            costs = [(hub, base)] + [
                                (v, rng.choice([0.5, 1.5, 2.0, 3.0, 4.0])) for v in rng.sample(ids, held)
                            ]
                            view.remember_reached(costs, reset=True)
                            reached = {v: Reached(v, 1, cost, (), v == hub) for v, cost in costs}
                            expected = sql_ranking(view, hub, base, weights, ranker, limit)
                            got = kept.best(hub, base, weights, ranker, limit, reached, lambda: None)
                            assert got == expected, (hub, weights, limit, base, held, include_private)
        assert any(s.big_ids is not None for s in warm._scans.values()) == (held_by == "ids")
    finally:
        warm.disable()
    # The kept tables answered most of them (the first meeting of each hub asks the store).
    assert sum(answered) > len(answered) * 3 // 4, (sum(answered), len(answered))


@pytest.mark.parametrize("at_most", ["over", "under"])
def test_a_scanned_hubs_ids_are_read_once_asking_cost_as_much(graphs, at_most, scan_everywhere, monkeypatch):
    """Which held nodes are a scanned hub's big-class neighbours is asked node by node until the
    walks have asked about ``1 / BIG_IDS_AFTER`` of its links (asking a node costs ~20 id reads),
    then its ids are read whole: also for a hub with more links than ``MAX_NEWEST_PER_HUB`` (its
    newest neighbours are not read past that; its ids are, up to ``BIG_IDS_AT_MOST``). Every
    answer is the store's SQL ranking, before the read and after."""
    from ctx.assemble import warm
    from ctx.assemble.traverse import Reached

    conn = graphs["dated"]
    monkeypatch.setattr(warm, "MAX_NEWEST_PER_HUB", 400)  # below the hub's 419 links, above what walks ask
    hub, weights = HUBS[0]
    rng = random.Random(3)
    ids = [f"n{i:04d}" for i in range(N)]
    view = GraphView(conn)
    ranker = rankers(conn)[0]
    warm.enable()
    try:
        kept = warm.HubNeighbours(view, view.warm_state())
        reads = 0
        for held in [0] + [4] * 40:  # each walk holds a few nodes more than the last
            costs = [(hub, 0.0)] + [(v, 2.0) for v in rng.sample(ids, held)]
            view.remember_reached(costs, reset=True)
            reached = {v: Reached(v, 1, cost, (), v == hub) for v, cost in costs}
            scanned = next(iter(warm._scans.values()), None)
            if scanned is not None and at_most == "under":
                monkeypatch.setattr(warm, "BIG_IDS_AT_MOST", scanned.table.links - 1)
            before = None if scanned is None else (scanned.big_ids, set(scanned.member))
            got = kept.best(hub, 0.0, weights, ranker, 7, reached, lambda: None)
            assert got == sql_ranking(view, hub, 0.0, weights, ranker, 7)
            if before is None or before[0] is not None:
                continue
            table = scanned.table
            asked = {
                v for v in reached
                if v != hub and v not in scanned.small_ids and v not in table.hidden
            }
            asked_so_far = len(before[1] | asked)
            if scanned.big_ids is None:
                assert at_most == "under" or warm.BIG_IDS_AFTER * asked_so_far < table.links
            else:
                reads += 1
                assert at_most == "over" and table.links > warm.MAX_NEWEST_PER_HUB
                assert warm.BIG_IDS_AFTER * asked_so_far >= table.links
                assert warm.BIG_IDS_AFTER * len(before[1]) < table.links  # not read before it paid
        assert reads == (1 if at_most == "over" else 0)
    finally:
        warm.disable()


# Hubs whose biggest class weighs the most: every class the same, or lighter small classes (a
# node in one and in the big class is worth the big class's weight).
HEAVIEST_BIG = [
    ("tag:big", {("tag", "in"): 0.5}),
    ("n0000", {("link", "in"): 1.0, ("link", "out"): 1.0, ("ref", "in"): 1.0, ("supports", "in"): 1.0}),
    ("n0000", {("link", "in"): 1.0, ("link", "out"): 0.5, ("ref", "in"): 1.0, ("supports", "in"): 0.25}),
]


# What makes each way of ranking such a hub the cheapest: every other way's cost made huge.
MODES = {
    "sets": ("COST_SEEK", "COST_FILTERED_ROW"),  # the sets asked in Python
    "filtered": ("COST_SEEK", "COST_ROW"),  # the sets asked inside SQLite
    "probed": ("COST_ROW", "COST_FILTERED_ROW"),  # the biggest class asked of its index
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", ["dated", "some-undated"])
def test_a_hub_whose_biggest_class_weighs_the_most_is_ranked_as_sql_does(graphs, name, mode, scan_everywhere, monkeypatch):
    """Every class read as a set of ids (asked in Python, or inside SQLite), or the biggest asked
    of its index as nodes are read (the others' nodes looked up among its links): the same rows,
    order and count as SQL's ranking, whatever the walk holds (some of it too cheaply to be
    fresh), the reader may see, the ranker boosts; and where the scan cannot be sure (undated
    neighbours), SQL ranks."""
    conn = graphs[name]
    for cost in MODES[mode]:
        monkeypatch.setattr(hub_scan, cost, 10**6)
    monkeypatch.setattr(hub_scan, "COST_SQL", 10**7)
    filtered, scans = hub_scan._scan_filtered, []
    monkeypatch.setattr(hub_scan, "_scan_filtered", lambda *a: scans.append(a[1].node_id) or filtered(*a))
    scanned, compared = compare_scan_with_sql(
        conn, HEAVIEST_BIG, (1, 7, 40, 1000), ((0.0, 0), (1.0, 30), (2.0, 300), (0.5, 30)), random.Random(13),
    )
    assert scanned > compared // 2, (scanned, compared)
    assert (len(scans) > compared // 2) if mode == "filtered" else not scans, (len(scans), compared)


def test_a_filtered_scan_over_its_budget_leaves_the_ranking_to_sql(graphs, scan_everywhere, monkeypatch):
    """SQLite's progress handler stops a filtered scan that reads more nodes than its budget: the
    caller then ranks in SQL, with the same answer, on the same connection."""
    conn = graphs["dated"]
    for cost in MODES["filtered"]:
        monkeypatch.setattr(hub_scan, cost, 10**6)
    monkeypatch.setattr(hub_scan, "COST_SQL", 10**7)
    hub, weights = HEAVIEST_BIG[1]
    view = GraphView(conn, include_private=True)
    ranker = rankers(conn)[0]
    view.remember_reached([(hub, 0.0)], reset=True)
    expected = sql_ranking(view, hub, 0.0, weights, ranker, 40)
    assert hub_scan.scan_best(conn, hub, 0.0, weights, ranker, 40, True) == expected
    stopped = []
    monkeypatch.setattr(hub_scan, "_STEPS_PER_ROW", 0)  # a budget of the ids alone: no node read
    monkeypatch.setattr(hub_scan, "_STEPS_PER_ID", 0)
    filtered = hub_scan._scan_filtered
    monkeypatch.setattr(hub_scan, "_scan_filtered", lambda *a: stopped.append(filtered(*a)) or stopped[-1])
    assert hub_scan.scan_best(conn, hub, 0.0, weights, ranker, 40, True) is None
    assert stopped == [None]
    assert view.best_neighbours(hub, 0.0, weights, ranker, 40) == expected  # the SQL ranking, after a stop


ODD_IDS = ["plain", 'with "quotes"', "back\\slash", "tab\there", "line\nbreak", "unit\x1fsep", "émigré 日本 🚀", "[1, 2]", ""]


@pytest.fixture()
def odd_edges(tmp_path: Path):
    import sqlite3

    conn = sqlite3.connect(tmp_path / "odd.db")
    conn.execute("CREATE TABLE edges (src TEXT NOT NULL, dst TEXT, type TEXT NOT NULL)")
    conn.executemany("INSERT INTO edges VALUES (?, 'hub', 'link')", [(i,) for i in ODD_IDS])
    conn.execute("INSERT INTO edges VALUES ('other', 'hub', 'tag')")
    yield conn
    conn.close()


def test_ids_read_as_one_json_array_are_the_rows_ids(odd_edges):
    """``_ids`` reads a class's ids as one JSON array: every id comes back as it is stored
    (quotes, control characters, non-ASCII, text that looks like JSON), in the rows' order."""
    source = "FROM edges WHERE dst = ? AND type = ?"
    rows = [r[0] for r in odd_edges.execute(f"SELECT src {source}", ("hub", "link"))]
    assert rows == ODD_IDS
    assert hub_scan._ids(odd_edges, source, "src", ("hub", "link")) == rows
    assert hub_scan._ids(odd_edges, source, "src", ("nobody", "link")) == []


def test_ids_without_json_functions_are_read_as_rows(odd_edges):
    """An SQLite built without JSON functions answers with the rows themselves; any other error
    is raised."""
    import sqlite3

    class NoJson:
        def __init__(self, conn: sqlite3.Connection, message: str) -> None:
            self.conn, self.message = conn, message

        def execute(self, sql: str, params=()):
            if "json_group_array" in sql:
                raise sqlite3.OperationalError(self.message)
            return self.conn.execute(sql, params)

        def cursor(self) -> sqlite3.Cursor:
            return self.conn.cursor()

    source = "FROM edges WHERE dst = ? AND type = ?"
    got = hub_scan._ids(NoJson(odd_edges, "no such function: json_group_array"), source, "src", ("hub", "link"))  # type: ignore[arg-type]
    assert got == ODD_IDS
    with pytest.raises(sqlite3.OperationalError, match="database is locked"):
        hub_scan._ids(NoJson(odd_edges, "database is locked"), source, "src", ("hub", "link"))  # type: ignore[arg-type]
