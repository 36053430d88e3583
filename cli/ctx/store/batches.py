"""Long id lists read in batches: an ``IN (?, ?, ...)`` list stays under SQLite's limit on
bound variables (999 in older builds), whatever the caller hands over."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

CHUNK = 500

T = TypeVar("T")


def chunks(ids: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]
