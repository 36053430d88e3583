"""Roam JSON exports: all three fixture files, counted independently from the JSON."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

from tests.conftest import corpus_path
from tests.outline_syntax import ATTRIBUTE, attribute_targets, edge_counts, references

def _blocks(node: dict):
    for child in node.get("children", []):
        yield child
        yield from _blocks(child)


def expected_counts(files: list[Path]) -> dict[str, object]:
    pages = [p for f in files for p in json.loads(f.read_text(encoding="utf-8"))]
    blocks = [b for p in pages for b in _blocks(p)]
    titles = {p["title"].strip().lower() for p in pages}
    uids = {b["uid"] for b in blocks} | {p["uid"] for p in pages if "uid" in p}
    edges: Counter[str] = Counter(child=len(blocks))
    unresolved = 0
    tags: set[str] = set()
    for block in blocks:
        text = block.get("string", "")
        attribute = ATTRIBUTE.match(text.split("\n", 1)[0])
        if attribute:
            name, targets = attribute.group(1).strip(), attribute_targets(attribute.group(2))
            edges[f"field:{name}"] += len(targets)
            unresolved += sum(t.lower() not in titles for t in targets)
            continue
        found = references(text)
        edges.update(edge_counts(found))
        tags.update(found["tag"])
        unresolved += sum(n.lower() not in titles for n in found["link"])
        unresolved += sum(uid not in uids for uid in found["ref"])
        unresolved += sum(uid not in uids for uid in found["embed_block"])
        unresolved += sum(n.strip().lower() not in titles for n in found["embed_page"])
    return {
        "nodes": len(pages) + len(blocks) + len(tags),
        "edges": {k: v for k, v in edges.items() if v},
        "unresolved": unresolved,
    }


def _stats(run_cli) -> dict:
    return json.loads(run_cli("stats", "--format", "json").stdout)


def test_all_three_roam_files_import_with_counts_from_the_json(run_cli):
    folder = corpus_path("roam-fixtures")
    files = sorted(folder.glob("*.json"))
    assert len(files) == 3
    result = run_cli("import", str(folder))
    assert result.exit_code == 0, result.stderr
    stats = _stats(run_cli)
    expected = expected_counts(files)
    assert stats["sources"][0]["format"] == "roam"
    assert stats["sources"][0]["files"] == 3
    assert stats["nodes"] == expected["nodes"]
    assert stats["edges"] == expected["edges"]
    assert stats["unresolved_links"] == expected["unresolved"]


def test_attributes_become_fields_of_the_page(run_cli):
    run_cli("import", str(corpus_path("roam-fixtures") / "shapes.json"))
    shown = json.loads(run_cli("show", "page-sapiens", "--format", "json").stdout)
    assert shown["fields"]["Author"] == ["Yuval Noah Harari"]
    assert shown["fields"]["Status"] == ["read"]
    assert shown["fields"]["Themes"] == ["history"]  # values given as child blocks
    assert shown["created"] == 1600000000.0 and shown["updated"] == 1600000100.0
    children = [e["id"] for e in shown["edges"] if e["type"] == "child" and e["direction"] == "out"]
    assert children[:3] == ["attr-author", "attr-status", "attr-rating"]


def test_block_references_and_embeds_resolve_by_uid(run_cli):
    run_cli("import", str(corpus_path("roam-fixtures") / "shapes.json"))
    shown = json.loads(run_cli("show", "blk-cognitive", "--format", "json").stdout)
    incoming = Counter((e["type"], e["direction"]) for e in shown["edges"])
    # ref-plain, ref-again and ref-aliased reference it; embed-path embeds it.
    assert incoming[("referenced_by", "in")] + incoming[("ref", "in")] == 3
    missing = json.loads(run_cli("show", "embed-missing", "--format", "json").stdout)
    assert [e for e in missing["edges"] if e["type"] == "embed" and e["id"] is None]


def test_reimport_of_a_changed_export_updates_in_place(tmp_path, run_cli):
    copy = tmp_path / "shapes.json"
    shutil.copy(corpus_path("roam-fixtures") / "shapes.json", copy)
    run_cli("import", str(copy))
    before = _stats(run_cli)
    pages = json.loads(copy.read_text())
    pages[0]["children"].append({"string": "A new thought on [[Dune]]", "uid": "new-block"})
    copy.write_text(json.dumps(pages), encoding="utf-8")
    assert run_cli("import", str(copy)).exit_code == 0
    after = _stats(run_cli)
    assert after["nodes"] == before["nodes"] + 1
    assert after["edges"]["child"] == before["edges"]["child"] + 1
    assert after["edges"]["link"] == before["edges"]["link"] + 1
    assert len(after["sources"]) == 1
    shown = json.loads(run_cli("show", "new-block", "--format", "json").stdout)
    assert shown["title"] == "A new thought on [[Dune]]"
