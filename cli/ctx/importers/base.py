"""The interface every importer implements, and what it produces (``ctx.store.records``).

Importers are pure parsers: they turn one source file's text into node and edge records and never
touch the database. The engine (``ctx.importers.engine``) decides what changed and which files to
read; the store (``ctx.store.writes``) writes the records (ids, names, tags, link resolution,
token counts, hashes) in one transaction, so every format gets the same guarantees.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ctx.store.records import EdgeRecord, NodeRecord

if TYPE_CHECKING:
    from ctx.store.protocols import SourceRecords

__all__ = ["EdgeRecord", "FileInfo", "Importer", "NodeRecord", "ParsedFile"]


@dataclass
class ParsedFile:
    nodes: list[NodeRecord] = field(default_factory=list)
    edges: list[EdgeRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FileInfo:
    relpath: str  # POSIX, relative to the source base folder
    abspath: Path
    mtime: float


class Importer(ABC):
    """Base class: subclasses set ``format`` and implement ``detect``, ``list_files``, ``parse``."""

    format: ClassVar[str] = ""
    # Whether a file is read as text (decoded UTF-8, with a warning on invalid bytes).
    text: ClassVar[bool] = True
    # Formats whose note files are the same kind of file share a family (every markdown dialect
    # is "markdown"): detection counts a folder's note files by family, then lets the family's
    # formats compete on their markers (``detect``). See ``ctx.importers.detection``.
    family: ClassVar[str] = ""
    # For JSON exports: the key that holds a page's title, so that the same pages rendered again
    # as markdown beside the export are recognised as one set of pages.
    title_key: ClassVar[str | None] = None
    # Formats whose single file can be a whole graph (a JSON graph of a million nodes) read it
    # a batch at a time with ``parse_stream``, so an import's memory does not grow with it.
    streams: ClassVar[bool] = False
    # How this format's files are read: raised whenever the same bytes now give other records (a
    # date read differently). A source last read at another reading has every file read again
    # at its next import or sync, once (``engine._load_source``): an import reads only changed
    # files, so a graph would otherwise keep the old reading of every file not edited since.
    reading: ClassVar[int] = 1

    @classmethod
    @abstractmethod
    def detect(cls, path: Path) -> int:
        """Confidence 0-100 that ``path`` is in this format.

        For a file: whether its content has this format's shape. For a folder whose note files
        are of this format's family: how strongly its markers (a tool's config folder, its
        layout, its file names) say it is this dialect; 0 when nothing points to it.
        """

    @classmethod
    @abstractmethod
    def is_note_file(cls, path: Path, head: Callable[[], str]) -> bool:
        """Whether ``path`` is a note file of this format's family (evidence for detection).

        ``head`` returns the file's first kilobytes, read once and only if asked for.
        """

    def base_dir(self, path: Path) -> Path:
        """The folder relative paths are measured from: the folder itself, or a file's parent."""
        return path if path.is_dir() else path.parent

    @abstractmethod
    def list_files(self, path: Path) -> list[str]:
        """Relative paths of the files this source consists of, sorted."""

    def normalize_key(self, text: str) -> str:
        """How link targets and node names are compared (lowercase by default)."""
        return text.strip().lower()

    @abstractmethod
    def parse(self, info: FileInfo, text: str) -> ParsedFile:
        """Records for one file; problems that spare the rest of the file go in ``warnings``."""

    def parse_stream(
        self, info: FileInfo, text: Iterable[str], known: Callable[[list[str]], set[str]]
    ) -> Iterator[ParsedFile]:
        """For formats that ``stream``: the records of one file a batch at a time, from its text
        in pieces; ``known(ids)`` says which of ``ids`` earlier batches already had. Only called
        when ``streams`` is set; an importer that sets it must override this."""
        raise NotImplementedError(f"{type(self).__name__} sets streams but has no parse_stream")

    def finalize(self, source: "SourceRecords") -> ParsedFile:
        """Records derived from the whole source (e.g. Dendron's stub levels), recomputed after
        every import that changed something, from the source's current records."""
        return ParsedFile()
