"""Whether a graph file is one this user vouches for, from the file alone (``ctx.trust`` says why
that matters): ctx created it here (it records its own inode at creation, ``meta.birth``, which no
copy carries), it is where the user keeps their own graph, or the user trusted it (``ctx trust``
writes the mark again)."""

from __future__ import annotations

import os
from pathlib import Path

BIRTH_KEY = "birth"


def file_inode(path: Path) -> str | None:
    try:
        return str(os.stat(path).st_ino)
    except OSError:
        return None


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


def trusted_file(path: Path, birth: str | None) -> bool:
    """``path`` holds a graph born here (``birth``: its ``meta.birth``), or the user's own."""
    return (birth is not None and birth == file_inode(path)) or users_own(path)
