"""YAML from files we did not write (frontmatter, lens and config files): safe, bounded, quiet.

PyYAML's safe loader builds no objects beyond plain data, but two things still bite:

* aliases: ``b: [*a, *a, ...]`` nine levels deep is a few hundred bytes that PyYAML loads as shared
  references in microseconds, and that explodes into billions of items the moment anything walks
  or serializes it (a "billion laughs"). Frontmatter and lenses have no use for them, so a
  document with an alias is refused;
* nesting: a value nested hundreds deep is loaded fine but sends any recursive consumer past the
  interpreter's recursion limit. Documents deeper than ``MAX_DEPTH`` are refused.

Both are checked on libyaml's event stream (a state machine, no recursion, nothing built) before
the document is constructed. ``problem_text`` turns a YAML error into a line number and a phrase
with every quoted fragment removed (``problem_parts``): PyYAML quotes the offending characters and tags, and an error
message must never carry a file's content.
"""

from __future__ import annotations

import re
from typing import Any

MAX_DEPTH = 64

_QUOTED = re.compile(r"\s*(?:'[^'\n]*'|\"[^\"\n]*\")")


class YamlRefused(ValueError):
    """A document refused before construction (an alias, too deep); the message is content-free."""

    def __init__(self, line: int, problem: str) -> None:
        self.line = line  # 0-based, as PyYAML's marks
        self.problem = problem
        super().__init__(f"line {line + 1}: {problem}")


_lenient_loader: Any = None


def _loader() -> Any:
    """The safe loader (C-accelerated when libyaml is there), except that a timestamp the
    calendar does not have (``2021-02-30``, year 0) stays the string it was written as instead of
    failing the whole document with a ValueError."""
    global _lenient_loader
    if _lenient_loader is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class LenientLoader(base):  # type: ignore[misc, valid-type]
            pass

        def timestamp(loader: Any, node: Any) -> Any:
            try:
                return base.construct_yaml_timestamp(loader, node)
            except (ValueError, OverflowError):
                return loader.construct_scalar(node)

        LenientLoader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
        _lenient_loader = LenientLoader
    return _lenient_loader


def loader_class() -> Any:
    return _loader()


def check_events(text: str, *, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``YamlRefused`` for an alias or nesting beyond ``max_depth``; YAMLError if malformed."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            raise YamlRefused(getattr(event.start_mark, "line", 0), "YAML aliases (*name) are not accepted")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlRefused(getattr(event.start_mark, "line", 0), f"nested deeper than {max_depth} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """Plain data from one YAML document, after ``check_events``. Raises YamlRefused or YAMLError."""
    import yaml

    check_events(text, max_depth=max_depth)
    return yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader


def problem_parts(exc: Exception, *, line_offset: int = 0) -> tuple[str, str]:
    """(``line N``, what is wrong) for a YAML error, without any of the document's text."""
    if isinstance(exc, YamlRefused):
        return f"line {exc.line + 1 + line_offset}", exc.problem
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1 + line_offset}" if mark is not None else "(top level)"
    problem = getattr(exc, "problem", None) or "cannot be parsed"
    problem = " ".join(_QUOTED.sub(_punctuation_only, str(problem)).split()) or "cannot be parsed"
    return where, problem


def _punctuation_only(match: re.Match[str]) -> str:
    """A quoted fragment stays when it is YAML syntax (``expected ',' or ']'``); anything with a
    letter or digit in it (a tag, a character from the document) goes."""
    inner = match.group().strip()[1:-1]
    if 0 < len(inner) <= 3 and not any(ch.isalnum() or ch.isspace() for ch in inner):
        return match.group()
    return ""
