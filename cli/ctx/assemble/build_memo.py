"""Work a build would otherwise do twice, done once per build.

The resolver ranks a free-text topic's passages to choose seeds, and the collector ranks them
again (with the topic's own vector) to score and focus the candidates: both read every passage
vector of the model (the largest read of a build on a big embedded graph) and run the same
full-text queries. Inside ``build_scope`` each such result is computed once and reused; outside
one (a direct call) nothing is kept. The memo lives only as long as the build, so nothing a later
import or ``ctx embed`` changes can be served stale.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_MEMO: ContextVar[dict[Hashable, Any] | None] = ContextVar("ctx_build_memo", default=None)


@contextmanager
def build_scope() -> Iterator[None]:
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def once(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, or what it returned for ``key`` earlier in this build."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    return memo[key]
