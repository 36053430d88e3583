"""The wheel carries the built-in lenses, and an installed wheel finds them without the repo."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("hatchling", reason="hatchling (in the dev extra) builds the wheel")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return built


def test_wheel_ships_every_builtin_lens(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {Path(n).name for n in names if n.startswith("ctx/_builtin_lenses/")}
    in_repo = {p.name for p in (REPO / "lenses").glob("*.yaml")}
    assert in_repo and shipped == in_repo
    assert "ctx/app.py" in names
    # The console script starts at ctx.entry, whose fast path answers `ctx build` without Typer.
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    assert "ctx = ctx.entry:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_wheel_lists_lenses_outside_the_repo(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(target), "CTX_HOME": str(tmp_path / "home")}
    code = (
        "import ctx.lenses as l; "
        "print(l.builtin_lens_dir()); "
        "print(' '.join(sorted(e.name for e in l.list_lenses())))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    where, names = result.stdout.splitlines()
    assert where.startswith(str(target))
    assert set(names.split()) == {p.stem for p in (REPO / "lenses").glob("*.yaml")}
