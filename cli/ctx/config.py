"""User and project configuration: ``config.yaml`` in the user config dir and in ``.ctx/``.

Settings that apply across commands live here: privacy markers, the graph file, the defaults of
`ctx build` (lens, budget, encoding) and whether builds first re-import changed sources; what a
lens means belongs to lenses. The project file overrides the user file key by key, and a flag on
the command line overrides both; except privacy, where the project file only adds markers for the
sources inside the project (what widens visibility comes from the user alone).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctx.errors import UsageError
from ctx.paths import DB_FILE_NAME, db_url_scheme, find_project_dir, user_config_dir, user_data_dir

CONFIG_FILE = "config.yaml"


@dataclass(frozen=True)
class PrivacyConfig:
    # A node carrying any of these tags, or any of these fields set to a true value, is private,
    # and so is everything below it in an outline or hierarchy.
    tags: tuple[str, ...] = ("private",)
    fields: tuple[str, ...] = ("private",)

    def fingerprint(self) -> str:
        return "tags=" + ",".join(sorted(self.tags)) + ";fields=" + ",".join(sorted(self.fields))


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    from ctx import yaml_cache
    from ctx.files import FileRefused, read_regular

    try:
        text = read_regular(path, limit=1 << 20).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot read configuration: not UTF-8 text") from None
    except (OSError, FileRefused) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"{path}: cannot read configuration: {reason}") from None
    try:
        data = yaml_cache.load(text)
    except Exception as exc:
        # PyYAML is imported only here: a file parsed before comes from the cache without it.
        import yaml

        from ctx import yaml_safe

        if not isinstance(exc, (yaml.YAMLError, yaml_safe.YamlRefused)):
            raise
        line, problem = yaml_safe.problem_parts(exc)
        raise UsageError(f"{path}: {line}: invalid YAML: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(f"{path}: configuration must be a mapping")
    return data


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise UsageError(f"{where}: must be a string or a list of strings")


def _privacy_section(path: Path) -> dict[str, tuple[str, ...]]:
    section = _read(path).get("privacy") or {}
    if not isinstance(section, dict):
        raise UsageError(f"{path}: privacy: must be a mapping with 'tags' and/or 'fields'")
    out: dict[str, tuple[str, ...]] = {}
    for key in section:
        if key not in ("tags", "fields"):
            raise UsageError(f"{path}: privacy.{key}: unknown key (expected tags, fields)")
        out[key] = _strings(section[key], f"{path}: privacy.{key}")
    return out


def load_privacy_config() -> PrivacyConfig:
    """The user's own privacy markers (``privacy:`` in the user's config file), else the defaults.

    Only the user's file may replace the markers, and so widen what is visible: a project's file
    only adds markers for the sources inside that project (``project_privacy_markers``), so a
    downloaded folder cannot make the user's private notes public (issue 24, H2)."""
    merged = _privacy_section(user_config_dir() / CONFIG_FILE)
    return PrivacyConfig(
        tags=tuple(t.lstrip("#").lower() for t in merged.get("tags", PrivacyConfig.tags)),
        fields=tuple(merged.get("fields", PrivacyConfig.fields)),
    )


def project_privacy_markers(source_root: Path) -> PrivacyConfig:
    """The markers the project holding ``source_root`` adds (``privacy:`` in the nearest
    ``.ctx/config.yaml`` at or above it), whatever folder ctx runs in; none outside a project."""
    folder = source_root if source_root.is_dir() else source_root.parent
    project = find_project_dir(folder)
    if project is None:
        return PrivacyConfig((), ())
    found = _privacy_section(project / CONFIG_FILE)
    return PrivacyConfig(
        tags=tuple(t.lstrip("#").lower() for t in found.get("tags", ())),
        fields=found.get("fields", ()),
    )


@dataclass(frozen=True)
class PrivacyRules:
    """The graph's privacy markers: the user's, plus what a project adds for its own sources."""

    user: PrivacyConfig = PrivacyConfig()
    added: tuple[tuple[int, PrivacyConfig], ...] = ()  # (source id, markers its project adds)

    def for_source(self, source_id: int) -> PrivacyConfig:
        extra = dict(self.added).get(source_id)
        if extra is None:
            return self.user
        return PrivacyConfig(
            tuple(dict.fromkeys(self.user.tags + extra.tags)), tuple(dict.fromkeys(self.user.fields + extra.fields))
        )

    def fingerprint(self) -> str:
        # The user's markers alone read as before: a graph without project markers is not
        # recomputed for nothing after the upgrade.
        return self.user.fingerprint() + "".join(f"|source {sid}: {extra.fingerprint()}" for sid, extra in self.added)


def graph_privacy_rules(store: Any) -> PrivacyRules:
    """The rules for the graph of ``store`` (a GraphStore), from its registered sources as its
    reader sees them (inside an import session: the source being imported too)."""
    return privacy_rules([(s.id, s.root) for s in store.reader(include_private=True).sources()])


def privacy_rules(sources: list[tuple[int, str]]) -> PrivacyRules:
    """The rules for a graph whose sources are ``sources`` ((id, root) pairs)."""
    added = []
    for source_id, root in sorted(sources):
        extra = project_privacy_markers(Path(root))
        if extra.tags or extra.fields:
            added.append((source_id, extra))
    return PrivacyRules(load_privacy_config(), tuple(added))


# -- everything else: graph, build defaults, sync ------------------------------------------------

# Section -> key -> (type, what it is); the single place that says what a config file may hold.
SETTINGS: dict[str, dict[str, tuple[type, str]]] = {
    "": {"graph": (str, "graph database file (relative to the config file's folder)")},
    "build": {
        "lens": (str, "default --lens"),
        "max_tokens": (int, "default --max-tokens"),
        "encoding": (str, "default --encoding"),
    },
    "sync": {
        "before_build": (bool, "re-import changed sources before ctx build and MCP calls"),
        "interval": (float, "seconds between two such checks"),
    },
    "contexts": {
        "keep": (int, "build manifests kept per topic, lens, depth, budget, encoding and format (for --since)"),
        "keep_total": (int, "build manifests kept in all"),
    },
    "import": {
        "max_note_chars": (int, "a note's text is cut to this many characters at import"),
        "max_title_chars": (int, "a title is cut to this many characters at import"),
    },
}
DEFAULT_SYNC_INTERVAL = 5.0
DEFAULT_CONTEXTS_KEEP = 8
DEFAULT_CONTEXTS_KEEP_TOTAL = 500


@dataclass(frozen=True)
class Settings:
    graph: Path | str | None = None  # a str: a database URL (postgresql://...)
    graph_in_project: bool = False  # set by the project's config file, not the user's
    lens: str | None = None
    max_tokens: int | None = None
    encoding: str | None = None
    sync_before_build: bool = False
    sync_interval: float = DEFAULT_SYNC_INTERVAL
    max_note_chars: int | None = None
    max_title_chars: int | None = None
    contexts_keep: int = DEFAULT_CONTEXTS_KEEP
    contexts_keep_total: int = DEFAULT_CONTEXTS_KEEP_TOTAL


def config_files() -> list[Path]:
    """The user's config file, then the project's (which wins), whether or not they exist."""
    files = [user_config_dir() / CONFIG_FILE]
    project = find_project_dir()
    if project is not None:
        files.append(project / CONFIG_FILE)
    return files


def _typed(value: Any, kind: type, where: str) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        wanted = {bool: "true or false", str: "a string", int: "a whole number", float: "a number"}[kind]
        raise UsageError(f"{where}: must be {wanted}")
    if isinstance(value, (int, float)) and kind in (int, float) and value < 0:
        raise UsageError(f"{where}: must not be negative")
    return value


def _settings_of(path: Path, *, project: bool = False) -> dict[str, Any]:
    data = _read(path)
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "privacy":
            continue
        if key in SETTINGS[""]:
            text = _typed(value, str, f"{path}: {key}")
            try:
                url = db_url_scheme(text) is not None
            except UsageError as exc:
                raise UsageError(f"{path}: {key}: {exc}") from None
            if url:
                # A project's file is in a folder anyone may have cloned: it must not send the
                # user's notes to a server it names (issue 24, H3). A server is named in the
                # user's own config file, $CTX_DB or --db.
                if project:
                    raise UsageError(
                        f"{path}: {key}: a project's config cannot name a database server;"
                        " set it in your own config file, $CTX_DB or --db"
                    )
                out[key] = text
                continue
            out[key] = (path.parent / Path(text).expanduser()).resolve()
            # A project's file names a graph inside the project (the folder holding .ctx/): it
            # must not make ctx create folders or write a graph anywhere else (issue 24, H3).
            root = path.parent.parent.resolve()
            if project and not out[key].is_relative_to(root):
                raise UsageError(f"{path}: {key}: must name a file inside the project {root}, not {out[key]}")
            continue
        if key not in SETTINGS:
            known = ", ".join([*SETTINGS[""], *[k for k in SETTINGS if k], "privacy"])
            raise UsageError(f"{path}: {key}: unknown key (expected {known})")
        if not isinstance(value, dict):
            raise UsageError(f"{path}: {key}: must be a mapping")
        for name, item in value.items():
            if name not in SETTINGS[key]:
                raise UsageError(f"{path}: {key}.{name}: unknown key (expected {', '.join(SETTINGS[key])})")
            out[f"{key}.{name}"] = _typed(item, SETTINGS[key][name][0], f"{path}: {key}.{name}")
            if project and (key, name) == ("build", "lens"):
                _project_lens(path, out["build.lens"])
    return out


def _project_lens(path: Path, lens: str) -> None:
    """A project's file names its default lens by name only (a built-in, the user's, or one in the
    project's own ``.ctx/lenses/``): a path would have every build, and every MCP call, read a file
    anywhere on the machine a cloned folder chose, and show parts of it in errors."""
    from ctx.lenses.lookup import lens_name_problem

    if lens_name_problem(lens) is not None:
        raise UsageError(
            f"{path}: build.lens: a project's config names a lens, not a file ({lens!r});"
            " put the file in the project's .ctx/lenses/ and give its name"
        )


def load_settings() -> Settings:
    """The merged settings of the user and project config files (read once per process state;
    within ``settings_read_once``, once)."""
    once = getattr(_one_call, "depth", 0)
    if once:
        kept: Settings | None = getattr(_one_call, "settings", None)
        if kept is not None:
            return kept
    files = tuple((path, _stamp(path)) for path in config_files())
    settings = _load_settings(files)
    if once:
        _one_call.settings = settings
    return settings


# Per thread: a server answers calls on several threads, each call its own scope.
_one_call = threading.local()


@contextmanager
def settings_read_once() -> Iterator[None]:
    """Within (on this thread): the config files are looked for and stamped once, at the first
    ``load_settings``; later asks get that answer. Finding them costs ~10 ``stat`` calls and an
    MCP call asks four times (lens and budget, the freshness check, its interval, the manifest's
    keep counts); a server wraps each call, so a file edited between two calls is read by the
    second."""
    depth = getattr(_one_call, "depth", 0)
    _one_call.depth = depth + 1
    try:
        yield
    finally:
        _one_call.depth = depth
        if not depth:
            _one_call.settings = None


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _load_settings(files: tuple[tuple[Path, tuple[int, int] | None], ...]) -> Settings:
    # Keyed by each file's stamp: a long-running server sees an edited config file.
    merged: dict[str, Any] = {}
    graph_in_project = False
    for index, (path, stamp) in enumerate(files):
        if stamp is not None:
            found = _settings_of(path, project=index > 0)
            merged.update(found)
            graph_in_project = graph_in_project or (index > 0 and "graph" in found)
    return Settings(
        graph=merged.get("graph"),
        graph_in_project=graph_in_project,
        lens=merged.get("build.lens"),
        max_tokens=merged.get("build.max_tokens"),
        encoding=merged.get("build.encoding"),
        sync_before_build=merged.get("sync.before_build", False),
        sync_interval=merged.get("sync.interval", DEFAULT_SYNC_INTERVAL),
        max_note_chars=merged.get("import.max_note_chars"),
        max_title_chars=merged.get("import.max_title_chars"),
        contexts_keep=merged.get("contexts.keep", DEFAULT_CONTEXTS_KEEP),
        contexts_keep_total=merged.get("contexts.keep_total", DEFAULT_CONTEXTS_KEEP_TOTAL),
    )


@dataclass(frozen=True)
class ImportLimits:
    # A note or title past these sizes is cut at import (with a warning): one 50 MB note or
    # 10 MB title would otherwise be tokenized, scored and shortened in every build that
    # reaches it, however unrelated. A million characters is ~250k tokens, far past any budget.
    max_note_chars: int = 1_000_000
    max_title_chars: int = 1_000


def load_import_limits() -> ImportLimits:
    """``import: {max_note_chars: N, max_title_chars: N}`` from the config files, else defaults."""
    settings = load_settings()
    limits = ImportLimits(
        max_note_chars=settings.max_note_chars or ImportLimits.max_note_chars,
        max_title_chars=settings.max_title_chars or ImportLimits.max_title_chars,
    )
    return limits


# ---------------------------------------------------------------------------------------------
# Which graph a command opens: ``--db`` > ``$CTX_DB`` > ``graph:`` in the project's
# ``.ctx/config.yaml`` > the nearest ``.ctx/graph.db`` in the current folder or a parent > ``graph:``
# in the user's config file > ``$CTX_HOME/graph.db`` (default ``$XDG_DATA_HOME/ctx``, i.e.
# ``~/.local/share/ctx``). A user never has to think about it, and a project can pin its own graph.


def default_db_path() -> Path | str:
    """The graph this command opens: a file path, or a database URL kept as the user wrote it."""
    if os.environ.get("CTX_DB"):
        value = os.environ["CTX_DB"]
        return value if db_url_scheme(value) is not None else Path(value).expanduser()
    settings = load_settings()
    if settings.graph is not None and settings.graph_in_project:
        return settings.graph
    project = find_project_dir()
    if project is not None and (project / DB_FILE_NAME).exists():
        return project / DB_FILE_NAME
    if settings.graph is not None:
        return settings.graph
    return user_data_dir() / DB_FILE_NAME


def resolve_db_path(explicit: str | os.PathLike[str] | None) -> Path | str:
    if explicit:
        scheme = db_url_scheme(explicit)
        if scheme is not None:
            text = os.fspath(explicit)
            # A Path-typed option folds "postgresql://h/db" to "postgresql:/h/db": put it back.
            if not text[len(scheme) + 1 :].startswith("//"):
                text = f"{scheme}:/{text[len(scheme) + 1 :]}"
            return text
        return Path(explicit).expanduser()
    path = default_db_path()
    db_url_scheme(path)
    return path
