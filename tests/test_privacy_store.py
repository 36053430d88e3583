"""Private nodes (tag, field, or below a private ancestor) never leak from search, show or stats."""

from __future__ import annotations

import json
from pathlib import Path

MARKER = "zqxmarker"  # a word no test fixture uses elsewhere


def _graph(tmp_path: Path) -> Path:
    records = [
        {"id": "public", "title": "Launch plan", "body": "Launch plan for the rocket."},
        {"id": "secret", "title": "Salary review", "body": f"Launch budget {MARKER} numbers.",
         "tags": ["private"]},
        {"id": "secret-child", "title": "Bonus table", "body": f"Launch {MARKER} bonus.",
         "parent": "secret"},
        {"id": "flagged", "title": "Health note", "body": f"Launch {MARKER} health.",
         "fields": {"private": True}},
        {"id": "open-child", "title": "Agenda", "body": "Launch agenda.", "parent": "public"},
    ]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_private_nodes_are_flagged_with_descendants(tmp_path, run_cli):
    assert run_cli("import", str(_graph(tmp_path))).exit_code == 0
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    # secret, its child, flagged, and the tag node #private that only `secret` carries.
    assert stats["private_nodes"] == 4


def test_search_withholds_private_and_says_nothing_about_them(tmp_path, run_cli):
    run_cli("import", str(_graph(tmp_path)))
    result = run_cli("search", "launch", "--format", "json")
    data = json.loads(result.stdout)
    assert {r["id"] for r in data["results"]} == {"public", "open-child"}
    assert "withheld_private" not in data
    assert MARKER not in result.stdout
    text = run_cli("search", "bonus health")
    assert MARKER not in text.stdout and "Bonus" not in text.stdout
    assert text.stderr == ""
    shown = run_cli("search", MARKER, "--include-private", "--format", "json")
    assert json.loads(shown.stdout)["count"] == 3


def test_show_hides_private_nodes_and_edges_to_them(tmp_path, run_cli):
    run_cli("import", str(_graph(tmp_path)))
    result = run_cli("show", "secret")
    # Word for word what a missing node gets: a hint would say a private node has this name.
    assert result.exit_code == 3 and result.stderr == "ctx: error: no node with id, title or alias 'secret'\n"
    assert MARKER not in result.stdout
    assert run_cli("show", "Bonus table").exit_code == 3
    assert run_cli("show", "secret", "--include-private").exit_code == 0
    # Only a private node carries #private, so its tag node is private too.
    assert run_cli("show", "tag:private").exit_code == 3
    tag_view = run_cli("show", "tag:private", "--format", "json", "--include-private")
    assert {e["id"] for e in json.loads(tag_view.stdout)["edges"]} == {"secret"}


def test_privacy_settings_from_config_apply_on_next_import(tmp_path, run_cli, monkeypatch):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    src = _graph(tmp_path)
    run_cli("import", str(src))
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text("privacy:\n  tags: [secretive]\n  fields: []\n")
    run_cli("import", str(src))  # nothing changed in the file, but the settings did
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    assert stats["private_nodes"] == 0
