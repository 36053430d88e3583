"""A progress bar on stderr (phase, rate and ETA) for long commands; stdout stays clean for pipes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# What the core's phases count, for the rate column; a phase not listed shows no rate.
UNITS = {
    "reading files": "files",
    "reading graph file": "MB",
    "counting tokens": "nodes",
    "embedding": "texts",  # notes and passages alike: what the encoder is given
    "static vectors": "texts",  # the first stage: passages
    "distilling static model": "pieces",  # once per machine: the model's vocabulary
    "passages": "notes",
}


class ProgressBar:
    """Use as ``with ProgressBar(enabled=...) as update: update(phase, done, total)``.

    Each phase the core names ("reading files", "counting tokens", "saving", "loading model",
    "embedding", ...) restarts the bar under its own name, so the bar never sits at 100% while
    the next step runs. The bar appears only once a phase's ``total`` reaches ``threshold``: small
    jobs finish before a bar would be readable. Rich is imported only then, keeping it off the
    start-up path.
    """

    def __init__(self, *, enabled: bool, threshold: int = 0, prefix: str = "") -> None:
        self.enabled = enabled
        self.threshold = threshold
        self.prefix = prefix
        self._bar: Any = None
        self._task: Any = None
        self._phase: str | None = None

    def __enter__(self) -> Callable[[str, int, int], None] | None:
        return self._update if self.enabled else None

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
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
        self._task = self._bar.add_task("", total=None, rate="")

    def _update(self, phase: str, done: int, total: int) -> None:
        if self._bar is None:
            if total < self.threshold:
                return
            self._start()
        if phase != self._phase:
            self._phase = phase
            # A one-step phase ("saving", "loading model") has no meaningful count: a spinner.
            self._bar.reset(
                self._task, total=total if total > 1 else None, description=self.prefix + phase, rate=""
            )
        unit = UNITS.get(phase.rpartition(": ")[2])
        elapsed = self._bar.tasks[0].elapsed or 0.0
        rate = f"{done / elapsed:.1f} {unit}/s" if unit and elapsed > 0 and done else ""
        self._bar.update(self._task, completed=done if total > 1 else 0, rate=rate)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
