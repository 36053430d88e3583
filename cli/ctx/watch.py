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


def watch(
    db_path: Path,
    *,
    on_sync: Callable[[Any], None],
    debounce_ms: int = DEFAULT_DEBOUNCE_MS,
    embed: bool = True,
    stop_event: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> int:
    """Sync now, then after every debounced batch of changes until ``stop_event`` is set or
    Ctrl-C. ``on_sync`` receives each SyncReport. Returns how many batches were synced."""
    try:
        import watchfiles
    except ImportError:
        raise WatchExtraMissing() from None
    import logging

    # watchfiles logs its own line on Ctrl-C; the CLI says "stopped watching" itself.
    logging.getLogger("watchfiles").setLevel(logging.ERROR)
    from ctx.store import open_store
    from ctx.sync import sync

    store = open_store(db_path)
    try:
        sources = store.reader().sources()
        if not sources:
            raise CtxError("no sources to watch; add one with `ctx import PATH` first")
        on_sync(sync(store, embed=embed, progress=progress))  # what changed while nobody watched
        from ctx.sync import syncable

        watched = _watched(syncable(store, sources)[0])
        if not watched:
            raise CtxError("none of the registered sources exists any more (see `ctx sources`)")
        graph_files = {str(db_path.resolve()) + suffix for suffix in ("", "-wal", "-shm", "-journal")}

        def relevant(_change: object, path: str) -> bool:
            if path in graph_files:
                return False
            changed = Path(path)
            return any(_concerns(w, changed) for w in watched)

        batches = 0
        for changes in watchfiles.watch(
            *sorted({str(w.folder) for w in watched}),
            watch_filter=relevant,
            debounce=debounce_ms,
            stop_event=stop_event,
            raise_interrupt=False,
        ):
            touched = {w.root for _, path in changes for w in watched if _concerns(w, Path(path))}
            affected = [s for s in store.reader().sources() if Path(s.root) in touched]
            if not affected:
                continue
            on_sync(sync(store, embed=embed, only=affected, progress=progress))
            batches += 1
        return batches
    finally:
        store.close()
