"""The default lens is described from one source, and every build says which lens it used and why
(issue 20, item 4)."""

from __future__ import annotations

import json
import re

from conftest import REPO


def _auto_row(page: str) -> str:
    row = next(line for line in page.splitlines() if line.startswith("| `auto` (default) |"))
    return row.rstrip(" |").rsplit("| ", 1)[-1]


def test_the_readme_auto_row_and_the_help_say_the_same_thing(run_cli):
    from ctx.assemble import auto_lens_summary

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert _auto_row(readme) == auto_lens_summary(code=True)
    lenses_page = (REPO / "docs" / "lenses.md").read_text(encoding="utf-8")
    assert auto_lens_summary(code=True) in lenses_page
    help_text = " ".join(run_cli("build", "--help").stdout.split())
    assert auto_lens_summary() in help_text
    # The summary names the lenses the chooser really picks.
    from ctx.assemble.lens_choice import GRAPH_LENS, QUESTION_LENS

    assert re.findall(r"`([a-z-]+)`", auto_lens_summary(code=True)) == [QUESTION_LENS, GRAPH_LENS]


def test_every_build_reports_its_lens_choice(demo_db, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    def choice(*args: str) -> dict:
        out = run_cli("build", *args, "--format", "json", db=demo_db)
        assert out.exit_code == 0, out.stderr
        return json.loads(out.stdout)["meta"]["lens_choice"]

    assert choice("what is blocking the launch?")["lens"] == "answer"
    assert choice("what is blocking the launch?", "--lens", "answer") == {"lens": "answer", "why": "--lens answer"}
    assert choice("what is blocking the launch?", "--lens", "planning") == {"lens": "planning", "why": "--lens planning"}
    (tmp_path / ".ctx").mkdir()
    (tmp_path / ".ctx" / "config.yaml").write_text("build:\n  lens: writing\n", encoding="utf-8")
    configured = choice("what is blocking the launch?")
    assert configured["lens"] == "writing" and "build.lens" in configured["why"]
