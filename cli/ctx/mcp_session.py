"""The MCP session tools, `context_map` and `expand`, under one budget per client connection.

The account itself (``ctx.assemble.session``) knows nothing of MCP. ``ctx mcp`` serves stdio: one
client per server process, which the client starts and ends, so the session is the process's
(kept on its ``CtxTools``, in memory) and ends with it. A session's calls are answered one at a
time, in the order they arrive, so its account is the same for the same calls.

``ctx.mcp_server`` declares the two tools (``tool_specs``) and calls ``context_map`` and
``expand`` here; they return (text, warnings) and raise ``CtxError`` for a call that cannot be
answered, which the server reports as every tool error (this module never imports the server).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ctx.errors import CtxError, NotFoundError

if TYPE_CHECKING:
    from ctx.assemble.session import Session

MAP_DESCRIPTION = """\
The map of a topic in the user's knowledge graph, before reading anything: the ranked candidates
(best first) that `context` would choose from, each with its id, type, why it is there (the topic,
hops and edges from it, found by search or similarity) and its passages as `#n` (passage id
`id#n`) with heading path, exact token cost and, when the topic matched it, relevance (1 = the best
passage, .47 = 47% of it). Then call `expand` on the ids or passage ids you want. Both tools answer
under ONE budget for your whole session (connection): set it with `session_budget` on the first
call (default: the user's configured max_tokens, else 4000). Every answer is charged to it, ends
with `session: used/budget tokens used, N left`, and never exceeds what is left; `expand` never
sends a passage twice in a session. The map itself is small (`max_tokens`, default 600).

Examples:
  {"topic": "Project Apollo", "session_budget": 3000}
  {"topic": "what blocks the launch?", "max_tokens": 400}"""

EXPAND_DESCRIPTION = """\
The text of nodes or passages chosen from a `context_map` answer: `ids` holds node ids (every
passage of the node) or passage ids (`id#n`). Sent in the order asked, each node's passages in
reading order under their heading paths; a passage already sent in this session is not sent again
(it is named), and what does not fit the session's remaining budget is named with its cost instead.
Ends with the session's account.

Examples:
  {"ids": ["Projects/Project Apollo#0", "Projects/Project Apollo#2"]}
  {"ids": ["People/Maya Chen"]}"""

_LOCK = threading.Lock()


class Sessions:
    """The sessions of one server (one per connection: over stdio, the one)."""

    KEY = "stdio"

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def get(self, budget: int | None, key: str = KEY) -> Session:
        from ctx.assemble import build_defaults
        from ctx.assemble.session import check_budget, start_session

        with self._lock:
            found = self._sessions.get(key)
            if found is not None and (found.calls or budget is None):
                check_budget(found, budget)
                return found
            # No call was answered yet (a refused call costs nothing and commits to nothing): the
            # budget asked now is the session's. A first map refused for a budget below its
            # smallest answer, or an expand of an unknown id, fixed it for the connection's life.
            _, default_budget, encoding = build_defaults()
            started = self._sessions[key] = start_session(
                budget if budget is not None else default_budget, encoding
            )
            return started


def sessions_of(tools: Any) -> Sessions:
    """The sessions kept on a server's ``CtxTools``."""
    with _LOCK:
        found = getattr(tools, "_ctx_sessions", None)
        if found is None:
            found = Sessions()
            tools._ctx_sessions = found
        return found


def context_map(tools: Any, values: dict[str, Any]) -> tuple[str, list[str]]:
    """The ``context_map`` tool: ``values`` are ``MapRequest``'s fields."""
    from dataclasses import replace

    from ctx.assemble import AUTO_LENS, BuildRequest, build_defaults, validate_request
    from ctx.assemble.counter import TokenCounter
    from ctx.assemble.build_memo import build_scope
    from ctx.assemble.session import context_map as map_of
    from ctx.freshness import graph_freshness, last_refresh
    from ctx.lenses import load_named_lens

    session = sessions_of(tools).get(values.get("session_budget"))
    lens = values.get("lens")
    # A lens the agent names comes from the lens folders, never a path (as `context`'s).
    chosen = AUTO_LENS if lens == AUTO_LENS else load_named_lens(lens) if lens is not None else build_defaults()[0]
    topic = values["topics"]
    topics = (topic,) if isinstance(topic, str) else tuple(topic)
    request = BuildRequest(topics=topics, lens=chosen, depth=values.get("depth"), max_tokens=session.budget,
                           encoding=session.encoding)
    validate_request(request)
    graph, refreshed = tools._fresh_graph()
    # Stated as every build states it: one line in the map when anything is stale.
    request = replace(request, freshness=graph_freshness(graph.store, last_refresh(),
                                                         include_private=graph.include_private))
    with session.lock, build_scope():
        found, text = map_of(graph.reader, request, session, TokenCounter(session.encoding), values.get("max_tokens"))
    if not found:
        # Charged nothing: a map of nothing is only its error.
        raise NotFoundError("no node matches " + ", ".join(repr(t) for t in topics) + " (use search to find it)")
    return text, refreshed


def expand(tools: Any, values: dict[str, Any]) -> tuple[str, list[str]]:
    """The ``expand`` tool: ``values`` are ``ExpandRequest``'s fields."""
    from ctx.assemble.counter import TokenCounter
    from ctx.assemble.session import expand as expanded

    session = sessions_of(tools).get(values.get("session_budget"))
    ids = values.get("ids")
    ids = [ids] if isinstance(ids, str) else list(ids or [])
    if any(not isinstance(i, str) for i in ids):
        raise CtxError("expand: every id must be a string")
    graph, refreshed = tools._fresh_graph()
    with session.lock:
        text = expanded(graph.reader, ids, session, TokenCounter(session.encoding))
    return text, refreshed
