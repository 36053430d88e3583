"""User and project configuration: ``config.yaml`` in the user config dir and in ``.ctx/``.

Only settings that must apply across commands live here (privacy markers); everything about how a
context is built belongs to lenses. The project file overrides the user file key by key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctx.errors import UsageError
from ctx.paths import find_project_dir, user_config_dir

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
    import yaml

    from ctx import yaml_safe
    from ctx.files import FileRefused, read_regular

    try:
        data = yaml_safe.load(read_regular(path, limit=1 << 20).decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{path}: cannot read configuration: not UTF-8 text") from None
    except (OSError, FileRefused) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"{path}: cannot read configuration: {reason}") from None
    except (yaml.YAMLError, yaml_safe.YamlRefused) as exc:
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


def load_privacy_config() -> PrivacyConfig:
    merged: dict[str, Any] = {}
    sources = [user_config_dir() / CONFIG_FILE]
    project = find_project_dir()
    if project is not None:
        sources.append(project / CONFIG_FILE)
    for path in sources:
        section = _read(path).get("privacy") or {}
        if not isinstance(section, dict):
            raise UsageError(f"{path}: privacy: must be a mapping with 'tags' and/or 'fields'")
        for key in section:
            if key not in ("tags", "fields"):
                raise UsageError(f"{path}: privacy.{key}: unknown key (expected tags, fields)")
            merged[key] = _strings(section[key], f"{path}: privacy.{key}")
    return PrivacyConfig(
        tags=tuple(t.lstrip("#").lower() for t in merged.get("tags", PrivacyConfig.tags)),
        fields=tuple(merged.get("fields", PrivacyConfig.fields)),
    )
