"""`ctx:` fragments for other tools (the `llm` plugin): a fragment argument -> the text `ctx build`
prints.

Syntax: ``TOPIC`` or ``TOPIC?key=value&key=value`` with the keys ``lens``, ``tokens`` (the budget,
``--max-tokens``), ``depth``, ``format`` (markdown or json) and ``db`` (a graph file). What follows
the last ``?`` is read as options only when it holds an ``=``, so a topic may end in a question
mark. Unset options fall back exactly as for `ctx build`: the config file, then the defaults.

    llm -f 'ctx:Project Apollo' 'What blocks the launch?'
    llm -f 'ctx:Project Apollo?lens=planning&tokens=2000' 'What blocks the launch?'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

from ctx.errors import NotFoundError, UsageError

KEYS = ("lens", "tokens", "depth", "format", "db")


@dataclass(frozen=True)
class FragmentRequest:
    topic: str
    lens: str | None = None
    max_tokens: int | None = None
    depth: int | None = None
    format: str = "markdown"
    db: Path | None = None


def _whole_number(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"ctx fragment: {key}={value!r} is not a whole number") from None


def parse_fragment(argument: str) -> FragmentRequest:
    topic, mark, query = argument.rpartition("?")
    if not mark or "=" not in query:
        topic, query = argument, ""
    options: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in KEYS:
            raise UsageError(f"ctx fragment: unknown option {key!r} (use {', '.join(KEYS)})")
        options[key] = value
    topic = topic.strip()
    if not topic:
        raise UsageError("ctx fragment: give a topic, e.g. ctx:Project Apollo")
    return FragmentRequest(
        topic=topic,
        lens=options.get("lens") or None,
        max_tokens=_whole_number("tokens", options["tokens"]) if "tokens" in options else None,
        depth=_whole_number("depth", options["depth"]) if "depth" in options else None,
        format=options.get("format") or "markdown",
        db=Path(options["db"]).expanduser() if options.get("db") else None,
    )


def fragment_text(argument: str) -> str:
    """Exactly what `ctx build TOPIC` with the same options prints to a pipe; an unknown topic
    is an error (a prompt should not silently go out without its context)."""
    from ctx.assemble import BuildRequest
    from ctx.assemble import build_defaults
    from ctx.freshness import refresh_if_enabled
    from ctx.graph import Graph
    from ctx.config import resolve_db_path

    request = parse_fragment(argument)
    lens, max_tokens, encoding = build_defaults(request.lens, request.max_tokens, None)
    with Graph.open(resolve_db_path(request.db)) as graph:
        refresh_if_enabled(graph.store)
        result = graph.build(
            BuildRequest(
                topics=(request.topic,),
                lens=lens,
                depth=request.depth,
                max_tokens=max_tokens,
                format=request.format,
                encoding=encoding,
            ),
        )
    if not result.found:
        raise NotFoundError(f"no node matches {request.topic!r}")
    return result.text
