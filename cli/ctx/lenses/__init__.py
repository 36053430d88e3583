"""Lenses: YAML files that say how to walk, score, budget and lay out context for one kind of task.

A lens is data, not code: every built-in lens (``lenses/*.yaml``) and every user lens goes through
the same model and validation, so a new kind of task never needs a special code path. The schema is
documented in ``docs/lenses.md``; this package is its single source of truth:

* ``model``: the dataclasses, each option's default and bounds written once on its field;
* ``validate``: YAML data -> a Lens, or every problem as one ``file: key: reason`` line;
* ``lookup``: a path, the project's ``.ctx/lenses``, the user's ``<config>/ctx/lenses``, the built-ins.
"""

from ctx.errors import LensError
from ctx.lenses.lookup import (
    LensEntry,
    builtin_lens_dir,
    builtin_lens_names,
    find_lens_path,
    find_named_lens,
    lens_dirs,
    lens_name_problem,
    list_lenses,
    load_lens,
    load_lens_file,
    load_named_lens,
    read_lens_text,
)
from ctx.lenses.model import (
    HARD_MAX_DEPTH,
    HEADER_LEVELS,
    EdgeRule,
    Lens,
    Section,
    Selector,
)
from ctx.lenses.validate import parse_lens

__all__ = [
    "HARD_MAX_DEPTH",
    "HEADER_LEVELS",
    "EdgeRule",
    "Lens",
    "LensEntry",
    "LensError",
    "Section",
    "Selector",
    "builtin_lens_dir",
    "builtin_lens_names",
    "find_lens_path",
    "find_named_lens",
    "lens_dirs",
    "lens_name_problem",
    "list_lenses",
    "load_lens",
    "load_lens_file",
    "load_named_lens",
    "read_lens_text",
    "parse_lens",
]
