"""Where ctx keeps things: the user's data, config and cache folders, a project's ``.ctx``, and
what a ``--db`` URL names.

A leaf: which graph a command opens depends on the config files too, so that choice is made in
``ctx.config`` (``resolve_db_path``) on top of these.
"""

from __future__ import annotations

import os
import re
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


# Engines a --db URL may select, by scheme (ctx.store.postgres: a team graph, docs/team.md).
DB_URL_ENGINES: dict[str, str] = {"postgresql": "PostgreSQL", "postgres": "PostgreSQL"}
# Engines ctx has, or will have, but not in this build: named, so the error says what to do.
_NOT_IN_THIS_BUILD: dict[str, str] = {}
# Two characters at least: "C:/Users/..." is a Windows drive, not a scheme. One slash, because a
# Path folds "mysql://h/db" to "mysql:/h/db".
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):/")


def db_url_scheme(value: str | os.PathLike[str]) -> str | None:
    """The scheme of a --db value that is a URL (such as ``postgresql``), None for a file path.

    A URL naming an engine this build cannot open is a UsageError, never a path: ``--db
    mysql://...`` must not become a folder called ``mysql:``. The message names the scheme only
    (a URL may hold a password)."""
    from ctx.errors import UsageError

    match = _URL.match(os.fspath(value))
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme in DB_URL_ENGINES:
        return scheme
    if scheme in _NOT_IN_THIS_BUILD:
        raise UsageError(
            f"--db {scheme}://...: {_NOT_IN_THIS_BUILD[scheme]} graphs are not available in this build;"
            " give a graph file path (SQLite)"
        )
    if scheme in ("sqlite", "sqlite3", "file"):
        raise UsageError(f"--db takes a SQLite graph as a file path, not a {scheme}:// URL: drop the {scheme}:// prefix")
    raise UsageError(f"--db {scheme}://...: ctx cannot use {scheme} databases; give a graph file path (SQLite)")


def is_db_url(value: object) -> bool:
    """Whether a graph location is a database URL (a str naming an engine), not a file path."""
    return isinstance(value, str) and db_url_scheme(value) is not None


def shown(location: str | os.PathLike[str]) -> str:
    """A graph location for messages: a URL without its password."""
    if is_db_url(location):
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(str(location))
        if parts.password is not None:
            host = parts.hostname or ""
            if parts.port:
                host = f"{host}:{parts.port}"
            netloc = f"{parts.username}:***@{host}" if parts.username else host
            return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return os.fspath(location)
