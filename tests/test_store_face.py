"""The store's face: the SQLite engine answers through ``GraphStore``/``GraphReader``/``ImportSession``
exactly what the notes written here say (real files, a real graph)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from ctx.config import PrivacyConfig
from ctx.importers.engine import import_path
from ctx.store import protocols
from ctx.store.sqlite_store import SqliteSession, SqliteStore
from ctx.store.view import GraphView


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


def test_reader_answers_from_the_notes(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "g.db", create=True)
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
    assert [e.other_id for e in public.edges_of(alpha) if e.type == "link"] == [beta]  # Gamma is hidden
    assert public.private_neighbours([alpha]) == {gamma}
    assert [s.root for s in public.sources()] == [str((tmp_path / "vault").resolve())]
    # Gamma, and the #private tag node that only Gamma names.
    assert public.stats()["private_nodes"] == 2 and public.private_among(["tag:private"]) == {"tag:private"}
    store.close()


def test_remove_source_takes_everything_and_recomputes_privacy(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "g.db", create=True)
    import_path(store, _vault(tmp_path))
    (source,) = store.reader().sources()
    version = store.reader().graph_version()
    with store.import_session() as session:
        removed = session.remove_source(source.id, PrivacyConfig())
    assert (removed.nodes, removed.files) == (5, 3)
    reader = store.reader(include_private=True)
    assert reader.node_count() == 0 and reader.sources() == []
    assert reader.graph_version() == version + 1
    assert reader.stats()["nodes"] == 0 and reader.stats()["private_nodes"] == 0


def test_a_session_commits_only_when_its_block_ends_normally(tmp_path: Path) -> None:
    store = SqliteStore.open(tmp_path / "g.db", create=True)
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
