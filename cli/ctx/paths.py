"""Where ctx keeps things: the graph database and user/project lens folders.

Resolution order for the database: ``--db`` > ``$CTX_DB`` > ``graph:`` in the project's
``.ctx/config.yaml`` > the nearest ``.ctx/graph.db`` in the current folder or a parent > ``graph:``
in the user's config file > ``$CTX_HOME/graph.db`` (default ``$XDG_DATA_HOME/ctx``, i.e.
``~/.local/share/ctx``). A user never has to think about it, and a project can pin its own graph.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR_NAME = ".ctx"
DB_FILE_NAME = "graph.db"


def user_data_dir() -> Path:
    if os.environ.get("CTX_HOME"):
        return Path(os.environ["CTX_HOME"]).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "ctx"


def user_config_dir() -> Path:
    if os.environ.get("CTX_HOME"):
        return Path(os.environ["CTX_HOME"]).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "ctx"


def cache_dir() -> Path:
    """What ctx keeps only to start faster (the parsed tokenizer, parsed lens and config files):
    deleting it costs one slow run."""
    if os.environ.get("CTX_CACHE_DIR"):
        return Path(os.environ["CTX_CACHE_DIR"]).expanduser()
    if os.environ.get("CTX_HOME"):
        return Path(os.environ["CTX_HOME"]).expanduser() / "cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ctx"


def find_project_dir(start: Path | None = None) -> Path | None:
    """The nearest ``.ctx`` folder at or above ``start`` (the current folder by default)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_DIR_NAME
        if candidate.is_dir():
            return candidate
    return None


def default_db_path() -> Path:
    from ctx.config import load_settings

    if os.environ.get("CTX_DB"):
        return Path(os.environ["CTX_DB"]).expanduser()
    settings = load_settings()
    if settings.graph is not None and settings.graph_in_project:
        return settings.graph
    project = find_project_dir()
    if project is not None and (project / DB_FILE_NAME).exists():
        return project / DB_FILE_NAME
    if settings.graph is not None:
        return settings.graph
    return user_data_dir() / DB_FILE_NAME


def resolve_db_path(explicit: str | os.PathLike[str] | None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    return default_db_path()
