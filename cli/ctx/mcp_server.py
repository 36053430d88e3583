"""`ctx mcp`: the CLI's answers as Model Context Protocol tools, for AI agents.

The tools are thin clients of the same core calls the CLI makes, so `context` returns the very text
`ctx build` prints for the same arguments and graph state. The server process lives as long as the
agent's session: it keeps the DB connection and the tokenizer loaded between calls, and checks the
database on every call so that an import made meanwhile (even one that replaced the file) is seen.

The protocol is spoken by ``ctx.mcp_wire`` with the standard library, not by the MCP SDK, whose
import alone cost more than the whole first answer now does; importing this module is cheap too
(the assembler loads when a tool first needs it), so `ctx --help` never pays for it.
"""

from __future__ import annotations

import os
import re
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctx.errors import CtxError
from ctx.options import SearchRequest

if TYPE_CHECKING:
    from ctx.graph import Graph


def _log() -> Any:
    """The server's log (stderr), loaded only when there is something to say."""
    import logging

    return logging.getLogger("ctx.mcp")


SERVER_NAME = "ctx"

INSTRUCTIONS = """\
ctx serves the user's personal knowledge graph (notes, outlines, claims and the links between them).
To get background on a topic, call `context` first: one call finds the topic, follows its links and
returns the most relevant notes packed into an exact token budget. Use `search` to find the right
title or id when a topic is not found or is ambiguous, `show` to read one note in full with its
edges, and `lenses` to see which task-specific lenses `context` can use."""

CONTEXT_DESCRIPTION = """\
Assemble the most relevant context about a topic from the user's knowledge graph, packed into an
exact token budget. Use this first whenever you need background on a person, project, concept or
note before answering or acting: one call replaces search -> read -> follow links -> trim.

How it works: `topic` is resolved to graph nodes (a node id, else an exact title or alias, else the
best full-text matches). The graph is walked outward up to `depth` hops along the edges the `lens`
cares about; every node found is scored (closeness to the topic, similarity, recency) and the best
are packed into `max_tokens`. The budget covers the whole returned text, counted with tiktoken in
`encoding`; it is never exceeded. Nodes that do not fit whole are shortened or listed as one-line
summaries with their ids (call `show` on an id to read one in full).

The result is exactly the text `ctx build` prints for the same arguments: markdown by default (a
header with tokens used/budget, then sections of nodes with id, type, tags, distance, score, path
and content), or one JSON document with `format: "json"` (meta.tokens, nodes[] with id, title,
distance, score, tokens, source_path, and the omitted nodes with the reason).

Examples:
  {"topic": "Project Apollo"}
  {"topic": ["Project Apollo", "Jane Doe"], "lens": "planning", "max_tokens": 8000}
  {"topic": "projects/apollo.md", "depth": 1, "max_tokens": 1500, "format": "json"}

Tips: the default budget (4000) suits a quick briefing; raise it for detail, lower `depth` for a
tighter focus. Under 500 tokens the context is summary-first (one line per related node). If the
topic is not found, the call fails: use `search` to find the right title or id. Notices the CLI
would print on stderr (a depth capped by the lens, a summary-only budget) come as a second text
block after the context, outside the budget."""

SEARCH_DESCRIPTION = """\
Full-text search (BM25) over the titles, aliases and text of the nodes in the user's knowledge
graph. Use it to find the exact title or id of something before calling `context` or `show`, or to
answer "which notes mention X". All words must match first, else any word; a trailing * matches a
prefix. A query of only function words ("how do I") is an error saying so: add a word that names
what you look for. Returns ranked hits, one per line with title, [id] and score, and a
snippet with the matched words in [brackets]. Same results as `ctx search`.

Examples:
  {"query": "launch checklist"}
  {"query": "apoll*", "limit": 5}"""

SHOW_DESCRIPTION = """\
One node of the user's knowledge graph in full: its text, type, tags, aliases, fields, dates and
every edge (links, backlinks, parent, children, ...) with the title and id at the other end. Use it
to read one note exactly, or to look at its direct neighbours; use `context` instead when you want
the note together with its surroundings within a token budget. `node` is a node id or an exact
title or alias (as returned by `search` or listed by `context`). Same output as `ctx show`.

Examples:
  {"node": "Project Apollo"}
  {"node": "projects/apollo.md", "format": "json"}"""

LENSES_DESCRIPTION = """\
The lenses `context` can use. A lens tunes context assembly to a kind of task: which edge types to
follow and in which direction, how far, how to weigh them, which fields to keep and how to order
the output (built-in: {builtins}; users and projects can add their own). Call with no arguments to
list them, each with its description, or with `name` to read one lens's full definition.

Examples:
  {{}}
  {{"name": "planning"}}"""


# --------------------------------------------------------------------------------------------
# What a tool call returns, before the MCP layer wraps it


@dataclass
class ToolReply:
    """The text a tool returns, whether it is an error, and side notes that are not part of it."""

    text: str
    is_error: bool = False
    warnings: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)  # further text blocks, e.g. --explain's table


def cli_error_text(message: str) -> str:
    """The message exactly as the CLI writes it to stderr: every line prefixed ``ctx: error:``."""
    lines = message.splitlines() or ["failed"]
    return "\n".join(f"ctx: error: {line}" for line in lines)


def error_reply(exc: BaseException) -> ToolReply:
    if isinstance(exc, CtxError):
        return ToolReply(cli_error_text(str(exc)), is_error=True)
    from ctx.store.errors import as_ctx_error

    stored = as_ctx_error(exc)
    if stored is not None:  # the database refused (a lock held too long, a read-only graph)
        return ToolReply(cli_error_text(str(stored)), is_error=True)
    # The CLI's last line of defence says the same; the traceback goes to the server's log.
    _log().exception("tool call failed")
    return ToolReply(
        cli_error_text(
            f"internal error: {exc.__class__.__name__}: {exc} (set CTX_DEBUG=1 for details)"
        ),
        is_error=True,
    )


# --------------------------------------------------------------------------------------------
# The graph, kept open between calls


class GraphHandle:
    """One long-lived connection to the graph (``CtxTools`` keeps a few, and reopens them all when
    the file underneath is replaced: ``FileMark``)."""

    def __init__(self, path: Path | str, *, include_private: bool = False, family: object = None) -> None:
        self.path = path
        self.include_private = include_private
        # Shared by the pool's connections to one file (``GraphStore.share_warm_state``): a call
        # finds what calls on the other connections kept, not only what its own kept.
        self.family = family
        self._graph: "Graph | None" = None

    def graph(self) -> "Graph":
        from ctx.graph import Graph

        if self._graph is None:
            self._graph = Graph.open(self.path, include_private=self.include_private)
            if self.family is not None:
                self._graph.store.share_warm_state(self.family)
        return self._graph

    @property
    def is_open(self) -> bool:
        return self._graph is not None

    def abandon(self) -> None:
        """Close writing nothing more to the graph file (see ``CtxTools._follow_the_file``)."""
        if self._graph is not None and not self._graph.store.abandon():
            self._graph.close()  # this Python cannot skip the checkpoint: closed as before
        self._graph = None

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()
        self._graph = None


@dataclass(frozen=True)
class FileMark:
    """The graph file on disk (stat only) and the graph it holds.

    SQLite in WAL mode shows a reader every commit made by other processes, so an incremental
    `ctx import` is seen on the next query without reopening. Two ways of replacing the file are
    not, and connections left on the old state read a mix of two graphs (a search answering
    "no matches", a build failing with "vtable constructor failed: nodes_fts"):

    - a new file moved or created in its place (``os.replace``, delete and import again): another
      inode, which the old connections would go on reading;
    - ``cp`` over it: the same inode with other bytes, while ``graph.db-wal`` still holds pages
      of the old graph, which SQLite reads in preference to the file's own. The file's bytes
      change with every checkpoint too, so when they changed, the graph's ``birth`` mark is read
      from the file alone (``file_birth``): another graph's mark, another graph.
    """

    inode: tuple[int, int]
    content: tuple[int, int]  # the file's size and mtime
    birth: str | None  # the graph's birth mark as the file alone holds it (None: it does not say)

    @classmethod
    def of(cls, path: Path, *, was: "FileMark | None" = None) -> "FileMark | None":
        """How ``path`` looks now; the birth mark is read again only when its bytes changed."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        inode, content = (st.st_dev, st.st_ino), (st.st_size, st.st_mtime_ns)
        if was is not None and (inode, content) == (was.inode, was.content):
            return was
        from ctx.store import file_birth

        return cls(inode, content, file_birth(path))

    def replaced_by(self, now: "FileMark") -> bool:
        """Whether ``now`` is another graph than this one (not the same graph, updated)."""
        if now.inode != self.inode:
            return True
        return self.birth is not None and now.birth is not None and now.birth != self.birth


# --------------------------------------------------------------------------------------------
# The tools, free of MCP so they can be read and tested on their own


# Calls served at the same time, each on a connection of its own. The SDK runs every tool call in
# a worker thread and answers requests concurrently; one connection shared under a lock made
# every agent wait behind the slowest call (issue 24, M5). SQLite in WAL mode lets readers run
# side by side; past this many, calls wait for a free connection.
MAX_CONCURRENT_CALLS = 4


class CtxTools:
    """The four tools over one graph. Up to MAX_CONCURRENT_CALLS calls run at once, each with a
    connection of its own from a small pool (no connection is used by two calls at a time).

    Before a call takes a connection, the graph file is looked at (``FileMark``). When it was
    replaced, every connection of the pool is closed -- once the calls still running on the old
    graph have finished -- before any is opened on the new one: the last connection to close on
    the old graph is the one that removes its ``-wal`` and ``-shm`` files, which must happen before
    a connection to the new graph opens them, not after. Kept warm state goes with them."""

    def __init__(self, db_path: Path | str, *, include_private: bool = False) -> None:
        # Whether private nodes may be shown is the user's choice when registering the server,
        # never the agent's: no tool has an argument for it. It is the graph handle's property.
        # What a warm process keeps is shared by the pool's connections (one family), until the
        # file is replaced and they are all let go (a new family for the new file's).
        self._family = _Family()
        self.handle = GraphHandle(db_path, include_private=include_private, family=self._family)
        self.include_private = include_private
        self._free: list[GraphHandle] = [self.handle]
        self._all: list[GraphHandle] = [self.handle]
        self._pool = threading.Condition()
        self._in_use = 0
        self._mark: FileMark | None = None  # the file the open connections were opened on
        self._wal: tuple[int, int] | None = None  # the write-ahead log they use (its inode)
        self._blocked: str | None = None  # why the replaced file cannot be opened yet
        self._stale = False  # a call met pages that do not fit together: reopen everything
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_CALLS)
        self._current = threading.local()
        self._owing = 0  # calls answered whose work after the answer is not done (``settle_owed``)

    def _checkout(self) -> GraphHandle:
        self._slots.acquire()
        with self._pool:
            try:
                self._follow_the_file()
            except BaseException:
                self._slots.release()
                raise
            self._in_use += 1
            if self.handle in self._free:
                # The first connection whenever it is free (the one the warm-up used): what a
                # warm process keeps is shared by the pool's connections, but not by one that
                # wrote to the graph itself (``GraphReader.warm_state``).
                self._free.remove(self.handle)
                return self.handle
            if self._free:
                return self._free.pop()
            handle = GraphHandle(self.handle.path, include_private=self.include_private, family=self._family)
            self._all.append(handle)
            return handle

    def _follow_the_file(self) -> None:
        """Close every connection if the graph file is gone or was replaced (under ``_pool``).

        The connections are abandoned, not closed: the last close would copy the WAL -- which,
        under a file copied over with ``cp``, holds the old graph's pages -- into the new file.
        That WAL (and its shared memory) is then removed, unless another process still has the
        graph open and reads through it: then calls fail in one line until it has let go."""
        path = self.handle.path
        if isinstance(path, str):
            return  # a database URL: the server shows every commit; nothing to reopen
        while True:
            now = FileMark.of(path, was=self._mark)
            if self._blocked is None and not any(handle.is_open for handle in self._all):
                self._mark, self._wal, self._stale = now, None, False  # nothing open to mix up
                return
            replaced = self._blocked is not None or (
                now is not None and self._mark is not None and self._mark.replaced_by(now)
            )
            if not replaced and not self._stale and self._still_the_same(now):
                return
            if self._in_use > 0:
                self._pool.wait()  # calls still reading the old graph finish first
                continue
            self._let_go(path, now, replaced)
            _forget_warm_state()
            self._family = _Family()  # the connections opened next read another graph
            for handle in self._all:
                handle.family = self._family
            self._mark, self._stale, self._wal, self._blocked = FileMark.of(path), False, None, None
            return

    def _still_the_same(self, now: FileMark | None) -> bool:
        """The same graph, perhaps updated: remember how it looks now. False when there is no
        mark to compare (the file is gone, or was never seen)."""
        if now is None or self._mark is None:
            return False
        if now.birth is None and self._mark.birth is not None:
            now = FileMark(now.inode, now.content, self._mark.birth)  # unread: still the same
        self._mark = now
        return True

    def _let_go(self, path: Path, now: FileMark | None, replaced: bool) -> None:
        """Give up every connection (no call is running). A gone file's are closed. Otherwise
        they are abandoned: after a replacement, so that nothing is copied into the new file;
        and when a call met pages that did not fit and the file cannot say it was replaced (a
        graph without a birth mark), so that the graph is opened afresh."""
        if now is None:
            for handle in self._all:  # the file is gone: nothing of it to keep apart
                handle.close()
            return
        for handle in self._all:
            handle.abandon()
        if replaced:
            self._discard_old_wal(path, now)

    def _discard_old_wal(self, path: Path, now: FileMark) -> None:
        """Remove the replaced graph's write-ahead log, or refuse calls (``_blocked``) while
        another process still reads through it."""
        same_file = self._blocked is None and self._mark is not None and now.inode == self._mark.inode
        old_wal = self._wal is not None and _inode(f"{path}-wal") == self._wal
        if self._blocked is not None or same_file or old_wal:
            from ctx.store import discard_stale_wal

            if not discard_stale_wal(path):
                self._blocked = (
                    f"{path} was replaced while another process had the graph open: its write-ahead"
                    f" log ({path}-wal) still holds the old graph's pages, which would mix into the new"
                    " one. Call again once the other ctx processes (ctx watch, another ctx mcp) have ended"
                )
                raise CtxError(self._blocked)

    def _checkin(self, handle: GraphHandle) -> None:
        with self._pool:
            if self._wal is None and handle.is_open and not isinstance(handle.path, str):
                self._wal = _inode(f"{handle.path}-wal")  # the log the open connections use
            self._in_use -= 1
            self._free.append(handle)
            self._pool.notify_all()
        self._slots.release()

    def _guarded(self, work: Any, *args: Any) -> ToolReply:
        broken = _not_unicode(args)
        if broken:
            # JSON may carry a lone surrogate ("\ud800"); no text of the graph can match one, and
            # SQLite cannot take it: a tool error, never an internal one.
            return error_reply(CtxError(f"{broken} is not valid Unicode text (a lone surrogate)"))
        from ctx.assemble import warm
        from ctx.store.errors import is_mixed_pages

        # What an earlier call left for after its answer is done before this call reads (this
        # thread's own first, then any other's): a call sees every earlier one's manifest.
        self.settle_owed()
        with self._pool:
            self._pool.wait_for(lambda: self._owing == 0)
        replying = getattr(self._current, "replying", False)
        for attempt in (1, 2):
            try:
                handle = self._checkout()
            except CtxError as exc:  # the file was replaced and cannot be opened yet
                return error_reply(exc)
            self._current.handle = handle
            later: list[Any] = []
            try:
                from ctx.config import settings_read_once

                with settings_read_once(), warm.once_answered(later) if replying else nullcontext():
                    reply = work(*args)  # edited between two calls, settings are seen by the second
            except Exception as exc:  # noqa: BLE001 - a tool error, never a dead server
                self._current.handle = None
                self._checkin(handle)
                warm.after_call(failed=True)  # its traceback's cycles collected at once
                if attempt == 1 and is_mixed_pages(exc):
                    # Pages of two graphs met: once more on connections opened afresh, which
                    # read the file as it is now. A file that is really damaged fails again.
                    with self._pool:
                        self._stale = True
                    continue
                return error_reply(exc)
            self._current.handle = None
            if replying:
                # Served over the wire: what the build left for after its answer (its manifest,
                # the answer kept for a repeat) and the collection run once the answer is written
                # (``settle_owed``), on this connection, which stays checked out until then.
                with self._pool:
                    self._owing += 1
                self._current.owed = (handle, later)
            else:
                self._checkin(handle)
                warm.after_call()  # what the call kept frozen
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def settle_owed(self) -> None:
        """What this thread's last call left for once its answer was written (``_guarded`` when
        ``replying``): the build's deferred work on its connection, the connection checked in,
        then the collection (``warm.after_call``)."""
        owed = getattr(self._current, "owed", None)
        if owed is None:
            return
        self._current.owed = None
        handle, later = owed
        from ctx.assemble import warm

        try:
            if later:
                from ctx.config import settings_read_once

                self._current.handle = handle
                with settings_read_once():
                    for job in later:
                        try:
                            job()
                        except Exception:  # noqa: BLE001 - the answer is out: the server goes on
                            _log().exception("work after a call's answer failed")
        finally:
            self._current.handle = None
            self._checkin(handle)
            with self._pool:
                self._owing -= 1
                self._pool.notify_all()
            warm.after_call()

    def close(self, wait: float = 30.0) -> None:
        """Close the connections once no call and no warm-up is using one (up to ``wait``
        seconds). Closing a connection while another thread reads through it crashes the process:
        SQLite frees what that read is using. A client that closes stdin right after its last
        message ends the server while the warm-up may still be reading every node's details. A
        connection still in use after ``wait`` is left open for the process's exit to release."""
        self.settle_owed()  # this thread's last call, if nothing said its answer was out
        with self._pool:
            self._pool.wait_for(lambda: self._in_use == 0, timeout=wait)
            for handle in self._all:
                if handle in self._free:
                    handle.close()

    def warm_up(self) -> None:
        """Load what the first `context` call would otherwise wait for (tokenizer, assembler)."""
        try:
            handle = self._checkout()
        except CtxError:
            return  # calls will say why
        try:
            from ctx.tokens import DEFAULT_ENCODING, get_encoding

            get_encoding(DEFAULT_ENCODING)
            import ctx.assemble  # noqa: F401
            if isinstance(handle.path, str) or handle.path.exists():
                graph = handle.graph()
                from ctx.assemble import warm

                # What walks read of every node (a graph of up to warm.MAX_DETAILS nodes), so
                # that their edges are read without the nodes' rows.
                warm.preload(graph.reader)
        except Exception as exc:  # noqa: BLE001 - warming is best effort; calls report errors
            _log().info("warm-up skipped: %s", exc)
        finally:
            self._checkin(handle)

    def _fresh_graph(self) -> "tuple[Graph, list[str]]":
        """The graph, after the opt-in check that re-imports changed sources (as `ctx build`)."""
        from ctx.freshness import refresh_if_enabled

        handle = getattr(self._current, "handle", None) or self.handle
        graph = handle.graph()
        return graph, refresh_if_enabled(graph.store)

    # -- context -------------------------------------------------------------------------------

    def context(self, topic: str | list[str], **options: Any) -> ToolReply:
        """``ctx build``: ``options`` are BuildRequest's fields (lens, depth, max_tokens, ...);
        lens, max_tokens and encoding left out (or None) come from the user's configuration."""
        return self._guarded(self._context, topic, options)

    def _context(self, topic: str | list[str], options: dict[str, Any]) -> ToolReply:
        from ctx.assemble import AUTO_LENS, BuildRequest
        from ctx.assemble import build_defaults
        from ctx.lenses import load_named_lens

        if "include_private" in options:
            raise CtxError("include_private is the server's setting (ctx mcp --include-private), not a tool argument")
        lens = options.pop("lens", None)
        # A lens the agent names comes from the lens folders, never a path: no argument may make
        # the server read a file of the agent's choosing. The user's configured default may be
        # any lens the CLI accepts.
        # "auto" names no file: the build chooses between built-in lenses from the topics.
        named = AUTO_LENS if lens == AUTO_LENS else load_named_lens(lens) if lens is not None else None
        # One read of the user's settings for all three (each read looks for the config files).
        configured, options["max_tokens"], options["encoding"] = build_defaults(
            None, options.get("max_tokens"), options.get("encoding")
        )
        chosen = named if named is not None else configured
        graph, refreshed = self._fresh_graph()
        topics = (topic,) if isinstance(topic, str) else tuple(topic)
        from ctx.commands.waiting import waits_shown

        # The graph's warm state read once for the build (after the sync above, which may
        # change it), not at each of the ~25 places that key or check what is kept.
        one_state = getattr(graph.store.reader(), "one_state", None)
        with waits_shown(), one_state() if one_state is not None else nullcontext():
            result = graph.build(BuildRequest(topics=topics, lens=chosen, **options))
        result.warnings[:0] = refreshed
        if not result.found:
            # A tool error, as the CLI's exit code 3 is; its first block is still exactly the
            # (empty) context the CLI prints, and the second the CLI's error line, which tells
            # the agent to look the topic up with `search`.
            return ToolReply(
                result.text,
                is_error=True,
                warnings=result.warnings,
                extra=[cli_error_text(not_found_message(topics))],
            )
        extra: list[str] = []
        if options.get("explain") and result.candidates:
            from ctx.assemble.explain import explain_caption, explain_text

            extra.append(explain_text(result.candidates) + explain_caption(result.meta))
        return ToolReply(result.text, warnings=list(result.warnings), extra=extra)

    # -- search --------------------------------------------------------------------------------

    def search(self, query: str, limit: int = SearchRequest.limit, format: str = SearchRequest.format) -> ToolReply:
        return self._guarded(self._search, query, limit, format)

    def _search(self, query: str, limit: int, format: str) -> ToolReply:
        from ctx.inspection import search_report

        graph, refreshed = self._fresh_graph()
        report = search_report(graph, query, limit=limit, fmt=format)
        return ToolReply(report.text, warnings=refreshed + report.warnings)

    # -- show ----------------------------------------------------------------------------------

    def show(self, node: str, format: str = "text") -> ToolReply:
        return self._guarded(self._show, node, format)

    def _show(self, node: str, format: str) -> ToolReply:
        from ctx.inspection import show_report

        graph, refreshed = self._fresh_graph()
        report = show_report(graph, node, fmt=format)
        return ToolReply(report.text, warnings=refreshed + report.warnings)

    # -- lenses --------------------------------------------------------------------------------

    def lenses(self, name: str | None = None) -> ToolReply:
        return self._guarded(self._lenses, name)

    def _lenses(self, name: str | None) -> ToolReply:
        from ctx.errors import LensError
        from ctx.lenses import find_named_lens, list_lenses, load_lens_file, read_lens_text

        if name:
            # Exactly `ctx lens show NAME`: the file as written, whose comments explain its choices.
            # Only a name from the lens folders, never a path (see `context`).
            source, path = find_named_lens(name)
            load_lens_file(path, name=path.stem, source=source)  # a broken lens reports its problems
            return ToolReply(f"# {path} ({source})\n" + read_lens_text(path).rstrip("\n") + "\n")
        # Unlike `ctx lens list`, whole descriptions: they are what a model chooses a lens by.
        lines = []
        for entry in list_lenses():
            if entry.shadowed:
                continue
            try:
                lens = load_lens_file(entry.path, name=entry.name, source=entry.source)
                about = " ".join(lens.description.split())
            except LensError:
                about = "(invalid: `ctx lens validate` says why)"
            lines.append(f"- {entry.name} ({entry.source}): {about}".rstrip())
        return ToolReply("\n".join(lines) + "\n" if lines else "no lenses found\n")


def _not_unicode(values: Any) -> str | None:
    """A short description of the first text in ``values`` (nested in lists, tuples, dicts) that
    cannot be encoded as UTF-8, or None."""
    if isinstance(values, str):
        try:
            values.encode("utf-8")
        except UnicodeEncodeError:
            return repr(values.encode("utf-8", "backslashreplace").decode("ascii", "replace")[:40])
        return None
    items = values.values() if isinstance(values, dict) else values if isinstance(values, (list, tuple)) else ()
    for item in items:
        found = _not_unicode(item)
        if found:
            return found
    return None


def _inode(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


class _Family:
    """The identity the pool's connections to one graph file share (``GraphStore.share_warm_state``)."""

    __slots__ = ("__weakref__",)


def _forget_warm_state() -> None:
    """Drop what a warm process kept (ctx.assemble.warm) about a graph file that was replaced."""
    import sys

    for name in ("ctx.assemble.warm", "ctx.assemble.kept_rankings"):
        module = sys.modules.get(name)
        if module is not None:
            module.forget()


def not_found_message(topics: tuple[str, ...]) -> str:
    return "no node matches " + ", ".join(repr(t) for t in topics)


# --------------------------------------------------------------------------------------------
# The MCP layer: the tools' declarations, their arguments checked like the CLI's flags, and the
# results as MCP carries them. The protocol itself is ctx.mcp_wire (no SDK, no pydantic: start-up).

_REQUIRED: Any = object()


@dataclass(frozen=True)
class Param:
    """One tool argument: what its input schema publishes and what a call is checked against."""

    name: str
    kind: type  # str, int or bool
    description: str
    default: Any = _REQUIRED
    many: bool = False  # a list of ``kind`` is taken as well as one value
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    run: Any  # (CtxTools, {param name: checked value}) -> ToolReply
    annotations: tuple[tuple[str, bool], ...] = (
        ("readOnlyHint", True), ("idempotentHint", True), ("openWorldHint", False),
    )


def request_params(request_type: type) -> tuple[Param, ...]:
    """A tool's arguments from a request type's declared options (``ctx.options``): names, types,
    descriptions and defaults; bounds and choices are published in the schema but checked by the
    core, so a bad value fails with the CLI's own message."""
    from ctx.options import options_of

    params = []
    for opt in options_of(request_type):
        if opt.mcp_name is None:
            continue
        spec = opt.spec
        params.append(Param(
            opt.mcp_name, spec.kind, opt.mcp_help, default=_REQUIRED if opt.required else opt.face_default,
            many=spec.many, minimum=spec.minimum, maximum=spec.maximum, choices=spec.choices,
        ))
    return tuple(params)


def request_values(request_type: type, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments under the request's field names."""
    from ctx.options import options_of

    return {opt.name: arguments[opt.mcp_name] for opt in options_of(request_type) if opt.mcp_name in arguments}


def _run_context(tools: CtxTools, arguments: dict[str, Any]) -> ToolReply:
    from ctx.assemble import BuildRequest

    values = request_values(BuildRequest, arguments)
    topic = values.pop("topics")
    return tools.context(topic, **values)


def _run_search(tools: CtxTools, arguments: dict[str, Any]) -> ToolReply:
    values = request_values(SearchRequest, arguments)
    return tools.search(values["query"], values.get("limit", SearchRequest.limit), values.get("format", SearchRequest.format))


def tool_specs() -> tuple[ToolSpec, ...]:
    """`context`, `search`, `show` and `lenses`. `context` and `search` take their requests'
    declared options: an option added to BuildRequest or SearchRequest is a tool argument too."""
    from ctx.assemble import BuildRequest
    from ctx.lenses import builtin_lens_names

    return (
        ToolSpec("context", "Build context from the knowledge graph", CONTEXT_DESCRIPTION,
                 request_params(BuildRequest), _run_context),
        ToolSpec("search", "Search the knowledge graph", SEARCH_DESCRIPTION, request_params(SearchRequest), _run_search),
        ToolSpec("show", "Show one node", SHOW_DESCRIPTION, (
            Param("node", str, "Node id, or its exact title or alias."),
            Param("format", str, '"text" (default) or "json".', default="text"),
        ), lambda tools, args: tools.show(args["node"], args.get("format", "text"))),
        ToolSpec("lenses", "List or show lenses", LENSES_DESCRIPTION.format(builtins=", ".join(builtin_lens_names())), (
            Param("name", str, "A lens to show in full; omit to list all lenses.", default=None),
        ), lambda tools, args: tools.lenses(args.get("name"))),
        *session_tool_specs(),
    )


def session_tool_specs() -> tuple[ToolSpec, ...]:
    """`context_map` and `expand`, under one session budget (``ctx.mcp_session``)."""
    from ctx import mcp_session
    from ctx.assemble.session import ExpandRequest, MapRequest

    def runner(request_type: type, answer: Any) -> Any:
        def run(tools: CtxTools, arguments: dict[str, Any]) -> ToolReply:
            def work(values: dict[str, Any]) -> ToolReply:
                text, warnings = answer(tools, values)
                return ToolReply(text, warnings=warnings)

            return tools._guarded(work, request_values(request_type, arguments))

        return run

    # Not idempotent: each call is charged to the session, and a passage goes out once.
    charged = (("readOnlyHint", True), ("idempotentHint", False), ("openWorldHint", False))
    return (
        ToolSpec("context_map", "Map a topic's candidates (session budget)", mcp_session.MAP_DESCRIPTION,
                 request_params(MapRequest), runner(MapRequest, mcp_session.context_map), annotations=charged),
        ToolSpec("expand", "Expand ids to text (session budget)", mcp_session.EXPAND_DESCRIPTION,
                 request_params(ExpandRequest), runner(ExpandRequest, mcp_session.expand), annotations=charged),
    )


_JSON_TYPES = {str: "string", int: "integer", bool: "boolean", float: "number"}


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments, in the form pydantic gives the same signature (what
    the MCP SDK published before; tests/test_mcp_schema.py holds the two equal)."""
    properties: dict[str, Any] = {}
    for param in spec.params:
        kind: dict[str, Any] = {"type": _JSON_TYPES[param.kind]}
        if param.many:
            shape: dict[str, Any] = {"anyOf": [kind, {"items": kind, "type": "array"}]}
        elif param.default is None:
            shape = {"anyOf": [kind, {"type": "null"}]}
        else:
            shape = dict(kind)
        if not param.required:
            shape["default"] = param.default
        shape["description"] = param.description
        if param.minimum is not None:
            shape["minimum"] = param.minimum
        if param.maximum is not None:
            shape["maximum"] = param.maximum
        if param.choices:
            shape["enum"] = list(param.choices)
        shape["title"] = param.name.replace("_", " ").title()
        properties[param.name] = shape
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [param.name for param in spec.params if param.required]
    if required:
        schema["required"] = required
    schema["title"] = f"{spec.name}Arguments"
    return schema


class ArgumentError(Exception):
    """A tool call's arguments refused, in the CLI's words."""


_KIND_WORDS = {str: "a string", int: "an integer", bool: "true or false", float: "a number"}
_BOOL_WORDS = {"0": False, "off": False, "f": False, "false": False, "n": False, "no": False,
               "1": True, "on": True, "t": True, "true": True, "y": True, "yes": True}
_INTEGER = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0*)?")


def _coerce(kind: type, value: Any) -> Any:
    """``value`` as ``kind`` the way the SDK's argument models took it (pydantic's lax mode: an
    integer may come as 5, 5.0 or "5", a flag as true or "yes"); raises ValueError otherwise."""
    if kind is str:
        if isinstance(value, str):
            return value
    elif kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in _BOOL_WORDS:
            return _BOOL_WORDS[value.lower()]
    elif kind is int:
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return int(value.strip().partition(".")[0].replace("_", ""))
    raise ValueError(kind)


def _shown_kind(value: Any) -> str:
    if value is None:
        return "null"
    for kind, words in ((bool, "a boolean"), (str, "a string"), (int, "an integer"), (float, "a number"),
                        (list, "a list"), (dict, "an object")):
        if isinstance(value, kind):
            return words
    return type(value).__name__


def check_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked and converted, or ArgumentError naming every one that is
    unknown, missing or of the wrong type -- never echoing a value beyond its type."""
    known = [param.name for param in spec.params]
    unknown = sorted(str(key) for key in arguments if key not in known)
    if unknown:
        listed = ", ".join(repr(_clip_text(key)) for key in unknown[:3])
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        raise ArgumentError(f"{spec.name}: unknown argument {listed}{more} (it takes: {', '.join(known) or 'none'})")
    values: dict[str, Any] = {}
    problems: list[str] = []
    for param in spec.params:
        if param.name not in arguments:
            if param.required:
                problems.append(f"{spec.name} needs {param.name!r}")
            continue
        value = arguments[param.name]
        try:
            values[param.name] = _converted(param, value)
        except ValueError:
            problems.append(f"{param.name} must be {_wanted(param, value)}, not {_shown_kind(value)}")
    if problems:
        raise ArgumentError("; ".join(problems))
    return values


def _converted(param: Param, value: Any) -> Any:
    """One argument's value of its parameter's kind (a list of them where it takes many);
    ValueError when it cannot be."""
    if value is None and param.default is None:
        return None
    if param.many and isinstance(value, list):
        return [_coerce(param.kind, item) for item in value]
    return _coerce(param.kind, value)


def _wanted(param: Param, value: Any) -> str:
    """What a parameter takes, in words, for the error on a value it cannot take."""
    if param.many and isinstance(value, list):
        return f"a list of {_KIND_WORDS[param.kind].split(' ', 1)[1]}s"
    return _KIND_WORDS[param.kind] + (" or a list" if param.many else "")


def as_result(reply: ToolReply) -> dict[str, Any]:
    """A ``tools/call`` result. The first block is the CLI's stdout alone, byte for byte (and
    within the budget). What the CLI writes to stderr follows in blocks of its own: warnings (a
    capped depth, a summary-only budget), then the --explain table. Warnings also travel in
    ``_meta``."""
    blocks = [{"type": "text", "text": reply.text}]
    if reply.warnings and not reply.is_error:
        blocks.append({"type": "text", "text": "".join(f"ctx: warning: {line}\n" for line in reply.warnings)})
    blocks += [{"type": "text", "text": text} for text in reply.extra]
    result: dict[str, Any] = {"content": blocks, "isError": reply.is_error}
    if reply.warnings:
        result["_meta"] = {"ctx/warnings": list(reply.warnings)}
    return result


class CtxApplication:
    """What `ctx mcp` serves over ``ctx.mcp_wire``: the tools of ``tool_specs`` over one graph."""

    name = SERVER_NAME
    instructions = INSTRUCTIONS
    # The session tools (``ctx.mcp_session``): each answer is charged to the session and an
    # `expand` names what earlier answers sent, so they are answered in the order they arrive
    # (a client may send a map and an expand without waiting for the map's answer).
    ordered_tools = frozenset({"context_map", "expand"})

    def __init__(self, tools: CtxTools) -> None:
        from ctx import __version__

        self.version = __version__
        self.tools = tools
        self._specs: dict[str, ToolSpec] | None = None
        self._listing: list[dict[str, Any]] | None = None
        self._lock = threading.Lock()

    def specs(self) -> dict[str, ToolSpec]:
        with self._lock:
            if self._specs is None:
                self._specs = {spec.name: spec for spec in tool_specs()}
            return self._specs

    def tool_list(self) -> list[dict[str, Any]]:
        if self._listing is None:
            self._listing = [
                {"name": spec.name, "title": spec.title, "description": spec.description,
                 "inputSchema": input_schema(spec), "annotations": dict(spec.annotations)}
                for spec in self.specs().values()
            ]
        return self._listing

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            spec = self.specs().get(name)
            if spec is None:
                return as_result(ToolReply(
                    cli_error_text(f"unknown tool {_clip_text(name)!r} (tools: {', '.join(self.specs())})"),
                    is_error=True,
                ))
            try:
                values = check_arguments(spec, arguments)
            except ArgumentError as exc:
                return as_result(ToolReply(cli_error_text(str(exc)), is_error=True))
            return as_result(spec.run(self.tools, values))
        finally:
            self.tools._current.replying = False  # set for one call (``reply_later``)

    def reply_later(self) -> None:
        """The caller (``mcp_wire``) will call ``after_reply`` once this thread's next call is
        answered: what that call can leave until then waits (``CtxTools._guarded``): the
        collection of its objects (~2.5 ms for a new 100k note at depth 3, nothing freed in any
        call measured), its manifest and the answer kept for a repeat (~1.5 ms), paid while the
        client reads the answer."""
        self.tools._current.replying = True

    def after_reply(self) -> None:
        """Once a ``tools/call`` answer is written (or given up): what the call left for then,
        on the call's own thread (``CtxTools.settle_owed``)."""
        self.tools.settle_owed()


def _clip_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run_stdio(db_path: Path | str, *, include_private: bool = False) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    import faulthandler

    from ctx.assemble import warm
    from ctx.mcp_wire import serve_stdio

    # A long-lived process with threads over C code (SQLite, the tokenizer): should it ever die
    # of a fatal signal, its log (stderr) names every thread's line instead of nothing.
    faulthandler.enable()
    tools = CtxTools(db_path, include_private=include_private)
    # A session answers many calls: keep candidate pools and token counts between them, under
    # the graph's state (ctx.assemble.warm).
    warm.enable()
    # Warm up beside the handshake: the client's first `context` call then finds the tokenizer
    # and the assembler loaded instead of paying for them itself.
    # Calls that come meanwhile share the interpreter with it (``warm.warming``); then the
    # garbage collector is tuned for a process holding that much (``warm.settle``).
    def warm_up() -> None:
        with warm.warming():
            tools.warm_up()

    threading.Thread(target=warm_up, name="ctx-warm-up", daemon=True).start()
    try:
        serve_stdio(CtxApplication(tools))
    finally:
        tools.close()
