"""`ctx mcp`: the CLI's answers as Model Context Protocol tools, for AI agents.

The tools are thin clients of the same core calls the CLI makes, so `context` returns the very text
`ctx build` prints for the same arguments and graph state. The server process lives as long as the
agent's session: it keeps the DB connection and the tokenizer loaded between calls, and checks the
database on every call so that an import made meanwhile (even one that replaced the file) is seen.

Importing this module is cheap on purpose: the MCP SDK and the assembler load only when the server
starts or a tool first needs them, so `ctx --help` never pays for them.
"""

# No `from __future__ import annotations` here: the SDK reads the tool functions' annotations at
# registration, and those functions are closures whose names (Field, ...) only exist locally.
import inspect
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ctx.errors import CtxError, NoGraphError
from ctx.options import SearchRequest

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ctx.graph import Graph

log = logging.getLogger("ctx.mcp")

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
answer "which notes mention X". Any text is accepted: all words must match first, else any word;
a trailing * matches a prefix. Returns ranked hits, one per line with title, [id] and score, and a
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
    log.exception("tool call failed")
    return ToolReply(
        cli_error_text(
            f"internal error: {exc.__class__.__name__}: {exc} (set CTX_DEBUG=1 for details)"
        ),
        is_error=True,
    )


# --------------------------------------------------------------------------------------------
# The graph, kept open between calls


class GraphHandle:
    """One long-lived connection to the graph, reopened when the file underneath is replaced.

    SQLite in WAL mode shows a reader every commit made by other processes, so an incremental
    `ctx import` is visible on the next query without reopening (the assembler keeps no state
    between calls that could go stale). A file that was deleted and created again (an import into
    a fresh file, a restore from backup) is a different inode: the old connection would go on
    reading the unlinked file, so every call compares the inode and reopens when it changed.
    """

    def __init__(self, path: Path | str, *, include_private: bool = False) -> None:
        self.path = path
        self.include_private = include_private
        self._graph: "Graph | None" = None
        self._identity: tuple[int, int] | None = None

    def _file_identity(self) -> tuple[int, int] | None:
        if isinstance(self.path, str):
            return (0, 0)  # a database URL: the server shows every commit; nothing to reopen
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino)

    def graph(self) -> "Graph":
        from ctx.graph import Graph

        identity = self._file_identity()
        if identity is None:
            self.close()
            raise NoGraphError(self.path)
        if self._graph is None or identity != self._identity:
            self.close()
            self._graph = Graph.open(self.path, include_private=self.include_private)
            self._identity = identity
        return self._graph

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()
        self._graph = None
        self._identity = None


# --------------------------------------------------------------------------------------------
# The tools, free of MCP so they can be read and tested on their own


# Calls served at the same time, each on a connection of its own. The SDK runs every tool call in
# a worker thread and answers requests concurrently; one connection shared under a lock made
# every agent wait behind the slowest call (issue 24, M5). SQLite in WAL mode lets readers run
# side by side; past this many, calls wait for a free connection.
MAX_CONCURRENT_CALLS = 4


class CtxTools:
    """The four tools over one graph. Up to MAX_CONCURRENT_CALLS calls run at once, each with a
    connection of its own from a small pool (no connection is used by two calls at a time)."""

    def __init__(self, db_path: Path | str, *, include_private: bool = False) -> None:
        # Whether private nodes may be shown is the user's choice when registering the server,
        # never the agent's: no tool has an argument for it. It is the graph handle's property.
        self.handle = GraphHandle(db_path, include_private=include_private)
        self.include_private = include_private
        self._free: list[GraphHandle] = [self.handle]
        self._all: list[GraphHandle] = [self.handle]
        self._pool_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_CALLS)
        self._current = threading.local()

    def _checkout(self) -> GraphHandle:
        self._slots.acquire()
        with self._pool_lock:
            if self._free:
                return self._free.pop()
            handle = GraphHandle(self.handle.path, include_private=self.include_private)
            self._all.append(handle)
            return handle

    def _checkin(self, handle: GraphHandle) -> None:
        with self._pool_lock:
            self._free.append(handle)
        self._slots.release()

    def _guarded(self, work: Any, *args: Any) -> ToolReply:
        broken = _not_unicode(args)
        if broken:
            # JSON may carry a lone surrogate ("\ud800"); no text of the graph can match one, and
            # SQLite cannot take it: a tool error, never an internal one.
            return error_reply(CtxError(f"{broken} is not valid Unicode text (a lone surrogate)"))
        handle = self._checkout()
        self._current.handle = handle
        try:
            return work(*args)
        except Exception as exc:  # noqa: BLE001 - a tool error, never a dead server
            return error_reply(exc)
        finally:
            self._current.handle = None
            self._checkin(handle)

    def close(self) -> None:
        with self._pool_lock:
            for handle in self._all:
                handle.close()

    def warm_up(self) -> None:
        """Load what the first `context` call would otherwise wait for (tokenizer, assembler)."""
        handle = self._checkout()
        try:
            from ctx.tokens import DEFAULT_ENCODING, get_encoding

            get_encoding(DEFAULT_ENCODING)
            import ctx.assemble  # noqa: F401
            if isinstance(handle.path, str) or handle.path.exists():
                handle.graph()
        except Exception as exc:  # noqa: BLE001 - warming is best effort; calls report errors
            log.info("warm-up skipped: %s", exc)
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
        chosen = (
            AUTO_LENS if lens == AUTO_LENS else load_named_lens(lens) if lens is not None else build_defaults()[0]
        )
        _, options["max_tokens"], options["encoding"] = build_defaults(
            None, options.get("max_tokens"), options.get("encoding")
        )
        graph, refreshed = self._fresh_graph()
        topics = (topic,) if isinstance(topic, str) else tuple(topic)
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
            from ctx.assemble.render import explain_caption, explain_text

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


def not_found_message(topics: tuple[str, ...]) -> str:
    return "no node matches " + ", ".join(repr(t) for t in topics)


# --------------------------------------------------------------------------------------------
# The MCP layer


def build_server(tools: "CtxTools") -> "MCPServer":
    """An MCP server exposing `context`, `search`, `show` and `lenses` as ``tools`` answers them."""
    from mcp.server.mcpserver import MCPServer
    from mcp_types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import Field

    from ctx import __version__
    from ctx.assemble import BuildRequest
    from ctx.lenses import builtin_lens_names

    server = strict_server_class(MCPServer)(
        name=SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    def as_result(reply: ToolReply) -> CallToolResult:
        # The first block is the CLI's stdout alone, byte for byte (and within the budget). What
        # the CLI writes to stderr follows in blocks of its own: warnings (a capped depth, a
        # summary-only budget), then the --explain table. Warnings also travel in _meta.
        blocks: list[Any] = [TextContent(type="text", text=reply.text)]
        if reply.warnings and not reply.is_error:
            notices = "".join(f"ctx: warning: {line}\n" for line in reply.warnings)
            blocks.append(TextContent(type="text", text=notices))
        blocks += [TextContent(type="text", text=text) for text in reply.extra]
        # ``meta`` is the field's name (``_meta`` its JSON alias); passed by name, as pydantic allows.
        extras: dict[str, Any] = {"meta": {"ctx/warnings": reply.warnings} if reply.warnings else None}
        return CallToolResult(content=blocks, is_error=reply.is_error, **extras)

    # `context` and `search` take their requests' declared options (ctx.options): an option added
    # to BuildRequest or SearchRequest is a tool argument too, with no edit here.
    def context(**arguments: Any) -> CallToolResult:
        values = request_values(BuildRequest, arguments)
        topic = values.pop("topics")
        return as_result(tools.context(topic, **values))

    def search(**arguments: Any) -> CallToolResult:
        values = request_values(SearchRequest, arguments)
        return as_result(tools.search(values["query"], values["limit"], values["format"]))

    declare_tool(context, BuildRequest)
    declare_tool(search, SearchRequest)

    def show(
        node: Annotated[str, Field(description="Node id, or its exact title or alias.")],
        format: Annotated[str, Field(description='"text" (default) or "json".')] = "text",
    ) -> CallToolResult:
        return as_result(tools.show(node, format))

    def lenses(
        name: Annotated[
            str | None, Field(description="A lens to show in full; omit to list all lenses.")
        ] = None,
    ) -> CallToolResult:
        return as_result(tools.lenses(name))

    for fn, description, title in (
        (context, CONTEXT_DESCRIPTION, "Build context from the knowledge graph"),
        (search, SEARCH_DESCRIPTION, "Search the knowledge graph"),
        (show, SHOW_DESCRIPTION, "Show one node"),
        (lenses, LENSES_DESCRIPTION.format(builtins=", ".join(builtin_lens_names())), "List or show lenses"),
    ):
        server.add_tool(
            fn,
            title=title,
            description=description,
            annotations=read_only,
            structured_output=False,
        )
    return server


def strict_server_class(base: type) -> type:
    """``base`` (the SDK's MCPServer) checking tool arguments the way the CLI checks flags: an
    unknown argument is refused, and one of the wrong type or a missing one is a one-line
    ``ctx: error:`` naming the argument, instead of the SDK ignoring it or answering pydantic's
    text (with its URL)."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import CallToolResult, TextContent
    from pydantic import ValidationError

    def refuse(message: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=cli_error_text(message))], is_error=True)

    class StrictServer(base):  # type: ignore[misc]
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            schema = self._tool_input_schema(name)
            if schema is not None:
                known = list(schema.get("properties", {}))
                unknown = sorted(str(key) for key in arguments if key not in known)
                if unknown:
                    listed = ", ".join(repr(_clip_text(key)) for key in unknown[:3])
                    more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
                    return refuse(f"{name}: unknown argument {listed}{more} (it takes: {', '.join(known) or 'none'})")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    return refuse(argument_error(name, exc.__cause__.errors()))
                raise

    return StrictServer


_KINDS = {"int": "an integer", "string": "a string", "bool": "true or false", "list": "a list", "float": "a number"}


def argument_error(tool: str, errors: list[Any]) -> str:
    """pydantic's validation errors as one line in the CLI's words: which argument, what was wrong,
    never the rejected value itself (the caller's data) beyond its type."""
    by_argument: dict[str, list[Any]] = {}
    for err in errors:
        loc = err.get("loc") or ("?",)
        by_argument.setdefault(str(loc[0]), []).append(err)
    parts = []
    for argument, errs in by_argument.items():
        kinds = [err.get("type", "") for err in errs]
        if "missing" in kinds or "missing_argument" in kinds:
            parts.append(f"{tool} needs {argument!r}")
            continue
        wanted = []
        for kind in kinds:
            for prefix, words in _KINDS.items():
                if kind.startswith(prefix) and words not in wanted:
                    wanted.append(words)
        got = type(errs[0].get("input")).__name__
        got = {"str": "a string", "int": "an integer", "float": "a number", "bool": "a boolean", "list": "a list",
               "dict": "an object", "NoneType": "null"}.get(got, got)
        if wanted:
            parts.append(f"{argument} must be {' or '.join(wanted)}, not {got}")
        else:
            parts.append(f"{argument}: {str(errs[0].get('msg', 'invalid value')).splitlines()[0]}")
    return "; ".join(parts)


def _clip_text(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mcp_parameters(request_type: type) -> list[inspect.Parameter]:
    """A tool's parameters from a request type's declared options: names, types, descriptions
    and defaults; bounds and choices are published in the schema but checked by the core, so a
    bad value fails with the CLI's own message."""
    from pydantic import Field

    from ctx.options import options_of

    parameters = []
    for opt in options_of(request_type):
        name = opt.mcp_name
        if name is None:
            continue
        spec = opt.spec
        kind: Any = spec.kind | list[spec.kind] if spec.many else spec.kind  # type: ignore[name-defined]
        default = inspect.Parameter.empty if opt.required else opt.face_default
        if default is None:
            kind = kind | None
        extra: dict[str, Any] = {}
        if spec.minimum is not None:
            extra["minimum"] = spec.minimum
        if spec.maximum is not None:
            extra["maximum"] = spec.maximum
        if spec.choices:
            extra["enum"] = list(spec.choices)
        info = Field(description=opt.mcp_help, json_schema_extra=extra or None)
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, info], default=default))
    return parameters


def request_values(request_type: type, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments under the request's field names."""
    from ctx.options import options_of

    return {opt.name: arguments[opt.mcp_name] for opt in options_of(request_type) if opt.mcp_name in arguments}


def declare_tool(function: Any, request_type: type) -> None:
    from mcp_types import CallToolResult

    parameters = mcp_parameters(request_type)
    function.__signature__ = inspect.Signature(parameters, return_annotation=CallToolResult)
    function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": CallToolResult}


def run_stdio(db_path: Path | str, *, include_private: bool = False) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    from ctx.assemble import warm

    tools = CtxTools(db_path, include_private=include_private)
    server = build_server(tools)
    # A session answers many calls: keep candidate pools and token counts between them, under
    # the graph's state (ctx.assemble.warm).
    warm.enable()
    # Warm up beside the handshake: the client's first `context` call then finds the tokenizer
    # and the assembler loaded instead of paying for them itself.
    threading.Thread(target=tools.warm_up, name="ctx-warm-up", daemon=True).start()
    server.run("stdio")
