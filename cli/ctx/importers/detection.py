"""Which format a folder or file is in, decided by evidence rather than by any one file.

A folder's *family* is what most of its note files are: markdown notes, Roam exports, Tana exports
or JSON graphs, counted file by file. A JSON file counts only when it has that export's shape, so
``package.json`` or ``tsconfig.json`` are nobody's notes. Within the winning family the formats
compete on their markers (``Importer.detect``: a tool's config folder, its layout, its file names).

Two cases are not guessed:

* evidence split between families (none has twice the files of the next) is ambiguous: the
  error lists the candidates and the ``--format`` that picks each;
* a repository holding several renderings of the same pages in sibling folders (roam-to-git
  keeps ``markdown/``, ``formatted/`` and ``json/``) is imported from one rendering only, the
  richest (an outliner's JSON export beats markdown), and the detection says so.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ctx.errors import UsageError
from ctx.files import FileRefused, read_regular
from ctx.importers.base import Importer
from ctx.importers.json_exports import read_head

# Folders that hold a tool's files, never notes.
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__"})
# Files every repository carries at its top; they say nothing about what the notes are.
REPOSITORY_FILES = frozenset(
    {"readme", "license", "licence", "changelog", "contributing", "code_of_conduct", "security", "notice"}
)
# One family needs at least this many times the note files of the next to win outright.
MAJORITY = 2
# Two folders render the same pages when this share of the smaller one's page names is in both.
SAME_PAGES = 0.8
# Below this many pages, shared names are coincidence (index.md, README.md, ...).
MIN_RENDERED_PAGES = 3
# A JSON export is read whole to list its page titles; past this size it is not compared.
MAX_TITLE_SCAN_BYTES = 64 * 1024 * 1024
# Richer renderings carry more structure: outline blocks, uids, times, attributes.
RICHNESS = {"roam": 2, "tana": 2, "markdown": 1}
NOUNS = {
    "markdown": ("markdown note", "markdown notes"),
    "roam": ("Roam export", "Roam exports"),
    "tana": ("Tana export", "Tana exports"),
    "json": ("JSON graph file", "JSON graph files"),
}


@dataclass(frozen=True)
class Detection:
    format: str
    root: Path  # what to import: the path given, or the one rendering chosen inside it
    notes: tuple[str, ...] = ()  # what the user should know about the choice


@dataclass
class _Census:
    """A folder's note files by family, each under its top-level entry ('' for top-level files)."""

    files: dict[str, dict[str, list[Path]]] = field(default_factory=dict)

    def add(self, family: str, entry: str, path: Path) -> None:
        self.files.setdefault(family, {}).setdefault(entry, []).append(path)

    def counts(self, entries: Iterable[str] | None = None) -> Counter[str]:
        wanted = None if entries is None else set(entries)
        return Counter(
            {
                family: n
                for family, by_entry in self.files.items()
                if (n := sum(len(v) for e, v in by_entry.items() if wanted is None or e in wanted))
            }
        )

    def of(self, family: str, entry: str | None = None) -> list[Path]:
        by_entry = self.files.get(family, {})
        if entry is not None:
            return by_entry.get(entry, [])
        return [path for entry_files in by_entry.values() for path in entry_files]


def detect(path: Path) -> Detection:
    """The format to import ``path`` with; raises UsageError when the evidence does not decide."""
    if path.is_file():
        return Detection(_detect_file(path), path)
    return _detect_folder(path, allow_renderings=True)


def _classes() -> dict[str, list[type[Importer]]]:
    """Family -> its importer classes, in REGISTRY order (which breaks ties)."""
    from ctx.importers import available_formats, importer_class

    out: dict[str, list[type[Importer]]] = {}
    for fmt in available_formats():
        cls = importer_class(fmt)
        out.setdefault(cls.family or fmt, []).append(cls)
    return out


def _format_hint(formats: Iterable[str]) -> str:
    return " or ".join(f"--format {fmt}" for fmt in formats)


def _detect_file(path: Path) -> str:
    best: tuple[int, str] | None = None
    for classes in _classes().values():
        for cls in classes:
            score = cls.detect(path)
            if score > 0 and (best is None or score > best[0]):
                best = (score, cls.format)
    if best is None:
        from ctx.importers import REGISTRY

        raise UsageError(
            f"cannot tell what format {path} is in: it is not a markdown note nor a Roam, Tana or"
            f" ctx JSON graph export; pass --format ({', '.join(REGISTRY)})"
        )
    return best[1]


def _noun(family: str, count: int) -> str:
    singular, plural = NOUNS.get(family, (f"{family} file", f"{family} files"))
    return f"{count} {singular if count == 1 else plural}"


def _census(folder: Path, classes: dict[str, list[type[Importer]]]) -> _Census:
    # One representative per family decides whether a file is a note of that family: the
    # formats of a family agree on what their note files are.
    deciders = [(family, members[0]) for family, members in classes.items()]
    census = _Census()
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        here = Path(current)
        entry = "" if here == folder else here.relative_to(folder).parts[0]
        for name in sorted(files):
            if name.startswith("."):
                continue
            file = here / name
            head = _lazy_head(file)
            for family, decider in deciders:
                if decider.is_note_file(file, head):
                    census.add(family, entry, file)
                    break
    return census


def _lazy_head(path: Path) -> Callable[[], str]:
    cache: list[str] = []

    def head() -> str:
        if not cache:
            cache.append(read_head(path))
        return cache[0]

    return head


def _evidence(census: _Census) -> Counter[str]:
    """Note files by family, leaving out a repository's README, LICENSE and the like at its top
    (unless they are all there is)."""
    counts = census.counts()
    boilerplate = Counter(
        {
            family: n
            for family, by_entry in census.files.items()
            if (n := sum(1 for p in by_entry.get("", []) if p.stem.lower() in REPOSITORY_FILES))
        }
    )
    trimmed = counts - boilerplate
    return trimmed if trimmed else counts


def _detect_folder(folder: Path, *, allow_renderings: bool) -> Detection:
    classes = _classes()
    census = _census(folder, classes)
    if allow_renderings:
        chosen = _one_rendering(folder, census, classes)
        if chosen is not None:
            return chosen
    counts = _evidence(census)
    family_order = list(classes)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], family_order.index(kv[0])))
    if not ranked:
        raise UsageError(
            f"cannot tell what format {folder} is in: it holds no notes (no markdown files, no"
            f" Roam, Tana or JSON graph exports); pass --format ({', '.join(_all_formats(classes))})"
        )
    dialects = {family: _dialect(folder, classes[family]) for family, _ in ranked}
    if len(ranked) > 1 and ranked[0][1] < MAJORITY * ranked[1][1]:
        held = [f"{_noun(family, n)} ({dialects[family]})" for family, n in ranked]
        raise UsageError(
            f"cannot tell what format {folder} is in: it holds {_and(held)}; pass"
            f" {_format_hint(dialects[family] for family, _ in ranked)}"
        )
    family = ranked[0][0]
    fmt = dialects[family]
    if family == "json":
        first = census.of("json")[0]
        raise UsageError(
            f"{folder} holds {_noun('json', ranked[0][1])}, which are imported one file at a time:"
            f" ctx import {first}"
        )
    if classes[family][0].detect(folder) == 0 and family != "markdown":
        # An export family whose files sit in subfolders: its importer reads a folder's own files.
        where = sorted({str(p.parent) for p in census.of(family)})
        raise UsageError(
            f"the {_noun(family, ranked[0][1])} in {folder} are in subfolders; import the folder"
            f" or file itself, e.g. ctx import {where[0]}"
        )
    notes = tuple(
        f"{folder} also holds {_noun(other, n)}, left out of this {fmt} import"
        f" (import {'it' if n == 1 else 'them'} on {'its' if n == 1 else 'their'} own,"
        f" e.g. ctx import {census.of(other)[0]})"
        for other, n in ranked[1:]
    )
    return Detection(fmt, folder, notes)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _all_formats(classes: dict[str, list[type[Importer]]]) -> list[str]:
    return [cls.format for members in classes.values() for cls in members]


def _dialect(folder: Path, members: list[type[Importer]]) -> str:
    """The family member whose markers are strongest; the first in REGISTRY order on a tie."""
    best = members[0].format, 0
    for cls in members:
        score = cls.detect(folder)
        if score > best[1]:
            best = cls.format, score
    return best[0]


# -- several renderings of the same pages -----------------------------------------------------


@dataclass
class _Rendering:
    entry: str
    family: str
    files: list[Path]
    names: set[str]

    @property
    def size(self) -> int:
        """Bytes of its files: asked only when renderings compete (a stat per file otherwise cost
        a first import of 100k notes ~1 s for nothing)."""
        return _size(self.files)


def _normal(name: str) -> str:
    return unicodedata.normalize("NFC", name.strip()).lower()


def _page_names(family: str, files: list[Path], title_key: str | None) -> set[str]:
    if family == "markdown":
        return {_normal(p.stem) for p in files}
    if title_key is None:
        return set()
    pattern = re.compile(rf'"{re.escape(title_key)}"\s*:\s*("(?:[^"\\]|\\.)*")')
    names: set[str] = set()
    for path in files:
        try:
            text = read_regular(path, limit=MAX_TITLE_SCAN_BYTES).decode("utf-8", errors="replace")
        except (OSError, FileRefused):
            continue  # too large to compare, or not a regular file (never opened)
        for match in pattern.finditer(text):
            try:
                names.add(_normal(json.loads(match.group(1))))
            except (ValueError, TypeError):
                continue
    names.discard("")
    return names


def _size(files: list[Path]) -> int:
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


def _one_rendering(folder: Path, census: _Census, classes: dict[str, list[type[Importer]]]) -> Detection | None:
    same_pages = _largest_same_pages(_renderings(census, classes))
    # Renderings must be what the folder mostly is, not two look-alike corners of a vault.
    if not same_pages or 2 * sum(len(r.files) for r in same_pages) <= sum(census.counts().values()):
        return None
    chosen = max(same_pages, key=lambda r: (RICHNESS[r.family], r.size, [-ord(c) for c in r.entry]))
    inner = _detect_folder(folder / chosen.entry, allow_renderings=False)
    others = [r for r in same_pages if r is not chosen]
    listed = ", ".join(f"{r.entry}/" for r in same_pages)
    note = (
        f"{folder} holds {len(same_pages)} renderings of the same pages ({listed}); importing"
        f" only the richest, {chosen.entry}/ ({inner.format}). To import another instead:"
        f" ctx import {folder / others[0].entry}"
    )
    return Detection(inner.format, inner.root, (note, *inner.notes))


def _renderings(census: _Census, classes: dict[str, list[type[Importer]]]) -> list[_Rendering]:
    """Each top-level entry that is clearly one format's rendering of enough pages."""
    entries = sorted({e for by_entry in census.files.values() for e in by_entry if e})
    renderings: list[_Rendering] = []
    for entry in entries:
        counts = census.counts([entry]).most_common()
        family, n = counts[0]
        if family not in RICHNESS or (len(counts) > 1 and n < MAJORITY * counts[1][1]):
            continue
        files = census.of(family, entry)
        names = _page_names(family, files, classes[family][0].title_key)
        if len(names) >= MIN_RENDERED_PAGES:
            renderings.append(_Rendering(entry, family, files, names))
    return renderings


def _largest_same_pages(renderings: list[_Rendering]) -> list[_Rendering] | None:
    """The largest group of renderings of the same pages (a union-find over similar pairs), or
    None when no two render the same pages."""
    group = list(range(len(renderings)))

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, a in enumerate(renderings):
        for j in range(i + 1, len(renderings)):
            b = renderings[j]
            shared = len(a.names & b.names)
            if shared >= SAME_PAGES * min(len(a.names), len(b.names)):
                group[root(j)] = root(i)
    members: dict[int, list[_Rendering]] = {}
    for i, rendering in enumerate(renderings):
        members.setdefault(root(i), []).append(rendering)
    groups = [g for g in members.values() if len(g) > 1]
    if not groups:
        return None
    return max(groups, key=lambda g: (sum(len(r.files) for r in g), [r.entry for r in g]))
