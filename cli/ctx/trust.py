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

import os
from pathlib import Path

from ctx.errors import CtxError, UsageError

from ctx.store.protocols import GraphReader, GraphStore

BIRTH_KEY = "birth"
# How a similarity note begins when the graph's own model was refused (``model_folder_refusal``),
# not merely absent: a build says it as a warning too, the answer lens showing no scoring note.
MODEL_REFUSED = "similarity left out: "


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


def file_inode(path: Path) -> str | None:
    try:
        return str(os.stat(path).st_ino)
    except OSError:
        return None


def trust(store: GraphStore) -> None:
    """Record that the user trusts this very file (as ctx does for a file it creates)."""
    path = graph_file(store)
    inode = file_inode(path) if path is not None else None
    if inode is not None:
        with store.import_session() as session:
            session.set_setting(BIRTH_KEY, inode)


def users_own(path: Path) -> bool:
    """Whether ``path`` is where the user keeps their own graph: ``$CTX_DB``, ``graph:`` in the
    user's config file, or the default location (never a folder's choice)."""
    from ctx.config import load_settings
    from ctx.paths import DB_FILE_NAME, user_data_dir

    own = [user_data_dir() / DB_FILE_NAME]
    if os.environ.get("CTX_DB") and "://" not in os.environ["CTX_DB"]:
        own.append(Path(os.environ["CTX_DB"]).expanduser())
    settings = load_settings()
    if isinstance(settings.graph, Path) and not settings.graph_in_project:
        own.append(settings.graph)
    try:
        here = path.resolve()
        return any(here == p.resolve() for p in own)
    except OSError:
        return False


def is_trusted(store: GraphStore) -> bool:
    path = graph_file(store)
    if path is None:
        return True  # no file of this machine: nothing a download could have brought
    return _trusted_file(path, store.reader(include_private=True).setting(BIRTH_KEY))


def _trusted_file(path: Path, birth: str | None) -> bool:
    return (birth is not None and birth == file_inode(path)) or users_own(path)


def model_folder_refusal(graph: GraphReader, name: str) -> str | None:
    """Why a build may not load the embedding model the graph names (None: it may). A model folder
    is weights and code a build would load, and a graph that came with a clone or a download could
    name one it brought along: only a graph born here, the user's own or one they trusted names a
    folder a build reads. A name that is no absolute path is never looked up in the folder ctx runs
    in (a clone's folder could hold one of that name)."""
    from ctx.semantic.models import names_folder_here, stored_folder

    if names_folder_here(name):
        return (f"the graph's embedding model {name!r} is also a folder here, and a graph's model is never"
                " read from the current folder")
    if stored_folder(name) is None:
        return None
    path = graph.file_path()
    if path is None or _trusted_file(path, graph.setting(BIRTH_KEY)):
        return None
    return (f"{path} was not created by ctx on this machine and names a model folder ({name}), which"
            f" builds do not load (`ctx trust --db {path}` allows it, or"
            " `ctx embed` embeds it with your own model)")


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
