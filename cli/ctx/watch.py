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
    on_start: Callable[[], None] | None = None,
) -> int:
    """Sync at the first wake (within a second), then after every debounced batch of changes until ``stop_event`` is set or
    Ctrl-C. ``on_sync`` receives each SyncReport: the import's as soon as the graph is updated,
    then, when vectors were brought up to date (which may load the model), one with the
    embedding alone (no sources). Returns how many batches were synced.

    The watcher outlives what a batch meets: a graph locked by another writer or a failed import
    is reported through ``on_problem`` and its sources tried again (issue 24, M2); a graph file
    deleted and created again at its path is reopened, as the MCP server does (M4). ``on_start``
    is called once the graph is open and has sources to watch (an error before it is all there is
    to say)."""
    try:
        import watchfiles
    except ImportError:
        raise WatchExtraMissing() from None
    import logging

    # watchfiles logs its own line on Ctrl-C; the CLI says "stopped watching" itself.
    logging.getLogger("watchfiles").setLevel(logging.ERROR)
    from ctx.store import open_store

    graph = _Graph(db_path, open_store)
    try:
        watcher = _Watcher(graph, db_path, on_sync, embed, progress, on_problem or (lambda _line: None))
        if on_start is not None:
            on_start()
        # The first sync runs at the watcher's first wake, once the file watch is in place: run
        # before it, an edit made while it ran (a model loading for vectors takes ~20 s) was seen
        # by nobody until the next edit of that source.
        for changes in watchfiles.watch(
            *sorted({str(w.folder) for w in watcher.watched}),
            watch_filter=watcher.relevant,
            debounce=debounce_ms,
            stop_event=stop_event,
            raise_interrupt=False,
            rust_timeout=WAKE_MS,
            yield_on_timeout=True,
        ):
            watcher.on_changes(changes)
        return watcher.batches
    finally:
        graph.close()


class _Watcher:
    """One watch's state: what is watched, which sources wait for a sync (changed, or failed
    and due again at ``retry_at``), and how many batches were synced."""

    def __init__(
        self,
        graph: _Graph,
        db_path: Path | str,
        on_sync: Callable[[Any], None],
        embed: bool,
        progress: Callable[[str, int, int], None] | None,
        report_problem: Callable[[str], None],
    ) -> None:
        from ctx.sync import syncable

        self.graph, self.db_path, self.on_sync = graph, db_path, on_sync
        self.embed, self.progress, self.report_problem = embed, progress, report_problem
        sources = graph.store.reader().sources()
        if not sources:
            raise CtxError("no sources to watch; add one with `ctx import PATH` first")
        self.pending: set[str] = {s.root for s in sources}  # what changed while nobody watched
        self.retry_at = 0.0
        self.batches = 0
        self.started = False  # the first sync (of every source) is not a batch of changes
        allowed, refused = syncable(graph.store, sources)
        self.watched = _watched(allowed)
        if not self.watched:
            if refused and not allowed:
                # They exist, but a project graph reads only its own folder: "none exists any
                # more" sent the user looking for folders that were there.
                more = f" (and {len(refused) - 1} more source(s) like it)" if len(refused) > 1 else ""
                raise CtxError(f"nothing to watch: {refused[0].root}: {refused[0].error}{more}")
            raise CtxError("none of the registered sources exists any more (see `ctx sources`)")
        self.graph_files = (
            set() if isinstance(db_path, str)  # a database URL: no graph file among the sources
            else {str(db_path.resolve()) + suffix for suffix in ("", "-wal", "-shm", "-journal")}
        )

    def relevant(self, _change: object, path: str) -> bool:
        if path in self.graph_files:
            return False
        changed = Path(path)
        return any(_concerns(w, changed) for w in self.watched)

    def on_changes(self, changes: set[tuple[Any, str]]) -> None:
        """One wake of the watcher: a batch of changes, or none (a timeout, for retries and a
        replaced graph file)."""
        import time

        if self.graph.replaced():
            self.report_problem(f"{self.db_path} was replaced: reopened it")
            self.graph.reopen()
            self.pending |= {s.root for s in self.graph.store.reader().sources()}
        touched = {str(w.root) for _, path in changes for w in self.watched if _concerns(w, Path(path))}
        self.pending |= touched
        if not self.pending or (not touched and time.monotonic() < self.retry_at):
            return
        first, self.started = not self.started, True
        if self.settle(self.run(self.pending)) and not first:
            self.batches += 1

    def settle(self, synced: bool) -> bool:
        """Forget what was synced, or schedule the next try."""
        import time

        if synced:
            self.pending.clear()
        else:
            self.retry_at = time.monotonic() + RETRY_SECONDS
        return synced

    def run(self, roots: set[str]) -> bool:
        """Sync the sources at ``roots``; False when it must be tried again."""
        from ctx.store.errors import is_lock_busy, is_storage_error
        from ctx.sync import sync

        affected = [s for s in self.graph.store.reader().sources() if s.root in roots]
        if not affected:
            return True
        try:
            report = sync(self.graph.store, embed=False, only=affected, progress=self.progress)
        except Exception as exc:
            if not (is_storage_error(exc) or is_lock_busy(exc)):
                raise  # an untrusted graph, say: no retry makes it right
            self.report_problem(f"not synced: {exc}; trying again in {RETRY_SECONDS:g} s")
            return False
        self.on_sync(report)  # the graph is updated: said before any model loads for vectors
        if self.embed and not self.embed_changed():
            return False
        if report.failed:
            self.report_problem(f"{len(report.failed)} source(s) failed; trying again in {RETRY_SECONDS:g} s")
        return not report.failed

    def embed_changed(self) -> bool:
        """Bring vectors up to date after a sync; False when it must be tried again."""
        from ctx.store.errors import is_storage_error
        from ctx.sync import embed_pending

        try:
            embedded = embed_pending(self.graph.store, self.progress)
        except Exception as exc:
            if not (is_storage_error(exc) or isinstance(exc, CtxError)):
                raise
            self.report_problem(f"vectors not updated: {exc}; trying again in {RETRY_SECONDS:g} s")
            return False
        if embedded.texts_embedded or embedded.embed_skipped:
            self.on_sync(embedded)
        return True


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
