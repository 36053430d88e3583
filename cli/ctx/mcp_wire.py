"""The Model Context Protocol over stdio, spoken by ctx itself: JSON-RPC 2.0, one message a line.

Why not the MCP SDK's server: importing it (pydantic models for every protocol revision, anyio,
starlette for the HTTP transports) cost ~0.9 s of CPU before the server could answer anything,
3-5 s of an agent's wait on this shared 2-core machine (bench/bench_mcp_startup.py). What a
tools-only stdio server has to say is small and fixed, so it is said here with the standard
library; the SDK's own client is what the tests talk to (tests/test_mcp*.py), in both eras.

Both protocol eras the SDK's clients speak are served, decided by the client's first request as
the SDK's server does:

- the handshake era (2024-11-05 to 2025-11-25): ``initialize`` negotiates a version (the client's
  when known, else the newest), then ``tools/list`` and ``tools/call``;
- the per-request envelope (2026-07-28): every request carries its protocol version and client
  capabilities in ``params._meta``; ``server/discover`` says what is served; every result carries
  ``resultType`` and the server's name in ``_meta``.

Tool calls run in threads apart from the reader (the application bounds how many at once), so a
slow `context` never holds up a `ping`, a listing or another call; responses are written whole,
one per line, under a lock. A call's thread, once its call is done, waits for the next one
(``_work``) rather than ending: on this 2-core machine with both cores busy a thread started for a
call waited ~3.6 ms for its first turn on a core (Linux places a new thread behind the runnable
ones), a waiting thread handed the call ~0.03 ms. Nothing else may write to stdout: it is the
protocol's channel, so ``sys.stdout`` is pointed at stderr while the server runs.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Mapping
from typing import IO, Any, Protocol



def _log_failure(what: str) -> None:
    """The traceback to stderr (the server's log); logging loads only when something failed."""
    import logging

    logging.getLogger("ctx.mcp").exception("%s failed", what)

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Listings a client may ask for whatever the server declared (some desktop clients do): empty.
EMPTY_LISTS = {"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}
CACHE_HINTS = {"ttlMs": 0, "cacheScope": "private"}  # results that must carry them in the envelope era
# Call threads kept waiting for a next call once theirs is done; one beyond these ends instead (a
# burst of concurrent calls leaves no crowd of idle threads). An agent's calls come one at a time
# or a few at once.
KEPT_CALL_THREADS = 4


class Application(Protocol):
    """What the server serves: a name, instructions for the model, and tools."""

    name: str
    version: str
    instructions: str

    def tool_list(self) -> list[dict[str, Any]]:
        """The tools as ``tools/list`` publishes them (name, title, description, inputSchema, ...)."""
        ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/call`` result (content, isError, _meta); tool errors are results, not raised.
        An application may also have ``reply_later()``, called on the call's thread before
        ``call_tool``, and ``after_reply()``, called there once the answer is written (or given up):
        work the caller need not wait for can wait until then. An application's ``ordered_tools``
        (a set of names) are called one at a time in the order their requests arrived, apart from
        the other calls: tools whose answers depend on the calls before them."""
        ...


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def wire(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def _unsupported(requested: Any, supported: tuple[str, ...], message: str) -> RpcError:
    data: dict[str, Any] = {"supported": list(supported)}
    if isinstance(requested, str):
        data["requested"] = requested
    return RpcError(UNSUPPORTED_PROTOCOL_VERSION, message, data)


def _has_envelope(params: Any) -> bool:
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return isinstance(meta, Mapping) and VERSION_KEY in meta


class StdioServer:
    """One client connection over a pair of byte streams (the process's stdin and stdout)."""

    def __init__(self, app: Application, reader: IO[bytes], writer: IO[bytes]) -> None:
        self.app = app
        self.reader = reader
        self.writer = writer
        self.era: str | None = None  # "handshake" or "envelope", set by the first request
        self.version: str | None = None  # the handshake era's negotiated version
        self._write_lock = threading.Lock()
        self._calls_lock = threading.Condition()
        self._running = 0  # tools/call requests received and not yet done with
        self._idle = 0  # call threads waiting for a call (``_work``), each owed one from ``_jobs``
        self._jobs: queue.SimpleQueue[tuple[Any, Any, bool] | None] = queue.SimpleQueue()
        self._cancelled: set[Any] = set()
        # The calls of ``app.ordered_tools``, in arrival order, for one thread of their own.
        self._lane: queue.SimpleQueue[tuple[Any, Any, bool] | None] | None = None

    # -- the loop ----------------------------------------------------------------------------

    def serve(self) -> None:
        """Answer messages until the client closes stdin, then let running calls finish."""
        for line in self.reader:
            if line.strip():
                self.receive(line)
        with self._calls_lock:
            self._calls_lock.wait_for(lambda: self._running == 0, timeout=30)
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._jobs.put(None)  # a waiting thread ends
        if self._lane is not None:
            self._lane.put(None)

    def receive(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.send({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}})
            return
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            ident = message.get("id") if isinstance(message, dict) else None
            self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}})
            return
        if "method" not in message and ("result" in message or "error" in message):
            return  # a response to a request we never send: nothing to do
        method = message.get("method")
        params = message.get("params")
        if not isinstance(method, str) or ("params" in message and not isinstance(params, (dict, list))):
            # JSON-RPC 2.0: a method is a string and params a structured value; a request that is
            # neither is still answered (a notification, having no id, is not).
            if "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"],
                           "error": {"code": INVALID_REQUEST, "message": "Invalid Request"}})
            return
        if "id" not in message:
            self.notification(method, params)
            return
        ident = message["id"]
        if self.era is None:
            self.era = "envelope" if method != "initialize" and _has_envelope(params) else "handshake"
        if method == "tools/call":
            # Checked here so a refusal is as quick as any other; the call itself runs apart.
            try:
                stamp = self.check_envelope(method, params)
            except RpcError as exc:
                self.send({"jsonrpc": "2.0", "id": ident, "error": exc.wire()})
                return
            if self._ordered(params):
                with self._calls_lock:
                    self._running += 1
                    if self._lane is None:
                        self._lane = queue.SimpleQueue()
                        threading.Thread(target=self._work_lane, args=(self._lane,), name="ctx-mcp-ordered",
                                         daemon=True).start()
                    self._lane.put((ident, params, stamp))
                return
            with self._calls_lock:
                self._running += 1
                waiting = self._idle > 0
                if waiting:
                    self._idle -= 1  # that thread takes this call
            if waiting:
                self._jobs.put((ident, params, stamp))
            else:
                threading.Thread(target=self._work, args=((ident, params, stamp),), name="ctx-mcp-call",
                                 daemon=True).start()
            return
        self.respond(ident, method, params)

    def respond(self, ident: Any, method: str, params: Any) -> None:
        try:
            stamp = self.check_envelope(method, params)
            result = self.handle(method, params if isinstance(params, Mapping) else {})
            self.send({"jsonrpc": "2.0", "id": ident, "result": self.finish(result, stamp)})
        except RpcError as exc:
            self.send({"jsonrpc": "2.0", "id": ident, "error": exc.wire()})
        except Exception:  # noqa: BLE001 - never a dead server; the traceback goes to stderr
            _log_failure(method)
            self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": INTERNAL_ERROR, "message": "Internal error"}})

    def _work(self, job: tuple[Any, Any, bool] | None) -> None:
        """A call thread: ``job``, then each call handed to it while it waits, until it is told to
        end (None) or is one more than ``KEPT_CALL_THREADS`` waiting."""
        while job is not None:
            try:
                self._call(*job)
            except BaseException:
                with self._calls_lock:  # the thread ends (the client went away mid-answer)
                    self._running -= 1
                    self._calls_lock.notify_all()
                raise
            with self._calls_lock:
                self._running -= 1
                keep = self._idle < KEPT_CALL_THREADS
                if keep:
                    self._idle += 1  # counted before it waits: ``receive`` may hand it a call now
                self._calls_lock.notify_all()
            if not keep:
                return
            job = self._jobs.get()

    def _ordered(self, params: Any) -> bool:
        """Whether this call is to one of the application's ``ordered_tools``."""
        name = params.get("name") if isinstance(params, Mapping) else None
        return isinstance(name, str) and name in getattr(self.app, "ordered_tools", ())

    def _work_lane(self, lane: queue.SimpleQueue[tuple[Any, Any, bool] | None]) -> None:
        """The ordered calls' thread: each in the order it arrived, until told to end (None)."""
        while (job := lane.get()) is not None:
            try:
                self._call(*job)
            finally:
                with self._calls_lock:
                    self._running -= 1
                    self._calls_lock.notify_all()

    def _call(self, ident: Any, params: Any, stamp: bool) -> None:
        try:
            arguments_of = params if isinstance(params, Mapping) else {}
            name = arguments_of.get("name")
            arguments = arguments_of.get("arguments")
            if arguments is None:
                arguments = {}
            if not isinstance(name, str) or not isinstance(arguments, Mapping):
                raise RpcError(INVALID_PARAMS, "tools/call needs a tool name and an arguments object")
            later = getattr(self.app, "reply_later", None)
            if later is not None:
                later()  # ``after_reply`` comes once the answer is written
            result = self.app.call_tool(name, dict(arguments))
            reply = {"jsonrpc": "2.0", "id": ident, "result": self.finish(result, stamp)}
        except RpcError as exc:
            reply = {"jsonrpc": "2.0", "id": ident, "error": exc.wire()}
        except Exception:  # noqa: BLE001 - the application answers tool errors itself; this is a bug
            _log_failure("tools/call")
            reply = {"jsonrpc": "2.0", "id": ident, "error": {"code": INTERNAL_ERROR, "message": "Internal error"}}
        try:
            if ident in self._cancelled:
                self._cancelled.discard(ident)  # the client gave up on it: no answer is expected
                return
            self.send(reply)
        finally:
            self._after_reply()

    def _after_reply(self) -> None:
        """The application's work that waits until a call's answer is out (``after_reply``)."""
        after = getattr(self.app, "after_reply", None)
        if after is None:
            return
        try:
            after()
        except Exception:  # noqa: BLE001 - never a dead server; the traceback goes to stderr
            _log_failure("after_reply")

    # -- what is said ------------------------------------------------------------------------

    def notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, Mapping):
            self._cancelled.add(params.get("requestId"))
        # notifications/initialized and the rest need nothing from a tools-only server.

    def check_envelope(self, method: str, params: Any) -> bool:
        """Refuse what the connection's era does not accept; True when results are stamped."""
        if self.era == "handshake":
            if method != "initialize" and _has_envelope(params):
                raise RpcError(
                    INVALID_REQUEST,
                    "this connection serves the handshake protocol era; requests carrying the 2026-07-28"
                    " envelope are not accepted on it",
                )
            return False
        if method == "initialize":
            raise _unsupported(
                params.get("protocolVersion") if isinstance(params, Mapping) else None,
                MODERN_VERSIONS,
                "connection is serving the 2026-07-28 protocol; the initialize handshake is not accepted",
            )
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        if not isinstance(meta, Mapping):
            raise RpcError(
                INVALID_PARAMS,
                f"params._meta must be an object carrying the required {VERSION_KEY!r} and {CAPABILITIES_KEY!r}"
                " envelope keys",
            )
        missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if key not in meta]
        if missing:
            raise RpcError(INVALID_PARAMS, f"params._meta is missing the required envelope key(s): {', '.join(missing)}")
        requested = meta[VERSION_KEY]
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, f"params._meta[{VERSION_KEY!r}] must be a string")
        if requested not in MODERN_VERSIONS:
            raise _unsupported(requested, MODERN_VERSIONS, "Unsupported protocol version")
        return True

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {"listChanged": False}}

    def server_info(self) -> dict[str, str]:
        return {"name": self.app.name, "version": self.app.version}

    def handle(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            requested = params.get("protocolVersion")
            self.version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            return {
                "protocolVersion": self.version,
                "capabilities": self.capabilities(),
                "serverInfo": self.server_info(),
                "instructions": self.app.instructions,
            }
        if method == "server/discover":
            return {
                **CACHE_HINTS,
                "supportedVersions": list(MODERN_VERSIONS),
                "capabilities": self.capabilities(),
                "instructions": self.app.instructions,
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            hints = CACHE_HINTS if self.era == "envelope" else {}
            return {**hints, "tools": self.app.tool_list()}
        if method in EMPTY_LISTS:
            return {EMPTY_LISTS[method]: []}
        if method == "logging/setLevel":
            return {}  # the server sends no log messages: any level is already honoured
        raise RpcError(METHOD_NOT_FOUND, "Method not found", method)

    def finish(self, result: dict[str, Any], stamp: bool) -> dict[str, Any]:
        """The envelope era's result fields: ``resultType`` and the server's name in ``_meta``."""
        if not stamp:
            return result
        meta = result.get("_meta")
        return {
            **result,
            "resultType": result.get("resultType", "complete"),
            "_meta": {**(meta if isinstance(meta, dict) else {}), SERVER_INFO_KEY: self.server_info()},
        }

    def send(self, message: dict[str, Any]) -> None:
        try:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in some text: escaped, still valid JSON
            data = json.dumps(message, separators=(",", ":")).encode("ascii")
        with self._write_lock:
            self.writer.write(data + b"\n")
            self.writer.flush()


def serve_stdio(app: Application) -> None:
    """Serve ``app`` on this process's stdin and stdout until the client closes the connection."""
    reader, writer = sys.stdin.buffer, sys.stdout.buffer
    # stdout carries the protocol alone: a stray print anywhere would break the client's reading.
    sys.stdout = sys.stderr
    try:
        StdioServer(app, reader, writer).serve()
    except BrokenPipeError:
        pass  # the client went away mid-answer: nothing left to tell it
