"""docs/python-api.md: every python example in it runs, in order, in one namespace."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import FIXTURES, REPO

DOC = REPO / "docs" / "python-api.md"


def examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_python_api_document_has_examples():
    assert len(examples()) >= 5


def test_every_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    (tmp_path / "fixtures").symlink_to(FIXTURES, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "python_api_doc"}
    for number, code in enumerate(examples(), start=1):
        exec(compile(code, f"{DOC.name} example {number}", "exec"), namespace)  # noqa: S102 - our own doc
    printed = capsys.readouterr().out
    assert "# Context: Project Apollo" in printed
    assert "not found: no node with id, title or alias 'nothing by this name'" in printed


def test_importing_ctx_loads_nothing_it_does_not_use():
    code = (
        "import sys, ctx; before = set(sys.modules); ctx.__version__;"
        " print(sorted(m for m in sys.modules if m.startswith('ctx')));"
        " from ctx import Graph; print(Graph.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['ctx']"
    assert out[1] == "ctx.graph"
