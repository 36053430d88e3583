"""A progress bar on stderr (rate and ETA) for long commands; stdout stays clean for pipes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ProgressBar:
    """Use as ``with ProgressBar("parsing", "files", enabled=...) as update: update(done, total)``.

    The bar appears only once ``total`` reaches ``threshold``: small jobs finish before a bar
    would be readable. Rich is imported only then, keeping it off the start-up path.
    """

    def __init__(self, label: str, unit: str, *, enabled: bool, threshold: int = 0) -> None:
        self.label = label
        self.unit = unit
        self.enabled = enabled
        self.threshold = threshold
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Callable[[int, int], None] | None:
        return self._update if self.enabled else None

    def _update(self, done: int, total: int) -> None:
        if total < self.threshold:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn(self.label),
                BarColumn(),
                MofNCompleteColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=total, rate="")
        elapsed = self._bar.tasks[0].elapsed or 0.0
        rate = f"{done / elapsed:.1f} {self.unit}/s" if elapsed > 0 and done else ""
        self._bar.update(self._task, completed=done, rate=rate)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
