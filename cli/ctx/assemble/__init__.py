"""Context assembly: resolve -> traverse -> enrich -> score -> budget -> render.

``build_context`` is the one entry point the CLI (`ctx build`) and the MCP server call; it returns
the exact text to print, so both give byte-identical answers for the same graph state and request.
No typer or rich here, and no wall-clock time anywhere in what is produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx import defaults
from ctx.assemble.result import BuildResult
from ctx.options import option

if TYPE_CHECKING:
    from ctx.freshness_report import Freshness
    from ctx.lenses import Lens
    from ctx.store.protocols import GraphStore

MIN_TOKENS = 50
# The largest budget a build takes: the largest LLM context windows hold about a million tokens,
# and a build's time and memory grow with its budget (the audit: 10^7 tokens on a 100k-node graph
# took 450 s and 1.7 GB; 10^9 was killed after 900 s). Documented in docs/building.md.
MAX_TOKENS = 1_000_000
MAX_TOPICS = 32
FORMATS = ("markdown", "json")
# The default lens, chosen per build from the topics (``lens_choice``): a topic that names a node
# (id, title, alias) gets the graph-walk lens, a question or phrase gets the question lens.
# (The names live in the leaf ctx.defaults, which ctx.config reads too without importing this.)
AUTO_LENS = defaults.AUTO_LENS
DEFAULT_LENS = defaults.DEFAULT_LENS
GRAPH_LENS = defaults.GRAPH_LENS
QUESTION_LENS = defaults.QUESTION_LENS


def auto_lens_summary(code: bool = False) -> str:
    """What ``auto`` chooses, in the words the help, the README and docs/lenses.md all use
    (tests/test_lens_choice_meta.py holds them to it); ``code`` marks lens names as markdown code."""
    mark = (lambda name: f"`{name}`") if code else (lambda name: name)
    return f"{mark(QUESTION_LENS)} for a question or phrase, {mark(GRAPH_LENS)} when every topic is a node's id, title or alias"


@dataclass(frozen=True)
class BuildRequest:
    """`ctx build`, the MCP `context` tool and ``Graph.build``: each field is an option declared
    once (``ctx.options``); the CLI, the fast path and the MCP schema are derived from these.
    What the reader may see (private nodes or not) is the graph handle's, not the request's."""

    topics: tuple[str, ...] = option(
        kind=str, argument=True, many=True, mcp="topic",
        help="Node ids, exact titles or aliases, or search words; several blend into one context.",
        mcp_help="What to build context about: a node id, a title or alias, or free text; a list blends"
        " several topics into one context.",
    )
    # "auto", a built-in, user or project lens name, or a path to a .yaml; or a Lens already
    # loaded (the MCP server resolves names itself so that an agent can never name a file).
    lens: "str | Lens" = option(
        DEFAULT_LENS, kind=str, flags=("--lens", "-l"), config="build.lens", complete="lenses",
        help=f"Lens name or path to a lens .yaml file ({DEFAULT_LENS}: {auto_lens_summary()}).",
        mcp_help="Lens name, as listed by the `lenses` tool (file paths are not accepted). Default: the"
        f" user's configured lens, else {DEFAULT_LENS}: {auto_lens_summary()}.",
    )
    depth: int | None = option(
        None, kind=int, flags=("--depth", "-d"), minimum=0,
        help="Hops to walk from the topic (default: the lens's, 2; capped at the lens's max_depth, 5 for most).",
        mcp_help="How many hops to walk from the topic (0 = the topic alone). Default: the lens's, usually 2;"
        " capped at the lens's max_depth (5 for most lenses, 10 for claims).",
    )
    max_tokens: int = option(
        defaults.DEFAULT_MAX_TOKENS, flags=("--max-tokens", "-t"), minimum=MIN_TOKENS, config="build.max_tokens",
        help=f"Token budget for the whole output ({MIN_TOKENS} to {MAX_TOKENS:,}).",
        mcp_help=f"Token budget ({MIN_TOKENS} to {MAX_TOKENS:,}) for the whole context text; never exceeded. Default:"
        " the user's configured budget, else 4000.",
    )
    # Checked by the core, not by the parser: the MCP tool takes the same argument and must fail
    # with the very same message.
    format: str = option(
        "markdown", flags=("--format", "-f"), choices=FORMATS, help=" or ".join(FORMATS) + ".",
        mcp_help='"markdown" (default) or "json".',
    )
    include_fields: bool = option(
        True, flags=("--include-fields", "--no-include-fields"), help="Show node fields (status, owner, ...).",
        mcp_help="Include node field values (status, owner, dates, ...).",
    )
    encoding: str = option(
        defaults.DEFAULT_ENCODING, flags=("--encoding",), config="build.encoding",
        help="tiktoken encoding the budget is counted in.",
        mcp_help="tiktoken encoding the budget is counted in (default cl100k_base).",
    )
    explain: bool = option(
        False, flags=("--explain",), help="Print every candidate's score parts and fate to stderr.",
        mcp_help="Also return, as a second text block, the table of every candidate with its score parts"
        " and why it was kept, shortened or dropped.",
    )
    since: str | None = option(
        None, kind=str, flags=("--since",),
        help="Only what changed since an earlier context: 'last' (the newest built with the same topics,"
        " lens, depth, budget, encoding and format) or a context id from a header (c-...).",
        mcp_help='Only what changed since an earlier context: "last" (the newest with the same topic, lens,'
        ' depth, budget, encoding and format) or the context id an earlier answer\'s header gave ("c-..."): new and'
        " changed nodes (changed ones as their changed passages), the ones that dropped out, or one line"
        " saying nothing changed.",
    )
    # Why this lens, when the caller named one (the CLI: "--lens NAME" or the config file's
    # build.lens); reported as meta.lens_choice.why beside the choice ``auto`` makes. Not an
    # option: the CLI sets it from how the lens was chosen.
    lens_why: str = ""
    # How fresh the graph is (``ctx.freshness``): the caller's, when it ran the before_build check
    # itself (it knows whether that was skipped); measured by the build otherwise. Not an option.
    freshness: "Freshness | None" = None


def validate_request(request: BuildRequest) -> None:
    from ctx.errors import UsageError

    if not request.topics or not any(t.strip() for t in request.topics):
        raise UsageError("give at least one topic or node id")
    if len(request.topics) > MAX_TOPICS:
        # Each topic seeds a walk; hundreds of them make one context of most of the graph
        # (400 topics took 8 s). A blend of a few subjects is what several topics are for.
        raise UsageError(f"at most {MAX_TOPICS} topics in one context, not {len(request.topics)}")
    if request.max_tokens < MIN_TOKENS:
        raise UsageError(f"--max-tokens must be at least {MIN_TOKENS}, not {request.max_tokens}")
    if request.max_tokens > MAX_TOKENS:
        raise UsageError(f"--max-tokens must be at most {MAX_TOKENS:,}, not {request.max_tokens:,}")
    if request.format not in FORMATS:
        raise UsageError(f"--format must be markdown or json, not {request.format!r}")
    if request.depth is not None and request.depth < 0:
        raise UsageError(f"--depth must be 0 or more, not {request.depth}")
    if request.since is not None:
        from ctx.assemble.manifest import LAST, is_context_id

        if request.since != LAST and not is_context_id(request.since):
            raise UsageError(f"--since must be 'last' or a context id like c-012345678901, not {request.since[:40]!r}")


def build_defaults(
    lens: str | None = None, max_tokens: int | None = None, encoding: str | None = None
) -> tuple[str, int, str]:
    """(lens, max_tokens, encoding) for a build: what was asked, else the config file's, else
    the built-in default (the options' ``config`` keys, ``ctx.options.with_config_defaults``).
    Here beside the request whose fields declare them, not in ``ctx.config``: the config layer
    sits below the assembler and never imports it."""
    from ctx.options import with_config_defaults

    given = with_config_defaults(BuildRequest, {"lens": lens, "max_tokens": max_tokens, "encoding": encoding})
    return (
        given.get("lens", BuildRequest.lens),
        given.get("max_tokens", BuildRequest.max_tokens),
        given.get("encoding", BuildRequest.encoding),
    )


def build_context(store: GraphStore, request: BuildRequest, *, include_private: bool = False) -> BuildResult:
    """The context for ``request``, as a reader who may see private nodes or not."""
    from ctx.assemble.pipeline import run

    validate_request(request)
    return run(store, request, include_private=include_private)


__all__ = ["BuildRequest", "BuildResult", "build_context", "build_defaults", "MIN_TOKENS", "MAX_TOKENS"]
