"""Waits of seconds that a build meets once and cannot avoid, named so a person is not left
staring at a silent terminal.

The one such wait today: a graph whose ``ctx embed`` stopped at the static first stage, built on
a machine that has never distilled that static model (a team graph embedded elsewhere). The first
question distils it (~13 s of CPU on this project's 2-core machine) before it can answer. The
core reports ``(phase, done, total)`` to whoever listens; library callers and tests hear nothing,
and the CLI shows a progress bar on a terminal or one line on a pipe (``ctx.commands.waiting``).

A context variable rather than an argument threaded through every layer: the wait sits deep in
passage ranking, far below any call that knows about a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str, int, int], None]

_listener: ContextVar[Listener | None] = ContextVar("ctx_long_wait_listener", default=None)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Within this block, long waits report to ``listener`` (None: nobody listens)."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def reporter(phase: str) -> Callable[[int, int], None] | None:
    """A ``(done, total)`` callback for ``phase`` that reaches the current listener; None when no
    one listens, so the caller does no reporting work at all."""
    listener = _listener.get()
    if listener is None:
        return None

    def report(done: int, total: int) -> None:
        listener(phase, done, total)

    return report
