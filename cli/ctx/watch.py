"""Keep a graph fresh while its sources change: sync once, then again after every burst of edits.

File events come from ``watchfiles`` (the optional ``watch`` extra; inotify on Linux, FSEvents on
macOS, polling elsewhere). Events are debounced: an editor's save (write, rename, touch) or a
``git pull`` of a hundred notes arrives as one batch, and each batch re-imports only the sources it
touched, each in one transaction, then embeds the changed nodes when the graph has vectors. The
graph file itself, hidden folders and editors' temporary files never trigger anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctx.errors import CtxError

INSTALL_HINT = "pip install 'ctx-graph[watch]'"
DEFAULT_DEBOUNCE_MS = 400


class WatchExtraMissing(CtxError):
    def __init__(self) -> None:
        super().__init__(f"ctx watch needs the optional extra; install it with: {INSTALL_HINT}")


@dataclass(frozen=True)
class Watched:
    root: Path  # what the source is (a folder, or an export file)
    folder: Path  # what is watched: the folder, or the file's folder (editors replace files)


def _watched(sources: list[Any]) -> list[Watched]:
    out = []
    for source in sources:
        root = Path(source.root)
        if root.is_dir():
            out.append(Watched(root, root))
        elif root.exists():
            out.append(Watched(root, root.parent))
    return out


def _concerns(watched: Watched, changed: Path) -> bool:
    if watched.root.is_dir():
        try:
            relative = changed.relative_to(watched.root)
        except ValueError:
            return False
        # Importers skip hidden folders and files (.obsidian/, .git/, editors' swap files).
        return not any(part.startswith(".") for part in relative.parts)
    return changed == watched.root


RETRY_SECONDS = 2.0  # a batch that met a locked graph or failed is tried again after this
WAKE_MS = 1000  # how often the watcher wakes without events: retries, a replaced graph file


def watch(
    db_path: Path | str,
    *,
    on_sync: Callable[[Any], None],
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    embed: bool = True,
    stop_event: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
) -> int:
    """Sync now, then after every debounced batch of changes until ``stop_event`` is set or
    Ctrl-C. ``on_sync`` receives each SyncReport: the import's as soon as the graph is updated,
    then, when vectors were brought up to date (which may load the model), one with the
    embedding alone (no sources). Returns how many batches were synced.

    The watcher outlives what a batch meets: a graph locked by another writer or a failed import
    is reported through ``on_problem`` and its sources tried again (issue 24, M2); a graph file
    deleted and created again at its path is reopened, as the MCP server does (M4)."""
    try:
        import watchfiles
    except ImportError:
        raise WatchExtraMissing() from None
    import logging
    import time

    # watchfiles logs its own line on Ctrl-C; the CLI says "stopped watching" itself.
    logging.getLogger("watchfiles").setLevel(logging.ERROR)
    from ctx.store import open_store
    from ctx.store.errors import is_lock_busy, is_storage_error
    from ctx.sync import embed_pending, sync, syncable

    report_problem = on_problem or (lambda _line: None)
    graph = _Graph(db_path, open_store)
    try:
        sources = graph.store.reader().sources()
        if not sources:
            raise CtxError("no sources to watch; add one with `ctx import PATH` first")
        pending: set[str] = {s.root for s in sources}  # what changed while nobody watched
        retry_at = 0.0
        watched = _watched(syncable(graph.store, sources)[0])
        if not watched:
            raise CtxError("none of the registered sources exists any more (see `ctx sources`)")
        graph_files = (
            set() if isinstance(db_path, str)  # a database URL: no graph file among the sources
            else {str(db_path.resolve()) + suffix for suffix in ("", "-wal", "-shm", "-journal")}
        )

        def relevant(_change: object, path: str) -> bool:
            if path in graph_files:
                return False
            changed = Path(path)
            return any(_concerns(w, changed) for w in watched)

        def run(roots: set[str]) -> bool:
            """Sync the sources at ``roots``; False when it must be tried again."""
            affected = [s for s in graph.store.reader().sources() if s.root in roots]
            if not affected:
                return True
            try:
                report = sync(graph.store, embed=False, only=affected, progress=progress)
            except Exception as exc:
                if not (is_storage_error(exc) or is_lock_busy(exc)):
                    raise  # an untrusted graph, say: no retry makes it right
                report_problem(f"not synced: {exc}; trying again in {RETRY_SECONDS:g} s")
                return False
            on_sync(report)  # the graph is updated: said before any model loads for vectors
            failed = bool(report.failed)
            if embed:
                try:
                    embedded = embed_pending(graph.store, progress)
                except Exception as exc:
                    if not (is_storage_error(exc) or isinstance(exc, CtxError)):
                        raise
                    report_problem(f"vectors not updated: {exc}; trying again in {RETRY_SECONDS:g} s")
                    return False
                if embedded.embedded or embedded.embed_skipped:
                    on_sync(embedded)
            if failed:
                report_problem(f"{len(report.failed)} source(s) failed; trying again in {RETRY_SECONDS:g} s")
            return not failed

        batches = 0
        if run(pending):
            pending.clear()
        else:
            retry_at = time.monotonic() + RETRY_SECONDS
        for changes in watchfiles.watch(
            *sorted({str(w.folder) for w in watched}),
            watch_filter=relevant,
            debounce=debounce_ms,
            stop_event=stop_event,
            raise_interrupt=False,
            rust_timeout=WAKE_MS,
            yield_on_timeout=True,
        ):
            if graph.replaced():
                report_problem(f"{db_path} was replaced: reopened it")
                graph.reopen()
                pending |= {s.root for s in graph.store.reader().sources()}
            touched = {str(w.root) for _, path in changes for w in watched if _concerns(w, Path(path))}
            pending |= touched
            if not pending or (not touched and time.monotonic() < retry_at):
                continue
            if run(pending):
                pending.clear()
                batches += 1
            else:
                retry_at = time.monotonic() + RETRY_SECONDS
        return batches
    finally:
        graph.close()


class _Graph:
    """The watched graph's store, reopened when the file at its path is a new one (deleted and
    created again: an old connection would go on writing the unlinked file)."""

    def __init__(self, path: Path | str, opener: Callable[[Path | str], Any]) -> None:
        self.path, self._open = path, opener
        self.store = opener(path)
        self.identity = self._identity()

    def _identity(self) -> tuple[int, int] | None:
        import os

        if isinstance(self.path, str):
            return (0, 0)  # a database URL: nothing on this machine to be replaced
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def replaced(self) -> bool:
        now = self._identity()
        return now is not None and now != self.identity

    def reopen(self) -> None:
        self.store.close()
        self.store = self._open(self.path)
        self.identity = self._identity()

    def close(self) -> None:
        self.store.close()
