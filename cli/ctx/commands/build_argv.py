"""`ctx build` with plain arguments, read and run without loading Typer (see ``ctx.entry``).

Loading Typer, Click and (Typer 0.29 and later) pydantic for argument handling costs more than a
build of a small graph itself. `ctx build` is what agents and scripts run again and again, so
when its arguments use only the options below, in the spellings below, they are read here and
the same ``run_build`` the Typer command calls does the work. Anything else -- help, another
command, an unknown or malformed option, a value Typer would refuse, shell completion -- goes to
the Typer app, which then parses, validates and reports it exactly as it always has.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Options of the graph handle, which every reading command takes after its name.
GRAPH_VALUE_OPTIONS = {"--db": "db"}
GRAPH_FLAGS = {"--include-private": ("include_private", True), "--plain": ("plain", True)}
# Options of the root command that may stand before `build`.
ROOT_VALUE_OPTIONS = {"--db": "db"}
ROOT_FLAGS = {"--plain": ("plain", True)}

_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class Spellings:
    """How a command's options are written, derived from its request type's declarations."""

    values: dict[str, str]  # --option VALUE -> parameter name
    flags: dict[str, tuple[str, bool]]  # --flag -> (parameter name, value)
    bounds: dict[str, tuple[int | None, int | None]]  # integer parameter -> (minimum, maximum)
    defaults: dict[str, Any]  # what a parameter is when not given (None: the config file decides)
    argument: str  # the positional parameter's name


def spellings(request_type: type) -> Spellings:
    from ctx.options import options_of

    values = dict(GRAPH_VALUE_OPTIONS)
    flags = dict(GRAPH_FLAGS)
    bounds: dict[str, tuple[int | None, int | None]] = {}
    defaults: dict[str, Any] = {"include_private": False}
    argument = ""
    for opt in options_of(request_type):
        spec = opt.spec
        if spec.argument:
            argument = opt.name
            continue
        defaults[opt.name] = opt.face_default
        if spec.kind is bool:
            flags[spec.flags[0]] = (opt.name, True)
            if len(spec.flags) > 1:
                flags[spec.flags[1]] = (opt.name, False)
            continue
        values.update(dict.fromkeys(spec.flags, opt.name))
        if spec.kind is int:
            bounds[opt.name] = (spec.minimum, spec.maximum)
    return Spellings(values, flags, bounds, defaults, argument)


def parse_build(argv: list[str]) -> dict[str, Any] | None:
    """``run_build``'s keyword arguments for ``argv`` (without the program name), or None when
    anything about it is not plainly a `ctx build` these rules read the way Typer would."""
    from ctx.assemble import BuildRequest

    spelled = spellings(BuildRequest)
    read = read_command(argv, "build", spelled)
    if read is None:
        return None
    options, topics = read
    if not topics:
        return None
    return {spelled.argument: tuple(topics), **spelled.defaults, **options}


def read_command(argv: list[str], command: str, spelled: Spellings) -> tuple[dict[str, Any], list[str]] | None:
    """The options and arguments of `ctx <command>` in ``argv``, integers converted and ``db`` and
    ``plain`` settled with the root's options and $CTX_DB; None when Typer must read ``argv``."""
    from ctx import speedups

    if os.environ.get("CTX_NO_FAST_PATH") or speedups.plain() or any(name.startswith("_CTX_COMPLETE") for name in os.environ):
        return None
    root: dict[str, Any] = {}
    at = _read_options(argv, 0, ROOT_VALUE_OPTIONS, ROOT_FLAGS, root)
    if at is None or at >= len(argv) or argv[at] != command:
        return None
    options: dict[str, Any] = {}
    arguments: list[str] = []
    if _read_options(argv, at + 1, spelled.values, spelled.flags, options, topics=arguments) is None:
        return None
    if not _numbers(options, spelled.bounds):
        return None  # Typer's usage error
    env = os.environ.get("CTX_DB")
    if env is not None and not env:
        return None  # an empty $CTX_DB: leave its reading to Click
    # Click converts every --db it sees (both flags and the variable, for the root and for the
    # command) and refuses an existing file it cannot read as a usage error.
    if any(path is not None and not _readable_or_absent(path) for path in (env, root.get("db"), options.get("db"))):
        return None
    db = options.get("db", root.get("db"))
    if db is None:
        db = env
    if db is not None and not db:
        return None
    options["db"] = Path(db) if db is not None else None
    options["plain"] = bool(options.get("plain") or root.get("plain"))
    return options, arguments


def _numbers(options: dict[str, Any], bounds: dict[str, tuple[int | None, int | None]]) -> bool:
    """Convert the integer options in place; False when one is not a number within its bounds."""
    for name, (least, most) in bounds.items():
        if name in options:
            if not _DIGITS.fullmatch(options[name]):
                return False
            number = int(options[name])
            if (least is not None and number < least) or (most is not None and number > most):
                return False
            options[name] = number
    return True


def _readable_or_absent(path: str) -> bool:
    try:
        os.stat(path)
    except (OSError, ValueError):
        return True
    return os.access(path, os.R_OK)


def _read_options(
    argv: list[str],
    at: int,
    values: dict[str, str],
    flags: dict[str, tuple[str, bool]],
    into: dict[str, Any],
    *,
    topics: list[str] | None = None,
) -> int | None:
    """Read options from ``argv[at:]`` into ``into``; return where reading stopped, or None when
    something is not understood. Arguments go to ``topics``; without it, the first one stops the
    reading (the root's options end at the subcommand's name)."""
    while at < len(argv):
        token = argv[at]
        if token == "--" and topics is not None:
            topics.extend(argv[at + 1 :])
            return len(argv)
        if token == "-":
            return None
        if not token.startswith("-"):
            if topics is None:
                return at  # the subcommand's name
            topics.append(token)
            at += 1
            continue
        name, equals, attached = token.partition("=")
        if name in flags and not equals:
            key, value = flags[name]
            into[key] = value
            at += 1
        elif name in values and name.startswith("--") and equals:
            into[values[name]] = attached
            at += 1
        elif token in values and at + 1 < len(argv) and not argv[at + 1].startswith("-"):
            into[values[token]] = argv[at + 1]
            at += 2
        else:
            return None
    return at


def run_parsed(options: dict[str, Any]) -> int:
    """Run `ctx build` with ``parse_build``'s result; the exit code, errors reported as Typer's are."""
    from ctx.commands.build_run import run_build
    from ctx.commands.console import exit_code_for

    try:
        return run_build(**options)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported as the CLI always does
        return exit_code_for(exc)


def fast_build(argv: list[str]) -> int | None:
    """The exit code of `ctx build` run here, or None when the Typer app must handle ``argv``."""
    options = parse_build(argv)
    return None if options is None else run_parsed(options)
