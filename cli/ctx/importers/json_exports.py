"""Outliner exports that arrive as JSON files: one file, or a folder holding several of them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

HEAD_BYTES = 8192


def read_head(path: Path, size: int = HEAD_BYTES) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(size).decode("utf-8", errors="ignore")
    except OSError:
        return ""


def export_files(path: Path, looks_like: Callable[[str], bool]) -> list[str]:
    """The export's JSON files relative to ``base_dir``: the file itself, or a folder's matches."""
    if path.is_file():
        return [path.name]
    return sorted(
        child.name
        for child in path.iterdir()
        if child.suffix.lower() == ".json" and child.is_file() and looks_like(read_head(child))
    )


def detect_export(path: Path, looks_like: Callable[[str], bool], confidence: int) -> int:
    if path.is_file():
        return confidence if path.suffix.lower() == ".json" and looks_like(read_head(path)) else 0
    if path.is_dir():
        return confidence if export_files(path, looks_like) else 0
    return 0
