"""The `ctx` console script's first code: Ctrl-C while the CLI is still loading exits quietly.

Loading Typer, Rich and the commands takes most of the first ~100 ms of a run. A Ctrl-C in that
window used to print a Python traceback from the middle of an import. The handler below is set
as soon as the script imports this module (library users importing ``ctx`` never run it) and
handed back once the CLI is loaded, whose commands handle interrupts themselves (exit 130).
What comes before this module -- the interpreter's own start-up and ``site`` -- is Python's.

A `ctx build` or `ctx search` process also runs without the cyclic garbage collector. Loading the
modules and reading thousands of rows make millions of objects, and the collector walked them
again and again (~5% of a cold build at 1M nodes) to free almost nothing: these processes are
short and keep what they make until they exit. Reference counting still frees everything else.

`ctx build` and `ctx search` with plain arguments do not load the Typer app at all
(``commands.build_argv``, ``commands.search_argv``): Typer, Click and pydantic cost more than a
build of a small graph, and most of a search. And the methods ``@dataclass``
writes come compiled from the cache folder (``dataclass_code``) rather than compiled again.
Every such device is listed in ``ctx.speedups``; ``CTX_PLAIN=1`` turns them all off.
"""

from __future__ import annotations

import gc
import os
import sys

# The C module itself: ``signal`` imports enum and functools first (~20 ms on a loaded machine),
# which is the very window this module is here to close.
import _signal

EXIT_INTERRUPTED = 130


def _interrupted_while_loading(signum: int, frame: object) -> None:
    os.write(2, b"ctx: interrupted\n")
    os._exit(EXIT_INTERRUPTED)  # nothing is open yet: no file, no transaction to close


# CTX_PLAIN=1 (ctx.speedups; read here without importing anything): Python's own handling.
_PLAIN = os.environ.get("CTX_PLAIN", "") not in ("", "0")
_previous = None if _PLAIN else _signal.signal(_signal.SIGINT, _interrupted_while_loading)


def _restore() -> None:
    """Python's (or the caller's) Ctrl-C handling again, once the CLI is loaded."""
    if _previous is not None:
        _signal.signal(_signal.SIGINT, _previous)

# Only for annotations, and after the handler: importing typing is itself part of the window.
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402


def _leave(code: int) -> None:
    """End the process without tearing the interpreter down.

    Finalising frees every module and object one by one -- the tokenizer's 100k-entry tables
    among them -- about 30 ms of a 200 ms build that has already printed everything. The build
    closed its graph; what remains is flushing the streams and any exit handlers. Should a flush
    fail (the reader went away), the ordinary exit reports it as it always has.
    """
    if _PLAIN:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - let the normal exit path deal with it
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    os._exit(code)


def _run_fast(run: Callable[[dict[str, Any]], int], options: dict[str, Any]) -> None:
    from ctx import dataclass_code

    try:
        code = run(options)
    finally:
        # The command is over: its graph is closed and its output written. A Ctrl-C from here
        # to the exit (saving the code cache, flushing, exit handlers) ends the process as
        # quietly as one during loading, not with a traceback from these last lines.
        if not _PLAIN:
            _signal.signal(_signal.SIGINT, _interrupted_while_loading)
        dataclass_code.save()
    _leave(code)


def main() -> None:
    if not _PLAIN:
        gc.disable()  # on again below for every command but a plain build or search
    from ctx import dataclass_code
    from ctx.commands.build_argv import parse_build

    dataclass_code.install()
    fast = parse_build(sys.argv[1:])
    if fast is not None:
        try:
            # The build's own modules load while a Ctrl-C still exits quietly.
            import ctx.assemble.pipeline  # noqa: F401
            import ctx.commands.build_run  # noqa: F401
            import ctx.config  # noqa: F401
            import ctx.freshness  # noqa: F401
            import ctx.graph  # noqa: F401
            import ctx.tokens  # noqa: F401
        finally:
            _restore()  # run_build reports an interrupt itself
        from ctx.commands.build_argv import run_parsed

        _run_fast(run_parsed, fast)
    from ctx.commands.search_argv import parse_search

    found = parse_search(sys.argv[1:])
    if found is not None:
        try:
            import ctx.commands.search_run  # noqa: F401
            import ctx.graph  # noqa: F401
            import ctx.inspection  # noqa: F401
        finally:
            _restore()
        from ctx.commands.search_argv import run_parsed as run_search

        _run_fast(run_search, found)
    from ctx.commands.mcp_argv import parse_mcp

    if not _PLAIN:
        gc.enable()  # a long-lived server, or a command that may make much garbage
    serving = parse_mcp(sys.argv[1:])
    if serving is not None:
        _restore()  # the server answers an interrupt itself (it ends with the client)
        from ctx.commands.mcp_argv import serve

        _run_fast(serve, serving)
    try:
        from ctx.app import main as run
    finally:
        _restore()
    try:
        run()
    except KeyboardInterrupt:
        # Outside any command's own handling (argument parsing, a command without it).
        sys.stderr.write("ctx: interrupted\n")
        sys.exit(EXIT_INTERRUPTED)
    finally:
        dataclass_code.save()
