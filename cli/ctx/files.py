"""Reading files that someone else's folder holds: regular files only, and only where we were sent.

A vault, an export folder or a lens folder may contain anything a file system can: a symlink to
``/etc/passwd`` or to a private note outside the folder, a FIFO (opening one for reading blocks
until a writer appears, so an import would hang), a device or a socket. ``read_regular`` reads a
path only when it is a regular file and, given a ``root``, only when the file it resolves to lies
inside that root; anything else raises ``FileRefused`` with a reason fit for a one-line warning.

The type is checked with ``stat`` before the file is opened (a device is never opened at all), the
open itself is non-blocking, and the opened descriptor is checked again: a path swapped between
the check and the open is refused rather than read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


class FileRefused(Exception):
    """A path that is not read: not a regular file, outside the root, or too large."""


def _kind(mode: int) -> str:
    for test, name in KINDS:
        if test(mode):
            return name
    return "not a regular file"


def check_regular(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> os.stat_result:
    """The ``stat`` of the file ``path`` names, if it may be read; else ``FileRefused``.

    With ``root`` (a folder or file), a symlink is followed only when its final target stays
    inside ``root`` (both resolved). ``OSError`` (a missing file, no permission) passes through.
    """
    if root is None:
        return _regular(path, os.lstat(path))
    return Confinement(root).check(path)


class Confinement:
    """``check_regular`` for many files under one root, as one import checks a whole vault.

    Resolving every path component by component cost more than everything else in a no-op
    re-import (13k notes: 3.4 s of 5.3 s); here the root is resolved once and each folder once
    per instance, and a file that is not itself a symlink resolves to its folder's real path
    plus its name. Make one per import (or check): what it caches is the folders as they were
    when it first saw them.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(root)
        self._folders: dict[str, str] = {}
        self._below = self.root.rstrip(os.sep) + os.sep  # what a path inside the root starts with

    def _real_folder(self, folder: str) -> str:
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        return real

    def check(self, path: str | os.PathLike[str]) -> os.stat_result:
        link = os.lstat(path)
        if stat.S_ISLNK(link.st_mode):
            target = os.path.realpath(path)
        else:
            # Every path is resolved, not only symlinks: a folder on the way (``pages/`` of a
            # Logseq graph) may itself be a symlink to somewhere else.
            text = os.fspath(path)
            if text[:1] == "/" and "/." not in text and "//" not in text and text[-1:] != "/" and os.sep == "/":
                # Already absolute and normal (as every path an import lists is): abspath and
                # split would give this (a 100k-note no-op re-import spent ~1 s of CPU on them).
                folder, _, name = text.rpartition("/")
                folder = folder or "/"
            else:
                folder, name = os.path.split(os.path.abspath(text))
            target = os.path.join(self._real_folder(folder), name)
        if not (target == self.root or target.startswith(self._below)):
            raise FileRefused(
                "a symlink to a file outside the imported folder" if stat.S_ISLNK(link.st_mode)
                else "outside the imported folder (through a symlinked folder)"
            )
        return _regular(path, link)


def _regular(path: str | os.PathLike[str], link: os.stat_result) -> os.stat_result:
    st = os.stat(path) if stat.S_ISLNK(link.st_mode) else link
    if not stat.S_ISREG(st.st_mode):
        what = _kind(st.st_mode)
        raise FileRefused(f"a symlink to {what}" if stat.S_ISLNK(link.st_mode) else what)
    return st


def read_regular(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str] | None = None,
    limit: int | None = None,
    checked: os.stat_result | None = None,
) -> bytes:
    """The bytes of a regular file (see ``check_regular``); at most ``limit`` bytes are read when
    given, and a larger file is refused rather than silently cut."""
    expected = checked if checked is not None else check_regular(path, root)
    if limit is not None and expected.st_size > limit:
        raise FileRefused(f"larger than {limit:,} bytes")
    fd = _open_checked(path, expected)
    try:
        chunks: list[bytes] = []
        remaining = limit + 1 if limit is not None else None
        while True:
            chunk = os.read(fd, PIECE_BYTES if remaining is None else min(PIECE_BYTES, remaining))
            if not chunk:
                break
            chunks.append(chunk)
            if remaining is not None:
                remaining -= len(chunk)
                if remaining <= 0:
                    raise FileRefused(f"larger than {limit:,} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


PIECE_BYTES = 1 << 20


def read_pieces(path: str | os.PathLike[str], *, checked: os.stat_result, size: int = PIECE_BYTES) -> Iterator[bytes]:
    """The bytes of a regular file ``checked`` described, ``size`` at a time (a graph export of
    gigabytes is never held whole). The checks of ``read_regular`` are made when the first piece
    is asked for; the file is closed when the pieces run out or the iterator is closed."""
    fd = _open_checked(path, checked)
    try:
        while True:
            piece = os.read(fd, size)
            if not piece:
                return
            yield piece
    finally:
        os.close(fd)


def _open_checked(path: str | os.PathLike[str], expected: os.stat_result) -> int:
    """A descriptor of ``path`` opened without blocking, refused if it is not the regular file
    ``expected`` described (a path swapped between the check and the open)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino):
            raise FileRefused("changed while it was being read")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_head(path: str | os.PathLike[str], size: int, *, root: str | os.PathLike[str] | None = None) -> bytes:
    """The first ``size`` bytes of a regular file, or b"" when it is refused or unreadable
    (format detection only peeks; the import itself reports the file)."""
    try:
        expected = check_regular(path, root)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, FileRefused):
        return b""
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (expected.st_dev, expected.st_ino):
            return b""
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)


def is_regular(path: Path, root: str | os.PathLike[str] | None = None) -> bool:
    """Whether ``read_regular`` would read ``path`` (for listing a folder's files)."""
    try:
        check_regular(path, root)
    except (OSError, FileRefused):
        return False
    return True
