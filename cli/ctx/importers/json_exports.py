"""Outliner exports that arrive as JSON files: one file, or a folder holding several of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ctx import files

HEAD_BYTES = 8192


def read_head(path: Path, size: int = HEAD_BYTES, root: Path | None = None) -> str:
    """The start of a regular file (never a FIFO or device, nor a symlink out of ``root``)."""
    return files.read_head(path, size, root=root).decode("utf-8", errors="ignore")


def export_files(path: Path, looks_like: Callable[[str], bool]) -> list[str]:
    """The export's JSON files relative to ``base_dir``: the file itself, or a folder's matches."""
    if not path.is_dir():
        return [path.name]
    # A .json entry that is not a regular file inside the folder (a symlink out of it, a FIFO)
    # is listed too, unread: the import skips it with a warning that names it.
    return sorted(
        child.name
        for child in path.iterdir()
        if child.suffix.lower() == ".json"
        and not child.is_dir()
        and (not files.is_regular(child, path) or looks_like(read_head(child, root=path)))
    )


def detect_export(path: Path, looks_like: Callable[[str], bool], confidence: int) -> int:
    if path.is_file():
        return confidence if path.suffix.lower() == ".json" and looks_like(read_head(path)) else 0
    if path.is_dir():
        return confidence if export_files(path, looks_like) else 0
    return 0
