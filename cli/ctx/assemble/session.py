"""A session budget: an agent sees the map of a topic first, then expands what it chooses.

``context_map`` ranks a topic's candidates as a build does (resolve, walk, score) and lists them,
best first, each with its id, type, why it is there and its passages (``id#n``, heading path,
exact token cost of the text), in a small budget of its own. ``expand`` returns the text of the
nodes or passages named. Both answer under one budget for the whole session: every answer's text
(this module's output, counted exactly in the session's encoding) is charged to it, no answer
takes more than what is left, and a passage already sent in the session is never sent again (a
passage is known by its node and content hash: one rewritten since is new text). Every answer
ends with the session's account, ``session: used/budget tokens, N left``, whose figures include
the answer itself.

Nothing here knows about MCP: the server keeps one ``Session`` per client connection, in memory.
The same graph and the same calls in the same order give the same bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ctx.errors import UsageError
from ctx.options import option

if TYPE_CHECKING:
    from ctx.assemble import BuildRequest
    from ctx.assemble.counter import TokenCounter
    from ctx.store.protocols import GraphReader

PASSAGE_SEP = "#"
MAP_TOKENS = 600  # a map's default size: a few hundred tokens
MAX_PASSAGES_LISTED = 8  # per node in a map; the rest are counted ("+N more")
MAX_IDS = 200  # ids in one expand call


class SessionError(UsageError):
    """A session call that cannot be answered (budget spent, a budget changed, bad ids)."""


_SESSION_BUDGET_HELP = (
    "The whole session's token budget: every context_map and expand answer is charged to it and"
    " none exceeds what is left. Set by the session's first answered call (default: the user's"
    " configured max_tokens, else 4000); a later call may repeat it but not change it."
)


@dataclass(frozen=True)
class MapRequest:
    """The MCP ``context_map`` tool's arguments (declared once, as ``BuildRequest``'s are)."""

    topics: tuple[str, ...] = option(
        kind=str, argument=True, many=True, mcp="topic",
        help="What to map: a node id, a title or alias, or free text; a list blends several topics.",
    )
    lens: str | None = option(
        None, kind=str, help="Lens name, as listed by the `lenses` tool (default: as `context`'s).",
    )
    depth: int | None = option(None, kind=int, minimum=0, help="Hops to walk from the topic (default: the lens's).")
    max_tokens: int | None = option(
        None, kind=int, minimum=50,
        help=f"This map's own size in tokens (default {MAP_TOKENS}; never more than the session has left).",
    )
    session_budget: int | None = option(None, kind=int, minimum=50, help=_SESSION_BUDGET_HELP)


@dataclass(frozen=True)
class ExpandRequest:
    """The MCP ``expand`` tool's arguments."""

    ids: tuple[str, ...] = option(
        kind=str, argument=True, many=True,
        help="Node ids (all of a node's passages) or passage ids (id#n), as context_map lists them.",
    )
    session_budget: int | None = option(None, kind=int, minimum=50, help=_SESSION_BUDGET_HELP)


# ---------------------------------------------------------------------------------------------
# The account


@dataclass
class Session:
    """One agent's session: its budget (set by its first call), what its answers cost so far,
    and the passages (node id, content hash) and passage-less nodes already sent."""

    budget: int
    encoding: str
    used: int = 0
    sent: set[tuple[str, str]] = field(default_factory=set)
    calls: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def left(self) -> int:
        return self.budget - self.used

    def account(self, cost: int) -> str:
        """The line every answer ends with, as it reads once the answer's ``cost`` is charged."""
        used = self.used + cost
        return f"session: {used}/{self.budget} tokens used, {self.budget - used} left"


def start_session(budget: int, encoding: str) -> Session:
    from ctx.assemble import MAX_TOKENS, MIN_TOKENS

    if not MIN_TOKENS <= budget <= MAX_TOKENS:
        raise SessionError(f"session_budget must be {MIN_TOKENS} to {MAX_TOKENS:,}, not {budget}")
    return Session(budget, encoding)


def check_budget(session: Session, asked: int | None) -> None:
    if asked is not None and asked != session.budget:
        raise SessionError(
            f"session_budget is set once per session ({session.budget}, {session.used} used); not {asked}"
        )


def fit_exact(render: Callable[[int], str], counter: TokenCounter) -> tuple[str, int]:
    """``render(n)`` for the ``n`` that is its own token count (the account line states the
    answer's cost, which depends on the digits it prints); the nearest consistent text."""
    guess = 0
    seen: list[int] = []
    for _ in range(8):
        text = render(guess)
        n = counter.count(text)
        if n == guess:
            return text, n
        seen.append(n)
        guess = n
    for g in sorted(set(seen)):
        for delta in (-2, -1, 0, 1, 2, 3):
            text = render(g + delta)
            if counter.count(text) == g + delta:
                return text, g + delta
    # Not reached in practice; charge the larger figure so the account never under-counts.
    text = render(max(seen) + 3)
    return text, max(counter.count(text), max(seen) + 3)


def charge(session: Session, render: Callable[[int], str], counter: TokenCounter) -> str | None:
    """The answer ``render`` gives, charged to ``session``; None when it does not fit what is left."""
    text, cost = fit_exact(render, counter)
    if cost > session.left:
        return None
    session.used += cost
    session.calls += 1
    return text


def spent(session: Session, what: str, smallest: int | None = None) -> SessionError:
    need = f" (the smallest answer takes {smallest})" if smallest is not None else ""
    if session.used == 0 and smallest is not None:
        # Nothing was spent: the budget set for the session is below the smallest answer.
        return SessionError(f"{what}: the session's budget, {session.budget}, is below the smallest answer"
                            f" ({smallest} tokens); call again with a larger session_budget")
    return SessionError(f"{what}: the session budget is spent ({session.used}/{session.budget} used,"
                        f" {session.left} left{need}); start a new session for more")


# ---------------------------------------------------------------------------------------------
# The map


@dataclass
class MapPassage:
    ord: int
    heading: tuple[str, ...]
    tokens: int  # the passage's text as ``expand`` shows it, counted exactly
    relevance: float  # to the topic, as a share of the best passage's (0: not matched)
    sent: bool


@dataclass
class MapNode:
    id: str
    title: str
    type: str
    score: float
    why: str
    passages: list[MapPassage]
    tokens: int  # all its passages (or its body, when it has none)
    sent: bool  # everything of it already sent
    date: str | None = None  # as `context` dates it (None where the lens turns dates off)


def _why(c: Any) -> str:
    if c.seed:
        return "the topic"
    reasons = []
    if c.path:
        edges = [h.edge for h in c.path]
        reasons.append(f"{c.hops} hop{'s' if c.hops != 1 else ''} via {' > '.join(edges[:3])}")
    if c.semantic:
        reasons.append("found by search/similarity")
    if c.recent:
        reasons.append("recently edited")
    if c.sibling_offset is not None:
        reasons.append("a sibling")
    return "; ".join(reasons) or "related"


def candidate_map(graph: GraphReader, request: BuildRequest, session: Session) -> tuple[bool, str, list[MapNode]]:
    """(found, lens name, the ranked candidates) for ``request``'s topics, as a build ranks them."""
    from ctx.assemble import pipeline
    from ctx.assemble.document import node_date
    from ctx.passages import collapse_attachments

    build = pipeline.start(graph, request)
    pipeline.find_seeds(graph, build)
    if not build.seeds:
        return False, build.lens.name, []
    pipeline.collect(graph, build)
    pipeline.rank(graph, build)
    ranked = [c for c in build.candidates if not c.in_outline_of]
    counter = build.counter
    stored = graph.passages_of([c.id for c in ranked])
    relevant = build.ranking.passages if build.ranking is not None else {}
    no_passages = [c.id for c in ranked if c.id not in stored]
    bodies = graph.bodies(no_passages) if no_passages else {}
    nodes = []
    for c in ranked:
        rows = stored.get(c.id, [])
        passages = [
            MapPassage(p.ord, p.heading, counter.count(collapse_attachments(p.text)), relevant.get(p.id, 0.0),
                       (c.id, p.hash) in session.sent)
            for p in rows
        ]
        if passages:
            tokens = sum(p.tokens for p in passages)
            sent = all(p.sent for p in passages)
        else:
            body = bodies.get(c.id) or ""
            tokens = counter.count(body) if body.strip() else 0
            sent = (c.id, _body_key(body)) in session.sent
        date = node_date(c) if build.doc.show_dates else None
        nodes.append(MapNode(c.id, c.title, c.type, c.score, _why(c), passages, tokens, sent, date))
    return True, build.lens.name, nodes


def _body_key(body: str) -> str:
    import hashlib

    return "body:" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def _passage_entry(p: MapPassage) -> str:
    heading = f" {' › '.join(p.heading)}" if p.heading else ""
    # Relevance in two digits (".82"; "1" for the best): enough to choose by, cheap in tokens.
    share = "" if p.relevance <= 0 else ", 1" if p.relevance >= 0.995 else f", .{max(1, round(p.relevance * 100)):02d}"
    return f"#{p.ord}{heading} ({p.tokens}{share}{' sent' if p.sent else ''})"


def map_lines(node: MapNode, rank: int) -> list[str]:
    from ctx.assemble.document import title_shows_day

    day = f" · {node.date}" if node.date and not title_shows_day(node.title, node.date) else ""
    head = (f"{rank}. {node.title} (id: {node.id}) · {node.type}{day} · {node.why} · {node.tokens} tokens"
            + (" · sent" if node.sent else ""))
    if not node.passages:
        return [head]
    # A long node lists its most relevant passages (then its first ones), in reading order.
    best = sorted(node.passages, key=lambda p: (-p.relevance, p.ord))[:MAX_PASSAGES_LISTED]
    listed = sorted(best, key=lambda p: p.ord)
    more = len(node.passages) - len(listed)
    tail = f" · +{more} more" if more else ""
    return [head, "   " + " · ".join(_passage_entry(p) for p in listed) + tail]


def render_map(
    label: str, lens: str, nodes: Sequence[MapNode], listed: int, session: Session, cost: int, stale: str = "",
    capped: str = "",
) -> str:
    lines = [f"# Map: {label}",
             f"lens: {lens} · {len(nodes)} {_candidates(len(nodes))}, best first, {listed} listed · passages: #n heading (tokens,"
             " relevance to the topic); expand ids or id#n"]
    if capped:
        lines.append(capped)
    if stale:
        lines.append(stale)
    for rank, node in enumerate(nodes[:listed], start=1):
        lines += map_lines(node, rank)
    if listed < len(nodes):
        left = len(nodes) - listed
        lines.append(f"… {left} more {_candidates(left)} not listed")
    lines.append(session.account(cost))
    return "\n".join(lines) + "\n"


def _candidates(n: int) -> str:
    return "candidate" if n == 1 else "candidates"


def context_map(
    graph: GraphReader, request: BuildRequest, session: Session, counter: TokenCounter, size: int | None,
) -> tuple[bool, str]:
    """The map answer (found, text), charged to ``session``; at most ``size`` tokens (default
    MAP_TOKENS) and never more than the session has left."""
    found, lens, nodes = candidate_map(graph, replace(request, since=None), session)
    if not found:
        # A topic that names nothing is a tool error, sent without the map: charged nothing.
        return False, ""
    label = " + ".join(t.strip() for t in request.topics if t.strip())
    asked = size or MAP_TOKENS
    room = min(asked, session.left)
    stale = request.freshness.line() if request.freshness is not None else ""
    # Said in the map, as `context` says a capped depth: an agent that asked for more than is left
    # learns that this map may spend the rest of the session, leaving nothing to expand.
    capped = f"max_tokens {asked} capped to {room}: all this session has left" if asked > room else ""

    # As many candidates as fit, found by halving (each count is of the whole answer).
    def cost_of(n: int) -> int:
        return fit_exact(lambda c: render_map(label, lens, nodes, n, session, c, stale, capped), counter)[1]

    lo, hi = 0, len(nodes)
    smallest = cost_of(0)
    if smallest > room:
        if smallest <= session.left:  # the session has room; the map's own max_tokens is what is short
            raise SessionError(f"context_map: max_tokens {size or MAP_TOKENS} is below the smallest map ({smallest} tokens);"
                               f" ask for at least {smallest} (the session has {session.left} left)")
        raise spent(session, "context_map", smallest)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost_of(mid) <= room:
            lo = mid
        else:
            hi = mid - 1
    text = charge(session, lambda c: render_map(label, lens, nodes, lo, session, c, stale, capped), counter)
    assert text is not None  # cost_of(lo) fitted what is left
    return found, text


# ---------------------------------------------------------------------------------------------
# Expanding


@dataclass
class Unit:
    """One piece ``expand`` may send: a passage, or the body of a node without passages."""

    node: str
    title: str
    key: str  # passage hash, or the body's key
    ord: int | None  # None: the node's body
    tokens: int
    body: str = ""  # the body, for a node without passages
    date: str | None = None  # the node's date, as `context` shows it (issue 23: dates anchor answers)


def parse_ids(graph: GraphReader, ids: Sequence[str]) -> list[tuple[str, int | None]]:
    """(node id, passage ord or None for the whole node) for each id: a node id as it is, else
    ``id#n``."""
    if not ids:
        raise SessionError("expand needs 'ids': node ids or passage ids (id#n) from context_map")
    if len(ids) > MAX_IDS:
        raise SessionError(f"expand takes at most {MAX_IDS} ids, not {len(ids)}")
    nodes = graph.visible_ids(list(dict.fromkeys(ids)))  # an id may itself hold a "#"
    out: list[tuple[str, int | None]] = []
    for raw in ids:
        node, sep, tail = raw.rpartition(PASSAGE_SEP)
        if raw not in nodes and sep and node and tail.isdigit():
            out.append((node, int(tail)))
        else:
            out.append((raw, None))
    return out


def _units(
    graph: GraphReader, wanted: list[tuple[str, int | None]], counter: TokenCounter,
) -> tuple[list[Unit], list[str], dict[str, list[Any]]]:
    """The units the ids name, in the order asked (each once), the ids that name nothing
    visible, and each node's passages as ``focus.Piece`` (to render excerpts)."""
    from ctx.assemble import focus
    from ctx.assemble.document import day_of
    from ctx.passages import collapse_attachments

    visible = graph.visible_ids(list(dict.fromkeys(n for n, _ in wanted)))
    stored = graph.passages_of(sorted(visible))
    facts = graph.node_facts(sorted(visible), with_fields=False)
    titles = {f.id: f.title for f in facts}
    dates = {f.id: day_of(f.created, f.updated) for f in facts}
    pieces: dict[str, list[Any]] = {
        node_id: [focus.Piece(p.ord, p.heading, collapse_attachments(p.text), 0, 0.0) for p in rows]
        for node_id, rows in stored.items()
    }
    no_passages = sorted(n for n in visible if n not in stored)
    bodies = graph.bodies(no_passages) if no_passages else {}
    units: list[Unit] = []
    seen: set[tuple[str, str]] = set()
    missing: list[str] = []

    def add(unit: Unit) -> None:
        if (unit.node, unit.key) not in seen:
            seen.add((unit.node, unit.key))
            units.append(unit)

    for node_id, ord_ in wanted:
        raw = node_id if ord_ is None else f"{node_id}{PASSAGE_SEP}{ord_}"
        if node_id not in visible:
            missing.append(raw)
            continue
        title = titles.get(node_id, node_id)
        rows = stored.get(node_id, [])
        if ord_ is None and not rows:
            body = (bodies.get(node_id) or "").strip()
            add(Unit(node_id, title, _body_key(body), None, counter.count(body), body, dates.get(node_id)))
            continue
        chosen = [p for p in rows if ord_ is None or p.ord == ord_]
        if not chosen:
            missing.append(raw)
        for p in chosen:
            add(Unit(node_id, title, p.hash, p.ord, counter.count(collapse_attachments(p.text)), "", dates.get(node_id)))
    return units, missing, pieces


def render_expand(
    given: list[Unit], already: list[Unit], no_room: list[Unit], missing: list[str],
    pieces: dict[str, list[Any]], session: Session, cost: int,
) -> str:
    from ctx.assemble import focus
    from ctx.assemble.document import title_shows_day

    parts = []
    by_node: dict[str, list[Unit]] = {}
    for unit in given:
        by_node.setdefault(unit.node, []).append(unit)
    for node_id, units in by_node.items():
        day = f" · {units[0].date}" if units[0].date and not title_shows_day(units[0].title, units[0].date) else ""
        head = f"### {units[0].title} (id: {node_id}){day}"
        if units[0].ord is None:
            parts.append(head + (_after_head(units[0].body) if units[0].body else ""))
        else:
            ords = [u.ord for u in units if u.ord is not None]
            parts.append(head + _after_head(focus.excerpt(pieces.get(node_id, []), ords)))
    notes = []
    if already:
        notes.append("already sent in this session (not sent again): " + _ids(already))
    if no_room:
        notes.append(f"no room left in the session for: {_ids(no_room)} ({sum(u.tokens for u in no_room)} tokens)")
    if missing:
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        notes.append("not found: " + ", ".join(missing[:10]) + more)
    body = "\n\n".join(parts)
    tail = "\n".join(notes + [session.account(cost)])
    return (body + "\n\n" if body else "") + tail + "\n"


def _after_head(text: str) -> str:
    """``text`` below a node's ``###`` line: a blank line first when it opens with a heading of
    its own (a first passage under `#### Milestones`), as every heading after it has one."""
    heading = text.startswith("#") and text.lstrip("#").startswith((" ", "\t")) and len(text) - len(text.lstrip("#")) <= 6
    return ("\n\n" if heading else "\n") + text


def _ids(units: list[Unit]) -> str:
    return ", ".join(u.node if u.ord is None else f"{u.node}{PASSAGE_SEP}{u.ord}" for u in units)


def expand(graph: GraphReader, ids: Sequence[str], session: Session, counter: TokenCounter) -> str:
    """The text of what ``ids`` name that the session has not been sent, as much as its budget
    has left (in the order asked; one that does not fit is skipped, the next tried), charged."""
    units, missing, pieces = _units(graph, parse_ids(graph, ids), counter)
    if not units and missing:
        raise SessionError("expand: no such node or passage: " + ", ".join(missing[:5]))
    already = [u for u in units if (u.node, u.key) in session.sent]
    todo = [u for u in units if (u.node, u.key) not in session.sent]

    def text_for(given: list[Unit], cost: int) -> str:
        no_room = [u for u in todo if u not in given]
        return render_expand(_reading_order(given), already, no_room, missing, pieces, session, cost)

    def fits(given: list[Unit]) -> bool:
        return fit_exact(lambda c: text_for(given, c), counter)[1] <= session.left

    if not fits([]):
        raise spent(session, "expand", fit_exact(lambda c: text_for([], c), counter)[1])
    given: list[Unit] = list(todo)
    if not fits(given):
        given = []
        for unit in todo:
            if fits([*given, unit]):
                given.append(unit)
    text = charge(session, lambda c: text_for(given, c), counter)
    assert text is not None
    session.sent.update((u.node, u.key) for u in given)
    return text


def _reading_order(units: list[Unit]) -> list[Unit]:
    """Each node's units together (nodes in the order first asked), its passages in reading order."""
    first: dict[str, int] = {}
    for i, u in enumerate(units):
        first.setdefault(u.node, i)
    return sorted(units, key=lambda u: (first[u.node], -1 if u.ord is None else u.ord))
