"""Lens and config files, parsed once: the data a document gave is kept with its exact text.

Every `ctx build` reads a lens file (and the config files that exist). Importing PyYAML and parsing
a lens costs more than a tenth of a cold build, to get the same data as last time. The first
process to parse a document stores the text and its data (with ``marshal``) in the user cache
folder, in a file named by a checksum of the text; a later process given the same text -- compared
whole, so a checksum collision is only a miss -- loads that data without importing PyYAML. An
edited file is new text, so it is parsed again: no timestamps involved. Only a document that
parsed without error is stored: refusals and syntax errors come from the parser every time, with
its messages. Any problem with the cache (unwritable, damaged, another Python's format) only costs
speed.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

from ctx.paths import cache_dir

# marshal's format may change between Python versions: each version keeps its own entries.
_FORMAT = f"py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"


def load(text: str) -> Any:
    """``yaml_safe.load(text)``, from the cache when this text was parsed before."""
    from ctx import speedups

    if speedups.plain():
        from ctx import yaml_safe

        return yaml_safe.load(text)
    try:
        path: Path | None = _entry(text)
    except Exception:  # noqa: BLE001 - no cache folder to be had (no home): parse every time
        path = None
    if path is not None:
        try:
            stored_text, data = marshal.loads(path.read_bytes())
            if stored_text == text:
                return data
        except Exception:  # noqa: BLE001 - absent, damaged or unreadable: parse it
            pass
    from ctx import yaml_safe

    data = yaml_safe.load(text)
    if path is not None:
        _store(path, text, data)
    return data


def _entry(text: str) -> Path:
    import zlib

    encoded = text.encode("utf-8", "surrogatepass")
    return cache_dir() / "yaml" / f"{zlib.crc32(encoded):08x}-{len(encoded):x}.{_FORMAT}"


def _store(path: Path, text: str, data: Any) -> None:
    try:
        blob = marshal.dumps((text, data))  # ValueError for a value marshal cannot hold (a date)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, path)  # atomic: a concurrent reader sees no file or the whole file
    except Exception:  # noqa: BLE001 - read-only home, full disk: stay slow
        pass
