"""``ctx build --since``: what changed in a context since an earlier one, within the same budget.

The build runs as usual; its packed document is compared with the earlier build's manifest
(``manifest.py``). A node shown now and not then is *new* (shown as the context shows it); one
shown both times whose passages or fields changed is *changed* (only the passages whose content
is new to the reader, under their heading paths, with its fields); one shown then and not now
*dropped out* (one line, with why). One-line summaries new to the reader follow. A context whose
id did not change (same inputs, same graph version) is unchanged without building; one whose
nodes all read the same says so in one line too.

The diff is rendered to fit ``--max-tokens`` exactly like a context: when it does not fit, the
last summaries go first, then dropped-out lines (counted in "and N more"), then the text of the
lowest-ranked new or changed nodes (they stay as one line each, then are counted too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctx.assemble.candidate import Candidate
from ctx.assemble.document import FULL, Document, Item
from ctx.assemble.manifest import reading_order
from ctx.assemble.render import dumps, json_node, json_summary, markdown_block, markdown_summary_line
from ctx.schema import SCHEMA_VERSION

if TYPE_CHECKING:
    from ctx.assemble.counter import TokenCounter
    from ctx.store.protocols import GraphReader

NEW, CHANGED = "new", "changed"


@dataclass
class Entry:
    """A node the diff shows: its text (new) or its changed passages (changed)."""

    item: Item
    change: str  # NEW or CHANGED
    passages: tuple[int, ...] | None = None  # CHANGED: the ords shown (None: the whole text)
    text: str = ""
    whole: bool = True  # False: listed in one line (no room for its text)
    total: int | None = None  # CHANGED: how many passages the node has
    removed: int = 0  # CHANGED: passages shown before that the note no longer has, nor a rewrite of
    pieces: tuple[Any, ...] = ()  # CHANGED: the node's passages (``focus.Piece``), to show fewer
    order: tuple[int, ...] = ()  # CHANGED: the changed passages, most worth showing first

    def trim(self) -> bool:
        """Show one changed passage fewer (the least worth showing); False when one is left."""
        if self.passages is None or len(self.passages) < 2 or not self.pieces:
            return False
        from ctx.assemble import focus

        keep = [o for o in self.order if o in set(self.passages)][:-1]
        self.passages = tuple(sorted(keep))
        self.text = focus.excerpt(self.pieces, self.passages)
        return True


@dataclass
class Diff:
    since: str
    since_version: int | None
    context: str
    version: int
    entries: list[Entry] = field(default_factory=list)
    dropped: list[dict[str, str]] = field(default_factory=list)  # id, title, reason
    also: list[Item] = field(default_factory=list)  # one-line summaries new to the reader
    kept: int = 0  # nodes shown then and now with the same content
    more_dropped: int = 0  # dropped-out lines left out for room
    more_entries: int = 0  # new or changed nodes left out for room
    left_out: list[str] = field(default_factory=list)  # kinds of the entries left out for room
    current: dict[str, dict[int, str]] = field(default_factory=dict)  # node -> ord -> passage hash, now
    level: int = 0  # 0 the full header; 1, 2, 3 smaller ones when nothing else is left to give
    since_format: str | None = None  # the earlier context's format when not this one's (an id named it)

    @property
    def unchanged(self) -> bool:
        return not (self.entries or self.dropped or self.also or self.more_dropped or self.more_entries)

    def counts(self) -> dict[str, int]:
        return {
            "new": sum(1 for e in self.entries if e.change == NEW) + self._left(NEW),
            "changed": sum(1 for e in self.entries if e.change == CHANGED) + self._left(CHANGED),
            "dropped": len(self.dropped) + self.more_dropped,
            "unchanged": self.kept,
        }

    def _left(self, change: str) -> int:
        return sum(1 for kind in self.left_out if kind == change)


# ---------------------------------------------------------------------------------------------
# Comparing


def compare(
    graph: GraphReader, doc: Document, ranked: list[Candidate], now: dict[str, Any], before: dict[str, Any],
) -> Diff:
    """``doc`` (packed, with manifest ``now``) against the earlier manifest ``before``."""
    diff = Diff(str(before.get("id", "")), _int(before.get("graph_version")), now["id"], int(now["graph_version"]))
    if isinstance(before.get("format"), str) and before["format"] != now.get("format"):
        # Another format packs other nodes into the same budget: what "dropped out: no room"
        # means then is said plainly.
        diff.since_format = before["format"]
    earlier = {str(n.get("id")): n for n in before.get("nodes", []) if isinstance(n, dict)}
    listed_before = set(earlier) | {str(a.get("id")) for a in before.get("also", []) if isinstance(a, dict)}
    current = {n["id"]: n for n in now["nodes"]}
    shown = reading_order(doc)
    # Every passage hash each node shown both times has now, shown or not: a passage the reader
    # saw that is in none of them was removed (or rewritten) since.
    hashes = {
        node_id: {p.ord: p.hash[:16] for p in rows}
        for node_id, rows in graph.passages_of([i.cand.id for i in shown if i.cand.id in earlier]).items()
    }
    diff.current = hashes
    for item in shown:
        c = item.cand
        was = earlier.get(c.id)
        if was is None:
            diff.entries.append(Entry(item, NEW, item.passages, item.text))
            continue
        entry = _changed(graph, item, current[c.id], was, hashes.get(c.id, {}))
        if entry is None:
            diff.kept += 1
        else:
            diff.entries.append(entry)
    shown_now = set(current)
    diff.also = [i for i in sorted(doc.also, key=lambda i: i.cand.rank) if i.cand.id not in listed_before]
    gone = [n for n in earlier.values() if n.get("id") not in shown_now]
    if gone:
        reasons = _why_dropped(graph, doc, ranked, [str(n["id"]) for n in gone])
        diff.dropped = [{"id": str(n["id"]), "title": str(n.get("title", "")), "reason": reasons[str(n["id"])]}
                        for n in gone]
    return diff


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _changed(
    graph: GraphReader, item: Item, now: dict[str, Any], was: dict[str, Any], has: dict[int, str],
) -> Entry | None:
    """The change of a node shown both times: the passages new to the reader that it shows now,
    and the rewrites of those the reader saw (the passage now at the place of one the note no
    longer has), shown or not; None when the reader has it all."""
    seen_then = {int(o): h for o, h in (was.get("passages") or {}).items()}
    old = set(seen_then.values())
    current = set(has.values())
    gone = [o for o, h in seen_then.items() if h not in current]
    rewrites = {o for o in gone if o in has and has[o] not in old}
    fresh = sorted({int(o) for o, h in now["passages"].items() if h not in old} | rewrites)
    meta_changed = now["meta"] != was.get("meta")
    if not now["passages"] and not was.get("passages"):
        # A node without passages (an empty body, a graph from before passages): its text decides.
        if now["text"] != was.get("text"):
            return Entry(item, CHANGED, None, item.text)
        return Entry(item, CHANGED, (), "") if meta_changed else None
    # Passages the reader saw that the note no longer has and that nothing took the place of:
    # the reader is told (it cannot see a removal).
    removed = len(gone) - len(rewrites)
    if not fresh:
        return Entry(item, CHANGED, (), "", removed=removed) if meta_changed or removed else None
    from ctx.assemble import focus

    pieces = _pieces(graph, item.cand)
    order = tuple(o for o in focus.priority(pieces) if o in set(fresh))
    text = focus.excerpt(pieces, fresh)
    return Entry(item, CHANGED, tuple(fresh), text, total=len(pieces), removed=removed, pieces=tuple(pieces),
                 order=order)


def _pieces(graph: GraphReader, c: Candidate) -> list[Any]:
    """``c``'s passages as a context shows them (``focus.Piece``: heading paths, relevance)."""
    from ctx.assemble import focus
    from ctx.passages import collapse_attachments

    if c.pieces:
        return list(c.pieces)
    rows = graph.passages_of([c.id]).get(c.id, [])
    return [focus.Piece(p.ord, p.heading, collapse_attachments(p.text), p.tokens, 0.0) for p in rows]


def _why_dropped(graph: GraphReader, doc: Document, ranked: list[Candidate], ids: list[str]) -> dict[str, str]:
    also = {i.cand.id for i in doc.also}
    candidates = {c.id: c for c in ranked}
    visible = graph.visible_ids(ids)
    out = {}
    for node_id in ids:
        c = candidates.get(node_id)
        if node_id in also:
            out[node_id] = "only listed now: no room for its text"
        elif c is not None:
            out[node_id] = c.reason or "no room left"
        elif node_id in visible:
            out[node_id] = "no longer among the candidates"
        else:
            out[node_id] = "no longer in the graph"
    return out


@dataclass(frozen=True)
class Shown:
    """What a diff shows: the nodes whose new or changed text it gives, the dropped-out nodes
    it names, the summaries it lists."""

    texts: frozenset[tuple[str, tuple[int, ...] | None]]  # (id, the changed passages shown; None: all)
    dropped: frozenset[str]
    also: frozenset[str]

    @staticmethod
    def of(diff: Diff) -> Shown:
        return Shown(
            frozenset((e.item.cand.id, e.passages if e.change == CHANGED else None) for e in diff.entries if e.whole),
            frozenset(d["id"] for d in diff.dropped),
            frozenset(i.cand.id for i in diff.also),
        )


def seen_manifest(now: dict[str, Any], before: dict[str, Any], diff: Diff, whole: Shown) -> dict[str, Any]:
    """The manifest of what a reader of ``before`` has seen after reading ``diff`` (which could
    show ``whole`` had there been room): ``now``, except that a changed node counts the passages
    the reader had and those the diff showed; a node whose new or changed text did not fit stays
    as the reader last saw it (or unseen); a dropped-out node not named stays; a summary not
    listed is not counted as seen. One cut for room is marked partial, so the next diff against
    it is worked out even at the same id."""
    shown = Shown.of(diff)
    earlier = {str(n.get("id")): n for n in before.get("nodes", []) if isinstance(n, dict)}
    given = {e.item.cand.id: e for e in diff.entries if e.whole}
    offered = {node_id for node_id, _ in whole.texts}
    nodes = []
    for node in now["nodes"]:
        seen_node = _node_seen(node, given.get(node["id"]), node["id"] in offered, earlier, diff)
        if seen_node is not None:
            nodes.append(seen_node)
    nodes += [earlier[i] for i in sorted(whole.dropped - shown.dropped) if i in earlier]
    also = [a for a in now["also"] if a["id"] not in whole.also - shown.also]
    seen = {**now, "nodes": nodes, "also": also}
    if shown != whole:
        seen["partial"] = True
    return seen


def _node_seen(
    node: dict[str, Any], entry: Entry | None, offered: bool, earlier: dict[str, Any], diff: Diff
) -> dict[str, Any] | None:
    """How the reader has seen one node of the new manifest after the diff (None: not at all)."""
    node_id = node["id"]
    if not offered:
        return node  # unchanged
    if entry is not None and entry.change == CHANGED and entry.passages is not None:
        passages = _passages_seen(node, earlier.get(node_id, {}).get("passages") or {},
                                  diff.current.get(node_id, {}), entry.passages)
        return {**node, "passages": dict(sorted(passages.items(), key=lambda kv: int(kv[0])))}
    if entry is not None:
        return node  # new, or changed as a whole, and shown
    return earlier.get(node_id)  # no room: as the reader last saw it


def _passages_seen(
    node: dict[str, Any], was: dict[str, Any], now_at: dict[int, Any], shown: Any
) -> dict[str, Any]:
    """A changed note's passages as the reader has them: those they had that the note still has,
    those the diff showed, and (as the reader last saw them) those rewritten that it had no room
    for yet."""
    had = set(was.values())
    passages = {o: h for o, h in node["passages"].items() if h in had}
    passages.update({
        o: h for o, h in was.items()
        if h not in set(now_at.values()) and now_at.get(int(o), h) not in had and int(o) not in shown
    })
    passages.update({str(o): now_at[o] for o in shown if o in now_at})
    return passages


# ---------------------------------------------------------------------------------------------
# Rendering, within the budget


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _label(doc: Document) -> str:
    return _clip(doc.label, 60)


def unchanged_text(doc: Document, since: str, version: int, used: int) -> str:
    """The one line (markdown) of a context that did not change."""
    return f"# Context diff: {_label(doc)}: unchanged since {since} (graph v{version}; {used}/{doc.budget} tokens)\n"


def _one_line(entry: Entry) -> str:
    c = entry.item.cand
    return f"- {c.title} (id: {c.id}; {entry.change}, no room for its text)"


def _counts_text(diff: Diff) -> str:
    counts = diff.counts()
    return (f"{counts['new']} new, {counts['changed']} changed, {counts['dropped']} dropped out,"
            f" {counts['unchanged']} unchanged")


def markdown_text(doc: Document, diff: Diff, used: int) -> str:
    if diff.unchanged:
        if diff.level >= 2:
            return f"unchanged since {diff.since} ({used}/{doc.budget} tokens)\n"
        return unchanged_text(doc, diff.since, diff.version, used)
    if diff.level >= 2:
        return f"({used}/{doc.budget} tokens) since {diff.since}, now {diff.context}: {_counts_text(diff)}\n"
    parts = ["\n".join(_markdown_head(doc, diff, used))]
    for change, title in ((NEW, "## New"), (CHANGED, "## Changed")):
        parts += _markdown_entries(doc, [e for e in diff.entries if e.change == change], title)
    if diff.more_entries:
        parts.append(f"- and {diff.more_entries} more new or changed node(s): no room")
    if diff.dropped or diff.more_dropped:
        lines = ["## Dropped out"]
        lines += [f"- {d['title']} (id: {d['id']}; {d['reason']})" for d in diff.dropped]
        if diff.more_dropped:
            lines.append(f"- and {diff.more_dropped} more")
        parts.append("\n".join(lines))
    if diff.also:
        lines = ["## Also related (new)"]
        lines += [markdown_summary_line(i.cand, doc.show_scores, doc.date_of(i.cand)) for i in diff.also]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _markdown_head(doc: Document, diff: Diff, used: int) -> list[str]:
    if diff.level == 1:
        return [f"# Context diff: {_clip(doc.label, 30)} ({used}/{doc.budget} tokens)",
                f"since {diff.since}, now {diff.context}: {_counts_text(diff)}"]
    head = [
        f"# Context diff: {_label(doc)}",
        f"since {diff.since} (graph v{diff.since_version if diff.since_version is not None else '?'}"
        + (f"; a {diff.since_format} context: other nodes fit its budget" if diff.since_format else "") + ")"
        f" · now {diff.context} (graph v{diff.version}) · tokens: {used}/{doc.budget}",
        _counts_text(diff),
    ]
    if doc.freshness:
        head.append(doc.freshness)
    return head


def _markdown_entries(doc: Document, entries: list[Entry], title: str) -> list[str]:
    """One change's section: each entry shown whole as a block, those without room as one line
    each, after them."""
    if not entries:
        return []
    layouts = {s.name: s.layout for s in doc.sections}
    parts, lines = [title], []
    for e in entries:
        if not e.whole:
            lines.append(_one_line(e))
            continue
        item, text, new = e.item, e.text, e.change == NEW
        if e.removed:
            text += ("\n\n" if text else "") + f"[{e.removed} passage(s) shown before: removed or rewritten]"
        parts.append(markdown_block(
            item.cand, item.variant if new else FULL, text, doc.show_scores, item.compact,
            layouts.get(item.cand.section or "", "list"), None, doc.show_metadata,
            item.outline_shown() if new else 0, doc.date_of(item.cand),
        ))
    if lines:
        parts.append("\n".join(lines))
    return parts


def json_section(diff: Diff) -> dict[str, Any]:
    if diff.level >= 3:
        return {"since": diff.since, "context": diff.context, "unchanged": diff.unchanged}
    if diff.level == 2:
        return {"since": diff.since, "context": diff.context, "unchanged": diff.unchanged, "counts": diff.counts()}
    return {
        "since": diff.since,
        "since_graph_version": diff.since_version,
        **({"since_format": diff.since_format} if diff.since_format else {}),
        "context": diff.context,
        "graph_version": diff.version,
        "unchanged": diff.unchanged,
        "counts": diff.counts(),
        "new": [e.item.cand.id for e in diff.entries if e.change == NEW],
        "changed": [
            {"id": e.item.cand.id, "passages": None if e.passages is None else list(e.passages),
             **({"removed": e.removed} if e.removed else {})}
            for e in diff.entries if e.change == CHANGED
        ],
        "dropped": diff.dropped,
        "more_dropped": diff.more_dropped,
        "more_entries": diff.more_entries,
        **({"also_related": [json_summary(i.cand) for i in diff.also]} if diff.level == 0 else {}),
    }


def json_text(doc: Document, diff: Diff, used: int) -> str:
    meta: dict[str, Any] = {"schema": SCHEMA_VERSION, "lens": doc.lens, "tokens": {"used": used, "budget": doc.budget}}
    if diff.level == 0:
        meta = {"schema": SCHEMA_VERSION, "topic": list(doc.topics), **meta, "found": True, "context": diff.context}
        if "freshness" in doc.meta:
            meta["freshness"] = doc.meta["freshness"]
    elif diff.level == 1:
        meta["context"] = diff.context
        if doc.freshness:
            meta["freshness"] = {"stale": True}
    nodes = []
    for e in diff.entries:
        item = e.item
        node = json_node(item.cand, item.variant if e.change == NEW else FULL, e.text if e.whole else "",
                         item.tokens if e.change == NEW and e.whole else 0, item.compact,
                         item.outline_shown() if e.change == NEW and e.whole else 0,
                         e.passages if e.change == NEW else None, doc.date_of(item.cand),
                         item.cores if e.change == NEW else ())
        node["change"] = e.change
        if e.change == CHANGED and e.passages:
            node["changed_passages"] = {"shown": list(e.passages), "total": e.total}
        if e.removed:
            node["removed_passages"] = e.removed
        if not e.whole:
            node["no_room"] = True
        nodes.append(node)
    return dumps({"meta": meta, "nodes": nodes, "diff": json_section(diff)}) + "\n"


def render(doc: Document, diff: Diff, used: int) -> str:
    return json_text(doc, diff, used) if doc.fmt == "json" else markdown_text(doc, diff, used)


def _shrink(diff: Diff) -> bool:
    """Give up the least valuable part of the diff; False when nothing is left to give."""
    if diff.also:
        diff.also.pop()
        return True
    if diff.dropped:
        diff.dropped.pop()
        diff.more_dropped += 1
        return True
    for entry in reversed(diff.entries):
        # The lowest-ranked entry gives up its least valuable changed passages first, then its
        # text (it stays as one line).
        if entry.whole and entry.trim():
            return True
        if entry.whole:
            entry.whole = False
            return True
    if diff.entries:
        diff.left_out.append(diff.entries.pop().change)
        diff.more_entries += 1
        return True
    if diff.level < 3:
        diff.level += 1
        return True
    return False


def fit(doc: Document, diff: Diff, counter: TokenCounter) -> tuple[str, int]:
    """The diff's text within ``doc.budget`` with a "used" figure that is its own true count."""
    dropped, also = list(diff.dropped), list(diff.also)
    while True:
        text, used = _exact(doc, diff, counter)
        if used <= doc.budget:
            break
        if not _shrink(diff):
            return text, used  # not reached: the smallest form is far below the smallest budget
    # Lines given up before a node's text went may fit once it did: take them back, in order.
    for line in dropped[len(diff.dropped):]:
        diff.dropped.append(line)
        diff.more_dropped -= 1
        again, n = _exact(doc, diff, counter)
        if n > doc.budget:
            diff.dropped.pop()
            diff.more_dropped += 1
            break
        text, used = again, n
    for item in also[len(diff.also):]:
        diff.also.append(item)
        again, n = _exact(doc, diff, counter)
        if n > doc.budget:
            diff.also.pop()
            break
        text, used = again, n
    return text, used


def _exact(doc: Document, diff: Diff, counter: TokenCounter) -> tuple[str, int]:
    used = doc.budget
    seen: list[int] = []
    for _ in range(8):
        text = render(doc, diff, used)
        n = counter.count(text)
        if n == used:
            return text, n
        seen.append(n)
        used = n
    for guess in sorted(set(seen)):
        for delta in (-2, -1, 0, 1, 2):
            text = render(doc, diff, guess + delta)
            if counter.count(text) == guess + delta:
                return text, guess + delta
    return text, counter.count(text)
