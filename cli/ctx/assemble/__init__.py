"""Context assembly: resolve -> traverse -> enrich -> score -> budget -> render.

``build_context`` is the one entry point the CLI (`ctx build`) and the MCP server call; it returns
the exact text to print, so both give byte-identical answers for the same graph state and request.
No typer or rich here, and no wall-clock time anywhere in what is produced.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctx.lenses import Lens

MIN_TOKENS = 50
MAX_DEPTH = 5  # seed 003: --depth max 5 (a lens may allow more with its own max_depth)
MAX_TOPICS = 32
FORMATS = ("markdown", "json")
# The default lens, chosen per build from the topics (``lens_choice``): a topic that names a node
# (id, title, alias) gets the graph-walk lens, a question or phrase gets the question lens.
AUTO_LENS = "auto"
DEFAULT_LENS = AUTO_LENS
GRAPH_LENS = "general"
QUESTION_LENS = "answer"


def auto_lens_summary(code: bool = False) -> str:
    """What ``auto`` chooses, in the words the help, the README and docs/lenses.md all use
    (tests/test_lens_choice_meta.py holds them to it); ``code`` marks lens names as markdown code."""
    mark = (lambda name: f"`{name}`") if code else (lambda name: name)
    return f"{mark(QUESTION_LENS)} for a question or phrase, {mark(GRAPH_LENS)} when every topic is a node's id, title or alias"


@dataclass(frozen=True)
class BuildRequest:
    topics: tuple[str, ...]
    # "auto", a built-in, user or project lens name, or a path to a .yaml; or a Lens already
    # loaded (the MCP server resolves names itself so that an agent can never name a file).
    lens: "str | Lens" = DEFAULT_LENS
    depth: int | None = None  # None -> the lens's default
    max_tokens: int = 4000
    format: str = "markdown"  # "markdown" | "json"
    include_fields: bool = True
    encoding: str = "cl100k_base"
    explain: bool = False
    include_private: bool = False  # private nodes are withheld unless the user explicitly asks
    # Why this lens, when the caller named one (the CLI: "--lens NAME" or the config file's
    # build.lens); reported as meta.lens_choice.why beside the choice ``auto`` makes.
    lens_why: str = ""


@dataclass
class BuildResult:
    text: str  # exactly what goes to stdout (counted within max_tokens, trailing newline included)
    found: bool  # False -> the CLI exits 3, MCP reports not found
    warnings: list[str] = field(default_factory=list)  # one-line notices for stderr
    candidates: list[dict[str, Any]] = field(default_factory=list)  # audit rows for --explain
    meta: dict[str, Any] = field(default_factory=dict)


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
    if request.format not in FORMATS:
        raise UsageError(f"--format must be markdown or json, not {request.format!r}")
    if request.depth is not None and request.depth < 0:
        raise UsageError(f"--depth must be 0 or more, not {request.depth}")


def build_context(conn: sqlite3.Connection, request: BuildRequest) -> BuildResult:
    from ctx.assemble.pipeline import run

    validate_request(request)
    return run(conn, request)


__all__ = ["BuildRequest", "BuildResult", "build_context", "MIN_TOKENS", "MAX_DEPTH"]
