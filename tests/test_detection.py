"""Format detection by evidence: what most note files are, export shapes, renderings, ambiguity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import corpus_path

from ctx.importers.detection import detect

PACKAGE_JSON = {
    "name": "my-garden",
    "scripts": {"docs": "quartz build --serve", "build": "tsc"},
    "docs": ["content"],  # a list called "docs", as a Tana export has
    "dependencies": {"quartz": "^4.0.0"},
}
TSCONFIG = {"compilerOptions": {"target": "esnext", "strict": True}, "include": ["**/*.ts"]}
PACKAGE_LOCK = {"name": "my-garden", "lockfileVersion": 3, "packages": {"": {"name": "my-garden"}}}


def _write(root: Path, files: dict[str, str | dict | list]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2)
        path.write_text(text, encoding="utf-8")
    return root


def _roam_export(titles: list[str]) -> list[dict]:
    return [
        {
            "title": title,
            "uid": f"page-{n}",
            "create-time": 1_600_000_000_000 + n,
            "edit-time": 1_600_000_000_000 + n,
            "children": [
                {"string": f"About {title}, see [[{titles[(n + 1) % len(titles)]}]]", "uid": f"b-{n}-0"},
                {"string": f"Second thought on {title}", "uid": f"b-{n}-1"},
            ],
        }
        for n, title in enumerate(titles)
    ]


def _import_json(run_cli, path: Path, *extra: str) -> dict:
    result = run_cli("import", str(path), "--output", "json", *extra)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _stats(run_cli) -> dict:
    return json.loads(run_cli("stats", "--format", "json").stdout)


# -- config files beside notes -----------------------------------------------------------------


def test_a_site_generator_repository_is_its_markdown_notes(tmp_path, run_cli):
    repo = _write(
        tmp_path / "garden",
        {
            "package.json": PACKAGE_JSON,
            "package-lock.json": PACKAGE_LOCK,
            "tsconfig.json": TSCONFIG,
            "quartz.config.ts": "export default {}\n",
            "README.md": "# My garden\n",
            "content/index.md": "# Home\n\nSee [[Ideas]].\n",
            "content/Ideas.md": "# Ideas\n\nBack [[index]].\n",
            "content/notes/Reading.md": "# Reading\n",
        },
    )
    assert detect(repo).format == "obsidian"
    report = _import_json(run_cli, repo)
    assert report["format"] == "obsidian" and report["notes"] == []
    assert report["files_seen"] == 4  # the README and the three notes; no JSON is read
    assert _stats(run_cli)["nodes_by_type"] == {"note": 4}


@pytest.mark.parametrize("name", ["package.json", "tsconfig.json", "package-lock.json"])
def test_a_config_file_is_never_an_export(tmp_path, run_cli, name):
    content = {"package.json": PACKAGE_JSON, "tsconfig.json": TSCONFIG, "package-lock.json": PACKAGE_LOCK}[name]
    path = _write(tmp_path, {name: content}) / name
    result = run_cli("import", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ctx: error: cannot tell what format {path} is in")
    assert "--format" in result.stderr and "Tana" in result.stderr
    # A folder of nothing but config files holds no notes.
    result = run_cli("import", str(tmp_path))
    assert result.exit_code == 2 and "it holds no notes" in result.stderr


def test_a_tana_export_beside_config_files_is_still_found(tmp_path):
    tana = {"formatVersion": 1, "docs": [{"id": "a", "props": {"name": "Alpha", "created": 1}}]}
    folder = _write(tmp_path / "t", {"workspace.json": tana, "package.json": PACKAGE_JSON, "tsconfig.json": TSCONFIG})
    assert detect(folder).format == "tana"


def test_most_note_files_decide_and_the_rest_are_named(tmp_path, run_cli):
    notes = {f"n{i}.md": f"# Note {i}\n" for i in range(6)}
    folder = _write(tmp_path / "v", {**notes, "old-roam.json": _roam_export(["A", "B", "C"])})
    report = _import_json(run_cli, folder)
    assert report["format"] == "obsidian" and report["files_seen"] == 6
    assert report["notes"] == [
        f"{folder} also holds 1 Roam export, left out of this obsidian import (import it on its"
        f" own, e.g. ctx import {folder / 'old-roam.json'})"
    ]


def test_roam_exports_with_a_readme_are_a_roam_folder(tmp_path):
    folder = _write(
        tmp_path / "r",
        {"README.md": "# Exports\n", "LICENSE.md": "MIT\n", "graph.json": _roam_export(["A", "B", "C"])},
    )
    assert detect(folder).format == "roam"


def test_split_evidence_is_an_error_naming_each_candidate(tmp_path, run_cli):
    folder = _write(
        tmp_path / "mixed",
        {
            "a.md": "# A\n",
            "b.md": "# B\n",
            "c.md": "# C\n",
            "x.json": _roam_export(["X1", "X2", "X3"]),
            "y.json": _roam_export(["Y1", "Y2", "Y3"]),
        },
    )
    result = run_cli("import", str(folder))
    assert result.exit_code == 2
    assert result.stderr == (
        f"ctx: error: cannot tell what format {folder} is in: it holds 3 markdown notes (obsidian)"
        " and 2 Roam exports (roam); pass --format obsidian or --format roam\n"
    )
    assert _import_json(run_cli, folder, "--format", "roam")["files_seen"] == 2


# -- several renderings of the same pages ------------------------------------------------------

TITLES = ["Apollo", "Budget", "Crew", "Launch window", "Risks", "Zeppelin"]


def _roam_to_git(root: Path, titles: list[str]) -> Path:
    export = _roam_export(titles)
    files: dict[str, str | dict | list] = {"README.md": "# roam-to-git backup\n", "json/MyGraph.json": export}
    for page in export:
        body = "\n".join(f"- {block['string']}" for block in page["children"])
        files[f"markdown/{page['title']}.md"] = body + "\n"
        files[f"formatted/{page['title']}.md"] = f"# {page['title']}\n\n{body}\n"
    return _write(root, files)


def test_a_roam_to_git_repository_imports_its_json_once_and_says_so(tmp_path, run_cli):
    repo = _roam_to_git(tmp_path / "backup", TITLES)
    report = _import_json(run_cli, repo)
    assert report["format"] == "roam"
    assert report["source"] == str((repo / "json").resolve())
    assert report["notes"] == [
        f"{repo.resolve()} holds 3 renderings of the same pages (formatted/, json/, markdown/);"
        f" importing only the richest, json/ (roam). To import another instead:"
        f" ctx import {repo.resolve() / 'formatted'}"
    ]
    stats = _stats(run_cli)
    # Every page once: pages + their blocks, nothing from the markdown renderings.
    assert stats["nodes_by_type"]["page"] == len(TITLES)
    assert stats["nodes"] == len(TITLES) * 3
    # The note reaches a person at a terminal too.
    again = run_cli("import", str(repo))
    assert again.exit_code == 0 and "ctx: note: " in again.stderr and "renderings" in again.stderr


def test_markdown_renderings_alone_import_the_larger_one(tmp_path):
    repo = _roam_to_git(tmp_path / "backup", TITLES)
    for file in (repo / "json").iterdir():
        file.unlink()
    (repo / "json").rmdir()
    found = detect(repo)
    assert found.format == "obsidian"
    assert found.root == repo / "formatted"  # it carries the titles too: more bytes, same pages


def test_sibling_folders_of_different_pages_are_one_vault(tmp_path):
    vault = _write(
        tmp_path / "v",
        {f"{folder}/{folder} {i}.md": "text\n" for folder in ("people", "projects") for i in range(5)},
    )
    found = detect(vault)
    assert (found.format, found.root, found.notes) == ("obsidian", vault, ())


def test_a_real_roam_export_beside_its_markdown_rendering(tmp_path, run_cli):
    source = corpus_path("roam-fixtures") / "help-graph-excerpt.json"
    pages = json.loads(source.read_text(encoding="utf-8"))
    repo = tmp_path / "repo"
    (repo / "json").mkdir(parents=True)
    (repo / "json" / source.name).write_bytes(source.read_bytes())
    rendered = 0
    for page in pages:
        title = page["title"]
        if "/" in title or title.startswith("."):
            continue  # no file name for it in a markdown export
        (repo / "markdown").mkdir(exist_ok=True)
        (repo / "markdown" / f"{title}.md").write_text(f"# {title}\n", encoding="utf-8")
        rendered += 1
    assert rendered >= 3
    report = _import_json(run_cli, repo)
    assert (report["format"], report["source"]) == ("roam", str((repo / "json").resolve()))
    by_type = _stats(run_cli)["nodes_by_type"]
    assert by_type["page"] + by_type.get("journal", 0) == len({p["title"].strip().lower() for p in pages})


# -- the recorded format -----------------------------------------------------------------------


def test_a_re_import_reads_the_source_in_its_recorded_format(tmp_path, run_cli):
    vault = _write(tmp_path / "v", {"a.md": "[[b]]\n", "b.md": "B\n", ".obsidian/app.json": "{}"})
    assert _import_json(run_cli, vault, "--format", "foam")["format"] == "foam"
    (vault / "c.md").write_text("C\n", encoding="utf-8")
    again = _import_json(run_cli, vault)
    assert again["format"] == "foam" and again["files_parsed"] == 1
    # --format changes it: every file is read again in the new format.
    switched = _import_json(run_cli, vault, "--format", "obsidian")
    assert switched["format"] == "obsidian" and switched["files_parsed"] == 3
    assert [s["format"] for s in _stats(run_cli)["sources"]] == ["obsidian"]


# -- the real corpora --------------------------------------------------------------------------

# What each corpus is, from shared/corpora/README.md (written by whoever collected them).
CORPORA = {
    "obsidian-dwarves-brain": "obsidian",
    "foam-docs": "foam",
    "dendron-site": "dendron",
    "logseq-docs": "logseq",
    "tana-books": "tana",
    "tana-basic": "tana",
    "roam-fixtures": "roam",
    "notion-export": "notion",
}


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_each_real_corpus_is_detected_as_what_it_is(name):
    found = detect(corpus_path(name))
    assert (found.format, found.root, found.notes) == (CORPORA[name], corpus_path(name), ())


def test_the_musique_notes_folder_holds_two_renderings(tmp_path):
    from conftest import shared_path

    musique = shared_path("eval", "musique")
    found = detect(musique)
    # notes/ and notes-autolinked/ are the same paragraphs; the linked copy is the richer one.
    assert found.format == "obsidian" and found.root == musique / "notes-autolinked"
    assert "2 renderings of the same pages (notes/, notes-autolinked/)" in found.notes[0]
