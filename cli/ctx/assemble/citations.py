"""Citations: number the documents a context draws on, `[1] Title — source path` (seed 002).

Several nodes of one document (blocks of one note, chunks of one page) share one number: a source
is the document, and it keeps the best score among its nodes. Numbers follow the order in which
documents first appear in the output, so [1] is the first source a reader meets.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctx.assemble.candidate import Candidate


@dataclass
class Citation:
    number: int
    id: str  # the best-scoring node of the document
    title: str
    source_path: str | None
    score: float

    def label(self) -> str:
        where = f" — {self.source_path}" if self.source_path else ""
        return f"[{self.number}] {self.title}{where}"

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "source_path": self.source_path, "score": self.score}


def number_sources(shown: Iterable[Candidate]) -> dict[str, Citation]:
    """document key -> Citation, numbered in order of first appearance in ``shown``."""
    out: dict[str, Citation] = {}
    for c in shown:
        key = c.document
        cite = out.get(key)
        if cite is None:
            out[key] = Citation(len(out) + 1, c.id, c.title, c.source_path, c.score)
        elif c.score > cite.score:  # the document keeps its best node's score (and names it)
            cite.id, cite.title, cite.score = c.id, c.title, c.score
    return out


def citation_map(citations: dict[str, Citation], *, compact: bool = False) -> dict[str, dict[str, Any]]:
    """The JSON ``citations`` object: "1" -> {id, title, source_path, score}.

    ``compact`` (the tiniest budgets) keeps only the id: the node entries already carry the
    title, and repeating it could cost the seed its place in the output.
    """
    ordered = sorted(citations.values(), key=lambda c: c.number)
    if compact:
        return {str(c.number): {"id": c.id} for c in ordered}
    return {str(c.number): c.as_json() for c in ordered}
