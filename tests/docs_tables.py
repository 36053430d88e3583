"""Tables in the README that are generated from the code, not written by hand.

``python tests/docs_tables.py`` prints them; ``tests/test_docs.py`` fails when the README's copy
differs, with the table to paste in its message.
"""

from __future__ import annotations

import re

COMMANDS_START = "<!-- commands: generated from the CLI's help by tests/docs_tables.py; tests/test_docs.py checks it -->"
COMMANDS_END = "<!-- /commands -->"


def command_table() -> str:
    """One row per command in the CLI's order, with the first line of its help; a group's
    subcommands follow it (the group has a row only when it runs something by itself)."""
    import typer

    from ctx.app import app

    rows = ["| command | what it does |", "|---|---|"]

    def add(name: str, command: object) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands is None or getattr(command, "invoke_without_command", False):
            summary = (getattr(command, "help", None) or "").strip().splitlines()[0]
            rows.append(f"| `{name}` | {summary} |")
        for sub_name, sub in (subcommands or {}).items():
            add(f"{name} {sub_name}", sub)

    for name, command in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        add(f"ctx {name}", command)
    return "\n".join(rows)


def between(text: str, start: str, end: str) -> str:
    match = re.search(re.escape(start) + r"\n(.*?)\n" + re.escape(end), text, flags=re.S)
    assert match, f"markers {start!r} ... {end!r} not found"
    return match.group(1)


if __name__ == "__main__":
    print(command_table())
