"""How to register `ctx mcp` with an agent: the JSON for MCP clients and the one-line command for
command-line agents, with absolute paths (a desktop client started outside the user's shell has
no PATH to find `ctx` by, and no current folder to find the graph from)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

SERVER_NAME = "ctx"


def ctx_executable() -> Path:
    """The absolute path of the running `ctx` script (not resolved through symlinks, so a
    pipx or Homebrew link keeps working across upgrades)."""
    invoked = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if invoked is not None and invoked.name in ("ctx", "ctx.exe") and invoked.exists():
        return invoked.absolute()
    beside_python = Path(sys.executable).parent / ("ctx.exe" if sys.platform == "win32" else "ctx")
    if beside_python.exists():
        return beside_python.absolute()
    found = shutil.which("ctx")
    return Path(found).absolute() if found else beside_python.absolute()


def server_args(db: Path | str, include_private: bool) -> list[str]:
    where = db if isinstance(db, str) else str(db.absolute())  # a URL as given
    return ["mcp", "--db", where, *(["--include-private"] if include_private else [])]


def client_config(db: Path | str, *, include_private: bool = False) -> dict[str, object]:
    """The ``mcpServers`` entry MCP clients (Claude Desktop, Cursor, ...) read from their JSON."""
    return {
        "mcpServers": {
            SERVER_NAME: {"command": str(ctx_executable()), "args": server_args(db, include_private)}
        }
    }


def command_line(db: Path | str, *, include_private: bool = False) -> str:
    """For agents that register a server by its command (Claude Code's `claude mcp add`)."""
    argv = [str(ctx_executable()), *server_args(db, include_private)]
    return f"claude mcp add {SERVER_NAME} -- " + " ".join(shlex.quote(a) for a in argv)


def setup_text(db: Path | str, *, include_private: bool = False) -> str:
    config = json.dumps(client_config(db, include_private=include_private), indent=2)
    return (
        "# MCP clients that read a JSON config (Claude Desktop's claude_desktop_config.json,\n"
        "# Cursor's mcp.json, ...): merge this into it.\n"
        f"{config}\n\n"
        "# Command-line agents that register a server by command (Claude Code):\n"
        f"{command_line(db, include_private=include_private)}\n"
    )
