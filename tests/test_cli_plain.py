"""`--plain` (print what a pipe would get) is accepted after any subcommand's name, not only before
it (issue 24, low: 8 subcommands refused it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or "ctx"


@pytest.fixture(scope="module")
def own_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graph of this module's own: sync and trust write to it."""
    from conftest import FIXTURES, imported_graph

    return imported_graph(tmp_path_factory, FIXTURES / "demo-vault")


@pytest.mark.parametrize("argv", [["sources"], ["stats"], ["lens", "list"], ["doctor"], ["sync", "--no-embed"], ["trust"]])
def test_every_printing_subcommand_takes_plain(argv: list[str], own_db: Path, tmp_path: Path) -> None:
    env = {"CTX_HOME": str(tmp_path / "home"), "CTX_DB": str(own_db), "PATH": str(Path(sys.executable).parent)}
    plain = subprocess.run([CTX, *argv, "--plain"], env=env, capture_output=True, text=True, timeout=120)
    assert "No such option" not in plain.stderr, plain.stderr
    piped = subprocess.run([CTX, *argv], env=env, capture_output=True, text=True, timeout=120)
    assert (plain.returncode, plain.stdout) == (piped.returncode, piped.stdout)


def test_plain_after_double_dash_is_an_argument() -> None:
    from ctx.app import plain_first

    assert plain_first(["search", "--", "--plain"]) == ["search", "--", "--plain"]
    assert plain_first(["sources", "--plain", "--db", "g.db"]) == ["--plain", "sources", "--db", "g.db"]
