"""What shell completion offers for values the CLI knows: lens names and fixed choices.

Typer completes enum options by itself; options checked by the core (``--format`` on build and
search, which the MCP tools share) and lens names (any file in the lens folders) need a list.
Completion runs in the shell's process on every Tab: nothing here imports more than a listing.
"""

from __future__ import annotations

from collections.abc import Callable


def lens_names(incomplete: str) -> list[str]:
    """Every lens a name can reach (built-in, user, project) and ``auto``, by prefix."""
    from ctx.assemble import AUTO_LENS
    from ctx.lenses.lookup import list_lenses

    names = dict.fromkeys([AUTO_LENS, *(entry.name for entry in list_lenses() if not entry.shadowed)])
    return [name for name in names if name.startswith(incomplete)]


def values(*choices: str) -> Callable[[str], list[str]]:
    """A completer offering ``choices`` (in their order) that start with what was typed."""

    def complete(incomplete: str) -> list[str]:
        return [choice for choice in choices if choice.startswith(incomplete)]

    return complete
