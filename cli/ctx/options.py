"""Each command option declared once, on its request type's field.

A request type (``BuildRequest``, ``SearchRequest``) is a frozen dataclass whose fields are
declared with ``option(...)``: name and Python type come from the field, the rest (command-line
spellings, help, bounds, choices, the config-file key that gives its default) from here. Every
face is derived from those declarations:

- the Typer command's parameters (``ctx.commands.declared.typer_signature``),
- the fast-path argv reader (``ctx.commands.build_argv.spellings``),
- the MCP tool's input schema (``ctx.mcp_server.request_params``),
- the request itself, which is the declaration.

Adding an option is two edits: an ``option(...)`` field on the request, and the code that uses
it. ``tests/test_options.py`` holds every face to the declarations.

Leaf module: no typer, pydantic or rich here (the fast path imports it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

_KEY = "ctx.option"


@dataclass(frozen=True)
class Spec:
    """What a request field declares besides its name, type and default."""

    help: str
    kind: type  # int, str or bool: the value's type on a command line and in MCP arguments
    flags: tuple[str, ...] = ()  # command-line spellings; a bool's second one turns it off
    argument: bool = False  # positional on the command line (the topics, the query)
    choices: tuple[str, ...] = ()  # checked by the core, so the CLI and MCP fail alike
    minimum: int | None = None
    maximum: int | None = None
    config: str | None = None  # config-file key whose value is the default when not given
    complete: str | None = None  # shell completion beyond choices: "lenses" (every lens name)
    many: bool = False  # an argument that takes several values (the topics)
    mcp: str | None = ""  # the MCP argument's name: "" the field's own, None not an MCP argument
    mcp_help: str | None = None  # what an agent reads, when it must differ from the CLI help


def option(default: Any = dataclasses.MISSING, **spec: Any) -> Any:
    """A request field declared as a command option (see the module's doc)."""
    if "kind" not in spec:
        spec["kind"] = type(default)
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={_KEY: Spec(**spec)})
    return dataclasses.field(default=default, metadata={_KEY: Spec(**spec)})


@dataclass(frozen=True)
class Option:
    name: str
    default: Any  # the request's default (dataclasses.MISSING for a required one)
    spec: Spec

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    @property
    def face_default(self) -> Any:
        """The default a command line or an MCP call sees: None where the config file decides."""
        return None if self.spec.config else self.default

    @property
    def help(self) -> str:
        """The CLI help: the declared text, with the default where the config file may set it."""
        text = self.spec.help
        if self.spec.config:
            text += f" Default: {self.spec.config} in the config file, else {self.default}."
        return text

    @property
    def mcp_name(self) -> str | None:
        return self.name if self.spec.mcp == "" else self.spec.mcp

    @property
    def mcp_help(self) -> str:
        return self.spec.mcp_help or self.help


def options_of(request_type: type) -> tuple[Option, ...]:
    """The declared options of a request type, in field order."""
    return tuple(
        Option(f.name, f.default, f.metadata[_KEY])
        for f in dataclasses.fields(request_type)
        if _KEY in f.metadata
    )


def with_config_defaults(request_type: type, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with every option that was not given (None) and has a config key filled from
    the config files; still-missing ones are left out, so the request's default applies."""
    from ctx.config import load_settings

    settings = None
    out = dict(values)
    for opt in options_of(request_type):
        if opt.spec.config and out.get(opt.name) is None:
            settings = settings or load_settings()
            configured = getattr(settings, opt.spec.config.rpartition(".")[2])
            if configured is None or configured == "":
                out.pop(opt.name, None)
            else:
                out[opt.name] = configured
    return out


@dataclass(frozen=True)
class SearchRequest:
    """`ctx search` and the MCP `search` tool: the full-text search's arguments."""

    query: str = option(help='Words to find: any text, but not only function words ("how do I": an error).',
                        kind=str, argument=True)
    limit: int = option(20, help="Most hits to show (1 to 1000).", flags=("--limit", "-n"), minimum=1,
                        mcp_help="Most hits to return (1 to 1000).")
    format: str = option("text", help="text or json.", flags=("--format", "-f"), choices=("text", "json"),
                         mcp_help='"text" (default) or "json".')
