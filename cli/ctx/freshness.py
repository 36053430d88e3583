"""Has anything changed in the registered sources since they were imported? Stat only.

Opt-in (``sync: before_build: true`` in the config file): `ctx build` and the MCP server call
``refresh`` before answering, so an agent never reads a graph older than the notes. The check
lists each source's files and compares size and modification time with what the last import
recorded; no file is opened. Only a source that changed is re-imported (incrementally). Checks are
rate-limited graph-wide through the graph's ``meta`` table (``sources_checked_at``), so a burst of
builds or tool calls pays for one check per interval. Vectors are not refreshed here: that needs
the embedding model (seconds to load); `ctx sync` and `ctx watch` do it, and builds say when
vectors are stale.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.store.db import get_meta, set_meta

if TYPE_CHECKING:
    from ctx.store.sources import Source

# The check's own modules (sources, file states, the import path's writes) load only when a
# check runs: a build without ``sync.before_build`` asks for nothing but the setting.

CHECKED_KEY = "sources_checked_at"


@dataclass
class Refresh:
    checked: bool  # False: the last check is recent enough
    stale: list[str] = field(default_factory=list)  # roots found changed and re-imported
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def source_changed(conn: sqlite3.Connection, source: Source) -> bool:
    """Whether any file of ``source`` was added, deleted or modified since its last import."""
    from ctx.files import FileRefused, check_regular
    from ctx.importers import get_importer
    from ctx.store.writes import file_states

    root = Path(source.root)
    if not root.exists():
        return False  # nothing to import; `ctx sources` shows it as missing
    importer = get_importer(source.format)
    base = importer.base_dir(root)
    known = {rel: (mtime_ns, size) for rel, (mtime_ns, size, _hash) in file_states(conn, source.id).items()}
    seen = 0
    # Plain strings, not Path objects: at 13k files, building paths cost more than the stats.
    prefix = os.path.join(str(base), "")
    lstat, is_regular = os.lstat, stat.S_ISREG
    for rel in importer.list_files(root):
        try:
            st = lstat(prefix + rel)
        except OSError:
            continue
        if not is_regular(st.st_mode):
            # The importer reads a symlink only when it leads to a regular file inside the
            # source; the same rule here (rare, so its cost does not matter).
            if not stat.S_ISLNK(st.st_mode):
                continue
            try:
                st = check_regular(prefix + rel, root)
            except (FileRefused, OSError):
                continue
        seen += 1
        if known.get(rel) != (st.st_mtime_ns, st.st_size):
            return True
    return seen != len(known)


def stale_sources(conn: sqlite3.Connection) -> list[Source]:
    from ctx.store.sources import list_sources

    return [source for source in list_sources(conn) if source_changed(conn, source)]


def _last_check(conn: sqlite3.Connection) -> float | None:
    value = get_meta(conn, CHECKED_KEY)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _mark_checked(conn: sqlite3.Connection, when: float) -> None:
    try:
        set_meta(conn, CHECKED_KEY, repr(when))
    except sqlite3.OperationalError:
        pass  # a read-only or busy graph: the next call checks again, which is only slower


def refresh(conn: sqlite3.Connection, *, interval: float, now: float | None = None) -> Refresh:
    """Re-import the sources that changed, unless the last check was under ``interval`` s ago."""
    from ctx.sync import import_source

    started = time.perf_counter()
    now = time.time() if now is None else now
    last = _last_check(conn)
    # A clock set back makes `now - last` negative; that must not freeze the checks.
    if last is not None and 0 <= now - last < interval:
        return Refresh(checked=False)
    result = Refresh(checked=True)
    for source in stale_sources(conn):
        outcome = import_source(conn, source)
        result.stale.append(source.root)
        if outcome.status == "failed":
            result.warnings.append(f"{source.root}: not refreshed: {outcome.error}")
        elif outcome.report is not None:
            result.warnings.extend(f"{source.root}: {w}" for w in outcome.report.warnings)
    _mark_checked(conn, now)
    result.seconds = time.perf_counter() - started
    return result


def refresh_if_enabled(conn: sqlite3.Connection) -> list[str]:
    """The opt-in check before a build or an MCP call (config ``sync.before_build``); returns
    warnings for stderr."""
    from ctx.config import load_settings

    settings = load_settings()
    if not settings.sync_before_build:
        return []
    return refresh(conn, interval=settings.sync_interval).warnings
