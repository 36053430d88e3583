"""Names from files the user did not write never drive the terminal (issue 24, low): an escape
sequence or a newline in a file name (or a note) is printed as its escape in every text output and
stderr line, and kept exact in JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CliResult

EVIL = "Evil\x1b[2J\x1b]0;pwned\x07 name"
NEWLINE = "Two\nlines"


def cli(*args: str) -> CliResult:
    from typer.testing import CliRunner

    from ctx.app import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


def test_control_characters_in_names_are_escaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / f"{EVIL}.md").write_text("Zorblat note with a bell \x07 inside.\n", encoding="utf-8")
    (vault / f"{NEWLINE}.md").write_text("Zorblat second.\n", encoding="utf-8")
    db = str(tmp_path / "g.db")
    outputs = [cli("import", str(vault), "--db", db), cli("search", "zorblat", "--db", db),
               cli("show", EVIL, "--db", db), cli("show", NEWLINE, "--db", db), cli("stats", "--db", db),
               cli("sources", "--db", db), cli("show", "Evil\x1b[31m missing", "--db", db)]
    for result in outputs:
        for stream in (result.stdout, result.stderr):
            assert "\x1b" not in stream and "\x07" not in stream
            assert "Two\nlines" not in stream
    search = outputs[1].stdout
    assert "Evil\\x1b[2J\\x1b]0;pwned\\x07 name" in search and "Two\\nlines" in search
    # JSON keeps the exact name (its own escaping makes it safe) as the id; a title is one line.
    found = json.loads(cli("search", "zorblat", "--format", "json", "--db", db).stdout)
    assert {r["id"] for r in found["results"]} == {EVIL, NEWLINE}
    assert {r["title"] for r in found["results"]} == {EVIL, NEWLINE.replace("\n", " ")}


def test_printable_leaves_ordinary_text_alone() -> None:
    from ctx.errors import printable

    text = "Café — naïve\ttabs, 日本語, emoji 🚀"
    assert printable(text) is text or printable(text) == text
    assert printable("a\u202eb") == "a\\u202eb"
