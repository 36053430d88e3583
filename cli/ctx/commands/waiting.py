"""How the CLI shows the core's long one-off waits in a build (``ctx.long_waits``) on stderr: a progress bar
on a terminal, one line per wait on a pipe (an agent's log says why a call took seconds), never
anything on stdout."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from ctx import long_waits
from ctx.commands.progress import ProgressBar


@contextmanager
def waits_shown() -> Iterator[None]:
    """Within this block, a long wait inside a build is shown on stderr."""
    if sys.stderr.isatty():
        with ProgressBar(enabled=True) as update, long_waits.listening(update):
            yield
        return
    with long_waits.listening(_one_line_each()):
        yield


def _one_line_each() -> long_waits.Listener:
    announced: set[str] = set()

    def listen(phase: str, done: int, total: int) -> None:
        if phase not in announced:
            announced.add(phase)
            sys.stderr.write(f"ctx: {phase} (a one-off wait of some seconds)\n")
            sys.stderr.flush()

    return listen
