"""What a warm process keeps of a free-text question's rankings between builds.

A question's passage ranking (full text, and vectors where the graph has them) and the fused
search relevance of its nodes depend on the graph, the question's text and the lens's settings,
not on the depth or the budget. An agent asks the same question again at another depth or with
another budget (a pool kept by ``warm`` is keyed by both, so it does not serve them), and each
such build ranked the question again: at 100k nodes ~20 ms of BM25 over three full-text indexes.
Kept here under ``GraphReader.warm_state()`` and the reader's visibility, like ``warm``'s pools,
never where the graph moved while it was computed. Off unless ``warm`` is on (a one-shot build
ranks once anyway); kept values are shared, and every caller only reads them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from ctx.semantic.topic import TopicVector
    from ctx.store.protocols import GraphReader

T = TypeVar("T")

# Rankings kept (the most recently used). A question keeps three (its seeds' passage ranking, the
# collector's, its fused relevance): ~170 KB in all at 100k nodes (30 questions, tracemalloc), so
# 300 are ~17 MB for the last 100 questions. Fewer did not last an agent's round: 20 questions
# asked at four depths (80 builds) had evicted the first depth's rankings before any was asked
# again deeper.
MAX_KEPT = 300

_kept: OrderedDict[Hashable, object] = OrderedDict()
_lock = threading.Lock()


def kept(graph: GraphReader, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, or what it returned for ``key`` under this graph state and visibility."""
    from ctx.assemble import warm

    if not warm.enabled():
        if _kept:
            forget()  # a process no longer warm keeps nothing
        return compute()
    state = graph.warm_state()
    if state is None:
        return compute()
    full = (state, graph.include_private, key)
    with _lock:
        if full in _kept:
            _kept.move_to_end(full)
            return _kept[full]  # type: ignore[return-value]
    value = compute()
    if graph.warm_state() == state:  # else what it read has no one state to be kept under
        with _lock:
            _kept[full] = value
            while len(_kept) > MAX_KEPT:
                _kept.popitem(last=False)
    return value


def forget() -> None:
    with _lock:
        _kept.clear()


def topic_key(topic: TopicVector | None) -> Hashable:
    """What a ranking reads of the topic's vector: the model and the vector's exact values."""
    if topic is None:
        return None
    vector = None if topic.vector is None else (str(topic.vector.dtype), topic.vector.tobytes())
    return (topic.model, vector, topic.method, topic.note)
