"""Lens and config files come from the parsed-YAML cache when their text was parsed before: the
same data, without importing PyYAML, re-parsed as soon as the text changes, errors every time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctx import yaml_cache, yaml_safe
from ctx.errors import LensError, UsageError
from ctx.lenses.lookup import builtin_lens_dir, load_lens_file

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

LENS = "name: mine\ndescription: a lens of my own\ndepth: 1\nedges:\n  link: {direction: both, weight: 2}\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    from ctx.lenses import lookup

    folder = tmp_path / "cache"
    monkeypatch.setenv("CTX_CACHE_DIR", str(folder))
    lookup._parsed_lens.cache_clear()  # lenses this process parsed before: read through the cache again
    return folder


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "yaml").glob("*")) if (cache / "yaml").is_dir() else []


@pytest.mark.parametrize("path", sorted(builtin_lens_dir().glob("*.yaml")), ids=lambda p: p.stem)
def test_every_builtin_lens_is_the_same_from_the_cache(path, cache):
    parsed = load_lens_file(path, name=path.stem, source="builtin")
    assert len(_entries(cache)) == 1
    assert load_lens_file(path, name=path.stem, source="builtin") == parsed
    assert yaml_cache.load(path.read_text()) == yaml_safe.load(path.read_text())


def test_a_cached_lens_loads_without_pyyaml(tmp_path, cache):
    lens = tmp_path / "mine.yaml"
    lens.write_text(LENS)
    code = ("import sys; from pathlib import Path; from ctx.lenses.lookup import load_lens_file;"
            f" lens = load_lens_file(Path({str(lens)!r})); print(lens.depth, 'yaml' in sys.modules)")
    env = {**os.environ, "CTX_CACHE_DIR": str(cache)}
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert first.stdout.split() == ["1", "True"]
    assert second.stdout.split() == ["1", "False"]


def test_changed_text_is_parsed_again_even_with_the_same_size_and_time(tmp_path, cache):
    lens = tmp_path / "mine.yaml"
    lens.write_text(LENS)
    stamp = lens.stat()
    assert load_lens_file(lens).depth == 1
    lens.write_text(LENS.replace("depth: 1", "depth: 3"))
    os.utime(lens, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert lens.stat().st_size == stamp.st_size
    assert load_lens_file(lens).depth == 3
    assert len(_entries(cache)) == 2


def test_invalid_yaml_fails_every_time_and_is_not_stored(tmp_path, cache):
    lens = tmp_path / "broken.yaml"
    lens.write_text("name: [unclosed\n")
    for _ in range(2):
        with pytest.raises(LensError, match="invalid YAML"):
            load_lens_file(lens)
    lens.write_text("a: &x 1\nb: *x\n")
    for _ in range(2):
        with pytest.raises(LensError, match="aliases"):
            load_lens_file(lens)
    assert _entries(cache) == []


def test_a_damaged_entry_is_parsed_again(tmp_path, cache):
    lens = tmp_path / "mine.yaml"
    lens.write_text(LENS)
    expected = load_lens_file(lens)
    (entry,) = _entries(cache)
    entry.write_bytes(b"\x00 not marshal data")
    assert load_lens_file(lens) == expected
    entry.write_bytes(entry.read_bytes()[:3])
    assert load_lens_file(lens) == expected


def test_no_cache_folder_only_costs_speed(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("CTX_CACHE_DIR", str(blocked))  # yaml/ cannot be made below a file
    assert yaml_cache.load(LENS) == yaml_safe.load(LENS)
    assert yaml_cache.load(LENS) == yaml_safe.load(LENS)


def test_values_marshal_cannot_hold_are_parsed_every_time(cache):
    text = "when: 2024-05-01\nbad: 2021-02-30\nraw: !!binary aGVsbG8=\nset: !!set {a, b}\n"
    assert yaml_cache.load(text) == yaml_safe.load(text)
    assert yaml_cache.load(text) == yaml_safe.load(text)
    assert _entries(cache) == []  # the date cannot be stored; the document is simply parsed again


def test_config_files_use_the_cache_and_still_report_problems(tmp_path, cache, monkeypatch):
    from ctx.config import load_settings

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CTX_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    (home / "config.yaml").write_text("build:\n  lens: planning\n  max_tokens: 900\n")
    assert (load_settings().lens, load_settings().max_tokens) == ("planning", 900)
    assert len(_entries(cache)) == 1
    (home / "config.yaml").write_text("build:\n  lens: planning\n  max_tokens: [900\n")
    with pytest.raises(UsageError, match="invalid YAML"):
        load_settings()
    (home / "config.yaml").write_text("build:\n  budget: 7\n")
    for _ in range(2):
        with pytest.raises(UsageError, match="unknown key"):
            load_settings()


def test_an_entry_for_other_text_under_the_same_name_is_a_miss(cache):
    """Entries are named by a checksum and hold their text: a collision cannot return the data
    of another document."""
    other = LENS.replace("depth: 1", "depth: 4")
    assert yaml_cache.load(other)["depth"] == 4
    (entry,) = _entries(cache)
    entry.rename(yaml_cache._entry(LENS))  # as if both texts had the same checksum
    assert yaml_cache.load(LENS)["depth"] == 1
    assert yaml_cache.load(LENS)["depth"] == 1
