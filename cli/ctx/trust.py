"""Which graphs ctx may bring up to date on its own, and which folders a graph may read.

A graph names its sources as absolute folders, and `ctx sync`, `ctx watch`, a build with
``sync: before_build`` and the MCP server re-import them. A graph file that came with a download or
a clone could name any folder (the user's notes, ``/usr``) and have it read into a file the user may
commit. So (issue 24, H3):

* A graph is *born here* when this ctx created it: it records its own file's inode at creation
  (``meta.birth``), which a copy, a clone or an unpacked archive cannot carry (the new file gets a
  new inode). Only a graph born here, one at the user's own location (the default graph, ``$CTX_DB``,
  ``graph:`` in the user's config) or one the user trusted with `ctx trust` is ever synced.
* A project graph (a file in a ``.ctx/`` folder, or named by a project's ``graph:``) only reads
  sources inside its project: the folder holding ``.ctx/``.
"""

from __future__ import annotations

from pathlib import Path

from ctx.errors import CtxError, UsageError

from ctx.store import BIRTH_KEY, file_inode, trusted_file
from ctx.store.protocols import GraphStore



class UntrustedGraph(CtxError):
    """The graph was not created by ctx on this machine and the user has not trusted it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(untrusted_message(path))


def untrusted_message(path: Path) -> str:
    return (
        f"{path} was not created by ctx on this machine, so its sources are not synced;"
        f" check them with `ctx sources --db {path}`, then `ctx trust --db {path}` to allow it"
    )


def graph_file(store: GraphStore) -> Path | None:
    """The graph's file, or None for a graph that is no file of this machine (in memory, a server)."""
    location = store.location
    if location in ("", ":memory:") or "://" in location:
        return None
    return Path(location)


def trust(store: GraphStore) -> None:
    """Record that the user trusts this very file (as ctx does for a file it creates)."""
    path = graph_file(store)
    inode = file_inode(path) if path is not None else None
    if inode is not None:
        with store.import_session() as session:
            session.set_setting(BIRTH_KEY, inode)


def is_trusted(store: GraphStore) -> bool:
    path = graph_file(store)
    if path is None:
        return True  # no file of this machine: nothing a download could have brought
    return trusted_file(path, store.reader(include_private=True).setting(BIRTH_KEY))


def check_trusted(store: GraphStore) -> None:
    if not is_trusted(store):
        path = graph_file(store)
        assert path is not None
        raise UntrustedGraph(path)


def project_root(db_path: Path | str) -> Path | None:
    """The project a graph belongs to: the folder holding its ``.ctx/`` folder, or the project
    whose config names it with ``graph:``; None for a graph of the user's own."""
    from ctx.config import load_settings
    from ctx.paths import PROJECT_DIR_NAME, find_project_dir

    if isinstance(db_path, str):
        return None  # a database server's graph is no project's (a project file cannot name one)
    path = db_path.expanduser().resolve()
    if path.parent.name == PROJECT_DIR_NAME:
        return path.parent.parent
    settings = load_settings()
    if settings.graph_in_project and isinstance(settings.graph, Path) and settings.graph.resolve() == path:
        project = find_project_dir()
        if project is not None:
            return project.parent
    return None


def inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def outside_message(source_root: str, project: Path) -> str:
    return f"outside the project {project} this graph belongs to: not read (a project graph reads only its own folder)"


def check_import_allowed(db_path: Path | str, source: Path) -> None:
    """`ctx import PATH` into a project graph: PATH must be inside the project."""
    project = project_root(db_path)
    if project is not None and not inside(project, source):
        raise UsageError(
            f"{source} is outside the project {project}, whose graph is {db_path}:"
            " a project graph reads only its own folder (pass --db to import it into another graph)"
        )
