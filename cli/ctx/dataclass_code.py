"""The methods ``@dataclass`` writes, compiled once instead of in every `ctx` process.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__setattr__``/``__delattr__``) as source text and compiles it with ``exec`` when the class is
defined -- on every import, since nothing caches it the way ``__pycache__`` caches modules. The
build path defines some sixty dataclasses, and that compiling is about a quarter of its import
time. The console script (only it: ``import ctx`` in someone else's program changes nothing)
therefore routes ``dataclasses``' own ``exec`` through ``_exec`` below: each source text is
compiled as ``exec`` would compile it (no inherited ``__future__`` flags, file ``<string>``) and
the code object is kept under that exact text; a later process loads those code objects (one
``marshal`` file in the user cache folder, per Python version) and runs them instead of compiling
the same text again. The same text gives the same code, so the classes are the same; new text is
simply compiled. The file is ctx's own, like the byte code Python caches beside the modules;
any problem with it only costs speed.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from types import CodeType
from typing import Any

from ctx.paths import cache_dir

MAX_ENTRIES = 4096  # the build path has a few hundred; past this, stop adding to the file

_codes: dict[str, CodeType] = {}
_loaded = 0  # how many came from the file: more than that means there is something to save


def _path() -> Path:
    version = ".".join(str(part) for part in sys.version_info[:3])
    return cache_dir() / f"dataclass-code.{sys.implementation.cache_tag}-{version}.m{marshal.version}"


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: dict[str, Any] | None = None, /) -> None:
    if isinstance(source, str):
        code = _codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            if len(_codes) < MAX_ENTRIES:
                _codes[source] = code
        source = code
    exec(source, globals, locals)  # noqa: S102 - exactly what dataclasses itself does


def install() -> None:
    """Route ``dataclasses``' method compiling through the code cache (the console script only)."""
    global _loaded
    import dataclasses

    from ctx import speedups

    if getattr(dataclasses, "exec", None) is _exec or speedups.plain():
        return
    try:
        stored = marshal.loads(_path().read_bytes())
        if isinstance(stored, dict):
            _codes.update((k, v) for k, v in stored.items() if isinstance(k, str) and isinstance(v, CodeType))
    except Exception:  # noqa: BLE001 - absent, damaged, another format: compile as usual
        pass
    _loaded = len(_codes)
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def save() -> None:
    """Store the code objects when this process compiled any that were not stored yet."""
    global _loaded
    if len(_codes) <= _loaded:
        return
    try:
        path = _path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps(_codes))
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one
        _loaded = len(_codes)
    except Exception:  # noqa: BLE001 - read-only home, full disk: compile next time too
        pass
