"""Finding and loading lens files: a path, the project's ``.ctx/lenses``, the user's lenses, the built-ins."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ctx.errors import LensError, UsageError
from ctx.lenses.model import Lens
from ctx.lenses.validate import parse_lens


def builtin_lens_dir() -> Path:
    """Built-in lenses: inside the wheel as ``ctx/_builtin_lenses``, else ``<repo>/lenses``."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "_builtin_lenses"
    if packaged.is_dir():
        return packaged
    return package.parent.parent / "lenses"


def builtin_lens_names() -> list[str]:
    """The built-in lenses' names, read from their folder (one directory listing, no parsing)."""
    return sorted(p.stem for p in builtin_lens_dir().iterdir() if p.suffix in (".yaml", ".yml"))


def lens_dirs() -> list[tuple[str, Path]]:
    """Where named lenses live, highest precedence first."""
    from ctx.paths import find_project_dir, user_config_dir

    dirs: list[tuple[str, Path]] = []
    project = find_project_dir()
    if project is not None:
        dirs.append(("project", project / "lenses"))
    dirs.append(("user", user_config_dir() / "lenses"))
    dirs.append(("builtin", builtin_lens_dir()))
    return dirs


def _looks_like_path(name: str) -> bool:
    return name.endswith((".yaml", ".yml")) or "/" in name or "\\" in name


LENS_FILE_MAX_BYTES = 1 << 20  # a lens is a page of YAML; anything far larger is not one
LENS_NAME_MAX_CHARS = 100


def lens_name_problem(name: str) -> str | None:
    """Why ``name`` is not a plain lens name (one that can only mean a file in a lens folder).

    Whoever cannot be trusted with the file system (an agent over MCP) may choose a lens only by
    such a name: no separator, no parent or hidden part, no drive or stream (``C:``, ``a:b``), no
    file suffix, no control character. The answer never depends on what exists on disk.
    """
    if not isinstance(name, str) or not name:
        return "a lens name is required"
    if (
        len(name) > LENS_NAME_MAX_CHARS
        or any(ch in name for ch in "/\\:")
        or name.startswith((".", "~"))
        or ".." in name
        or name.lower().endswith((".yaml", ".yml"))
        or not name.isprintable()
        or name != name.strip()
    ):
        shown = repr(name) if len(name) <= LENS_NAME_MAX_CHARS else "a string that long"
        return f"{shown} is not a lens name; give the name of a lens (a path is not accepted here)"
    return None


def read_lens_text(path: Path) -> str:
    """A lens file's text: a regular file (never a FIFO or device), at most LENS_FILE_MAX_BYTES."""
    from ctx.files import FileRefused, read_regular

    where = str(path)
    try:
        data = read_regular(path, limit=LENS_FILE_MAX_BYTES)
    except FileNotFoundError:
        raise UsageError(f"lens file {where} does not exist") from None
    except FileRefused as exc:
        raise UsageError(f"cannot read lens file {where}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot read lens file {where}: {exc.strerror or exc.__class__.__name__}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read lens file {where}: not UTF-8 text (byte {exc.start})") from None


def load_lens_file(path: Path, *, name: str | None = None, source: str = "file") -> Lens:
    return _parsed_lens(read_lens_text(path), str(path), name or path.stem, source)


# A long-lived process (the MCP server) loads the lens on every call: the file is read each time
# (an edit is seen at once), its parsed model kept by its text (lenses are frozen). ~1 ms a call.
@lru_cache(maxsize=32)
def _parsed_lens(text: str, where: str, name: str, source: str) -> Lens:
    from ctx import yaml_cache

    try:
        data = yaml_cache.load(text)
    except Exception as exc:
        # PyYAML is imported only here: a lens parsed before comes from the cache without it.
        import yaml

        from ctx import yaml_safe

        if not isinstance(exc, (yaml.YAMLError, yaml_safe.YamlRefused)):
            raise
        line, problem = yaml_safe.problem_parts(exc)
        raise LensError([f"{where}: {line}: invalid YAML: {problem}"]) from None
    return parse_lens(data, where=where, name=name, source=source)


def _unknown_lens(name: str) -> UsageError:
    import difflib

    # "auto" is the default, chosen per build from the topics (ctx.assemble.lens_choice).
    names = sorted({entry.name for entry in list_lenses()} | {"auto"})
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UsageError(f"no lens named {name!r}; {hint}available: {', '.join(names)}")


def find_named_lens(name: str) -> tuple[str, Path]:
    """(source, path) of the lens called ``name`` in the lens folders; never a path.

    UsageError for anything that is not a plain name (see ``lens_name_problem``) or names no lens.
    """
    problem = lens_name_problem(name)
    if problem is not None:
        raise UsageError(problem)
    for source, folder in lens_dirs():
        for suffix in (".yaml", ".yml"):
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                return source, candidate
    raise _unknown_lens(name)


def find_lens_path(name: str) -> tuple[str, Path]:
    """(source, path) of the lens called ``name`` (or at that path); UsageError if there is none.

    Paths are for the user's own shell; callers acting for someone else use ``find_named_lens``.
    """
    if _looks_like_path(name):
        path = Path(name).expanduser()
        if not path.is_file():
            raise UsageError(f"lens file {name} does not exist")
        return "file", path
    return find_named_lens(name)


def load_lens(name: str) -> Lens:
    source, path = find_lens_path(name)
    return load_lens_file(path, name=None if source == "file" else name, source=source)


def load_named_lens(name: str) -> Lens:
    """A lens by name from the lens folders only: what an agent may choose (no file paths)."""
    source, path = find_named_lens(name)
    return load_lens_file(path, name=name, source=source)


@dataclass(frozen=True)
class LensEntry:
    name: str
    source: str
    path: Path
    shadowed: bool  # a lens of the same name with higher precedence hides this one


def list_lenses() -> list[LensEntry]:
    entries: list[LensEntry] = []
    seen: set[str] = set()
    for source, folder in lens_dirs():
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix not in (".yaml", ".yml") or not path.is_file():
                continue
            entries.append(LensEntry(path.stem, source, path, path.stem in seen))
            seen.add(path.stem)
    return sorted(entries, key=lambda e: (e.name, e.shadowed))
