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
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctx.errors import CtxError
from ctx.freshness_report import Freshness

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ctx.store.protocols import GraphStore
    from ctx.store.types import Source

# The check's own modules (sources, file states, the import path's writes) load only when a
# check runs: a build without ``sync.before_build`` asks for nothing but the setting.

CHECKED_KEY = "sources_checked_at"


@dataclass
class Refresh:
    checked: bool  # False: the last check is recent enough
    stale: list[str] = field(default_factory=list)  # roots found changed and re-imported
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # Why the sources were not checked or re-imported when they should have been: "untrusted
    # graph", "lock busy" (another process was writing: answered from the graph as it is).
    skipped: str | None = None


def source_changed(store: GraphStore, source: Source) -> bool:
    """Whether any file of ``source`` was added, deleted or modified since its last import."""
    from ctx.files import FileRefused, check_regular
    from ctx.importers import get_importer
    from ctx.store import as_store

    root = Path(source.root)
    if not root.exists():
        return False  # nothing to import; `ctx sources` shows it as missing
    importer = get_importer(source.format)
    base = importer.base_dir(root)
    reader = as_store(store).reader()
    known = {rel: (mtime_ns, size) for rel, (mtime_ns, size, _hash) in reader.file_states(source.id).items()}

    def states() -> Iterator[tuple[str, int, int]]:
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
            yield rel, st.st_mtime_ns, st.st_size

    seen = 0
    for rel, mtime_ns, size in states():
        seen += 1
        if known.get(rel) != (mtime_ns, size):
            break
    else:
        if seen == len(known):
            return False
    # A PostgreSQL role that may not read private notes does not see their file records either:
    # the digest of every file's state its writer kept tells a change from a hidden file.
    from ctx.digest import FILES_DIGEST_KEY, file_states_digest

    kept = reader.setting(f"{FILES_DIGEST_KEY}{source.id}")
    return kept is None or file_states_digest(states()) != kept


def stale_sources(store: GraphStore) -> list[Source]:
    """The changed sources among those ctx may re-import on its own (``sync.syncable``)."""
    from ctx.store import as_store
    from ctx.sync import syncable

    from ctx.trust import check_trusted

    store = as_store(store)
    # Before the sources are listed: an untrusted graph is refused without reading them.
    check_trusted(store)
    allowed, _ = syncable(store, store.reader().sources())
    return [source for source in allowed if source_changed(store, source)]


def _last_check(store: GraphStore) -> float | None:
    value = store.reader().setting(CHECKED_KEY)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _mark_checked(store: GraphStore, when: float) -> None:
    from ctx.errors import AccessRefused
    from ctx.store.errors import is_storage_error

    try:
        with store.import_session() as session:
            session.set_setting(CHECKED_KEY, repr(when))
    except Exception as exc:
        if not (is_storage_error(exc) or isinstance(exc, AccessRefused)):
            raise
        # a read-only or busy graph: the next call checks again, which is only slower


LOCK_BUSY = "lock busy"
ROLE_READ_ONLY = "this role may not write the graph"
FILE_READ_ONLY = "the graph is read-only here"
BUSY_WARNING = (
    "sources changed, but another process is writing the graph: answered from the graph as it is"
    " (it may be stale; the next call checks again)"
)


def _lock_free(store: GraphStore) -> bool:
    """Whether the write lock can be had at once (an empty session, inside ``without_waiting``):
    a re-import that would only find it taken is not worth its parsing."""
    from ctx.store.errors import is_lock_busy

    try:
        with store.import_session():
            pass
    except Exception as exc:
        if is_lock_busy(exc):
            return False
        raise
    return True


def refresh(store: GraphStore, *, interval: float, now: float | None = None) -> Refresh:
    """Re-import the sources that changed, unless the last check was under ``interval`` s ago.

    Never waits for the write lock and never fails for it: when another process is writing, the
    answer comes from the graph as it is and ``skipped`` says so ("lock busy")."""
    from ctx.store import as_store
    from ctx.errors import AccessRefused
    from ctx.store.errors import as_ctx_error, is_lock_busy, is_read_only
    from ctx.sync import import_source
    from ctx.trust import UntrustedGraph

    started = time.perf_counter()
    store = as_store(store)
    now = time.time() if now is None else now
    last = _last_check(store)
    # A clock set back makes `now - last` negative; that must not freeze the checks.
    if last is not None and 0 <= now - last < interval:
        return Refresh(checked=False)
    result = Refresh(checked=True)
    try:
        stale = stale_sources(store)
    except UntrustedGraph as exc:
        # Answered from the graph as it is, with the one line that says how to allow syncing.
        return Refresh(checked=False, warnings=[str(exc)], skipped="untrusted graph")
    with store.without_waiting():
        if stale and not _lock_free(store):
            return _busy_result(result, started)
        for source in stale:
            try:
                outcome = import_source(store, source)
            except AccessRefused as exc:
                # A reader role or a replica: answered from the graph as it is, as for a busy
                # graph (a team graph is synced by its writers; docs/team.md).
                result.skipped = ROLE_READ_ONLY
                result.warnings.append(f"{source.root}: not refreshed: {exc}")
                result.seconds = time.perf_counter() - started
                return result
            except Exception as exc:
                if is_read_only(exc):
                    # A graph in a read-only file or folder is read as it is, as by a reader role:
                    # the build answers, saying the sync was skipped (it failed with exit 1).
                    result.skipped = FILE_READ_ONLY
                    result.warnings.append(f"{source.root}: not refreshed: {as_ctx_error(exc, 'the graph')}")
                    result.seconds = time.perf_counter() - started
                    return result
                if not is_lock_busy(exc):
                    raise
                return _busy_result(result, started)
            if outcome.status == "failed" and outcome.error is not None and is_lock_busy(CtxError(outcome.error)):
                return _busy_result(result, started)
            result.stale.append(source.root)
            if outcome.status == "failed":
                result.warnings.append(f"{source.root}: not refreshed: {outcome.error}")
            elif outcome.report is not None:
                result.warnings.extend(f"{source.root}: {w}" for w in outcome.report.warnings)
        _mark_checked(store, now)
        # What answers report as pending until the next check: the sources that could not be read.
        failed = sorted(r for r in result.stale if any(w.startswith(f"{r}: not refreshed") for w in result.warnings))
        _remember_pending(store, failed, now)
    result.seconds = time.perf_counter() - started
    return result


def _busy_result(result: Refresh, started: float) -> Refresh:
    # Not marked as checked: the next call tries again.
    result.skipped = LOCK_BUSY
    result.warnings.append(BUSY_WARNING)
    result.seconds = time.perf_counter() - started
    return result


def last_refresh() -> Refresh | None:
    """What the last ``refresh_if_enabled`` in this process did (None: no check was enabled):
    for the freshness line of a build or an MCP answer (``skipped``: why it may be stale)."""
    return _last[0]


_last: list[Refresh | None] = [None]


def refresh_if_enabled(store: GraphStore) -> list[str]:
    """The opt-in check before a build or an MCP call (config ``sync.before_build``); returns
    warnings for stderr."""
    refreshed = check_before_build(store)
    return refreshed.warnings if refreshed is not None else []


def check_before_build(store: GraphStore) -> Refresh | None:
    """The opt-in check (config ``sync.before_build``), or None when it is not enabled."""
    from ctx.config import load_settings

    settings = load_settings()
    if not settings.sync_before_build:
        _last[0] = None
        return None
    _last[0] = outcome = refresh(store, interval=settings.sync_interval)
    return outcome


# -- what every answer says about how fresh the graph is -------------------------------------------

PENDING_KEY = "sources_pending"  # the last stat check's result: {"at", "version", "pending"}
FIRST_STAGE_KEY = "embedding_first_stage"  # as ctx.semantic.first_stage.SETTING (not imported: no vectors' code here)
VECTORS_VERSION_KEY = "vectors_version"  # the graph version every vector was last brought up to
# What a before_build check that could not get the graph's lock records (the `trust` side sets
# ``Refresh.skipped``); shown as it is.
SKIPPED_BUSY = "sync skipped, graph busy"


def graph_freshness(
    store: GraphStore, refreshed: Refresh | None = None, *, include_private: bool = False,
    interval: float | None = None, now: float | None = None,
) -> Freshness:
    """The graph's freshness now; ``refreshed`` is this call's before_build check, if one ran."""
    from ctx.store import as_store

    store = as_store(store)
    reader = store.reader(include_private=True)
    version = reader.graph_version()
    model = reader.active_model()
    stale = missing = 0
    # A graph left at `ctx embed --fast`'s first stage (the setting names its static model) has no
    # node vectors by design, each question embedding its candidates: what it can lack is its
    # passages' static vectors, which `ctx sync` and `ctx embed` give. Counting node vectors said
    # "N missing" in every context built from such a graph.
    if model is not None and reader.setting(VECTORS_VERSION_KEY) != str(version):
        first_stage = reader.setting(FIRST_STAGE_KEY)
        if first_stage:
            missing = reader.nodes_without_static_vectors(first_stage)
        else:
            coverage = reader.embedding_coverage()
            stale, missing = int(coverage["stale"]), int(coverage["missing"])
        if not stale and not missing:
            reader.remember_setting(VECTORS_VERSION_KEY, str(version))  # counted once per version
        elif not include_private:
            # Of the nodes this reader may see: how many private notes changed is not its business.
            visible = store.reader(include_private=False)
            if first_stage:
                missing = visible.nodes_without_static_vectors(first_stage)
            else:
                coverage = visible.embedding_coverage()
                stale, missing = int(coverage["stale"]), int(coverage["missing"])
    skipped = getattr(refreshed, "skipped", None)
    return Freshness(
        graph_version=version,
        last_sync=reader.last_sync(),
        pending=tuple(_pending_sources(store, version, interval, now)),
        vectors_model=model,
        vectors_stale=stale,
        vectors_missing=missing,
        sync_skipped=(SKIPPED_BUSY if skipped == LOCK_BUSY else f"sync skipped, {skipped}") if skipped else None,
    )


def _pending_sources(store: GraphStore, version: int, interval: float | None, now: float | None) -> list[str]:
    """Roots with changes not imported yet: the stat check, or its result from under
    ``interval`` seconds ago at the same graph version (a burst of calls pays for one check)."""
    import json

    reader = store.reader(include_private=True)
    if interval is None:
        from ctx.config import load_settings

        interval = load_settings().sync_interval
    now = time.time() if now is None else now
    try:
        cached = json.loads(reader.setting(PENDING_KEY) or "null")
        if cached and cached["version"] == version and 0 <= now - float(cached["at"]) < interval:
            return [str(root) for root in cached["pending"]]
    except (TypeError, ValueError, KeyError):
        pass
    from ctx.trust import UntrustedGraph

    try:
        pending = sorted(source.root for source in stale_sources(store))
    except UntrustedGraph:
        return []  # its sources are not looked at (``ctx trust``); the sync check says so itself
    _remember_pending(store, pending, now, version)
    return pending


def _remember_pending(store: GraphStore, pending: list[str], now: float, version: int | None = None) -> None:
    import json

    reader = store.reader(include_private=True)
    version = reader.graph_version() if version is None else version
    reader.remember_setting(PENDING_KEY, json.dumps({"at": now, "version": version, "pending": pending}))
