"""Tana JSON exports: counts checked against an independent walk of the export itself."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.conftest import corpus_path

CONTENT_TYPES = {None, "home", "journal", "journalPart", "codeblock", "url"}
HIDING_TYPES = {"tuple", "metanode", "tagDef", "attrDef", "viewDef", "search"}
INLINE_REF = re.compile(r'data-inlineref-node="([^"]+)"')


def expected_counts(export: Path) -> dict[str, object]:
    """What a faithful import must hold, worked out from the export by ownership trees."""
    docs = {d["id"]: d for d in json.loads(export.read_text(encoding="utf-8"))["docs"]}
    props = {i: d.get("props") or {} for i, d in docs.items()}
    owned = defaultdict(list)
    for node_id, p in props.items():
        owned[p.get("_ownerId")].append(node_id)

    def subtree(roots: list[str]) -> set[str]:
        found, todo = set(), list(roots)
        while todo:
            current = todo.pop()
            if current not in found:
                found.add(current)
                todo.extend(owned.get(current, []))
        return found

    trash_roots = [o for o in owned if isinstance(o, str) and o.endswith("_TRASH")]
    hiding_roots = [
        i for i, p in props.items() if p.get("_docType") in HIDING_TYPES or i.endswith("_SCHEMA")
    ]
    excluded = subtree(trash_roots) | subtree(hiding_roots)
    content = {
        i
        for i, p in props.items()
        if i not in excluded
        and not i.startswith("SYS_")
        and not re.search(r"_[A-Z][A-Z_]{3,}$", i)
        and p.get("_docType") in CONTENT_TYPES
        and p.get("name")
    }

    def supertags(node_id: str) -> list[str]:
        meta = docs.get(props[node_id].get("_metaNodeId") or "", {})
        names = []
        for tuple_id in meta.get("children", []):
            members = docs.get(tuple_id, {}).get("children", [])
            if members[:1] == ["SYS_A13"]:
                names += [props[m]["name"] for m in members[1:] if m in docs]
        return list(dict.fromkeys(names))

    edges: Counter[str] = Counter()
    unresolved = 0
    missing: set[str] = set()
    tag_names: set[str] = set()
    for node_id in content:
        tags = supertags(node_id)
        tag_names.update(t.lower() for t in tags)
        edges["tag"] += len(tags)
        for child in docs[node_id].get("children", []):
            if child not in docs:
                missing.add(child)
            elif props[child].get("_docType") == "tuple":
                members = docs[child].get("children", [])
                if len(members) > 1 and members[0] in docs and not members[0].startswith("SYS_"):
                    for value in members[1:]:
                        if value in content:
                            edges[f"field:{props[members[0]]['name']}"] += 1
            elif child in content:
                edges["child" if props[child].get("_ownerId") == node_id else "link"] += 1
        for target in dict.fromkeys(INLINE_REF.findall(props[node_id]["name"])):
            edges["link"] += 1
            unresolved += target not in content
    return {
        "nodes": len(content) + len(tag_names),
        "edges": dict(edges),
        "unresolved": unresolved,
        "missing": len(missing),
    }


def _stats(run_cli) -> dict:
    return json.loads(run_cli("stats", "--format", "json").stdout)


def _show(run_cli, db_path: Path, node_id: str) -> dict:
    # Tana ids may start with "-", so the id goes after "--".
    result = run_cli("show", "--format", "json", "--db", str(db_path), "--", node_id)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(("corpus", "file"), [("tana-books", "sample-workspace.json"), ("tana-basic", "basic-example.json")])
def test_tana_corpus_counts_match_the_export(corpus, file, run_cli):
    folder = corpus_path(corpus)
    result = run_cli("import", str(folder))
    assert result.exit_code == 0, result.stderr
    expected = expected_counts(folder / file)
    stats = _stats(run_cli)
    assert stats["sources"][0]["format"] == "tana"
    assert stats["nodes"] == expected["nodes"]
    assert stats["edges"] == expected["edges"]
    assert stats["unresolved_links"] == expected["unresolved"]


def test_tana_books_fields_supertags_and_times(run_cli, db_path):
    folder = corpus_path("tana-books")
    run_cli("import", str(folder))
    by_id = {d["id"]: d for d in json.loads((folder / "sample-workspace.json").read_text())["docs"]}
    with sqlite3.connect(db_path) as conn:
        chapter_ids = [r[0] for r in conn.execute("SELECT id FROM nodes WHERE type = 'chapter'")]
    assert chapter_ids
    chapter = by_id[chapter_ids[0]]
    # The export itself says: a Book field tuple among its children, pointing at a book node.
    book_tuple = next(
        by_id[c] for c in chapter["children"]
        if by_id.get(c, {}).get("props", {}).get("_docType") == "tuple"
        and by_id[by_id[c]["children"][0]]["props"].get("name") == "Book"
    )
    book_id = book_tuple["children"][1]
    shown = _show(run_cli, db_path, chapter["id"])
    assert shown["fields"]["Book"] == [by_id[book_id]["props"]["name"]]
    assert shown["type"] == "chapter" and "chapter" in shown["tags"]
    assert shown["created"] == pytest.approx(chapter["props"]["created"] / 1000)
    assert ("field:Book", "out", book_id) in {(e["type"], e["direction"], e["id"]) for e in shown["edges"]}


def _write_export(path: Path, docs: list[dict]) -> Path:
    path.write_text(json.dumps({"formatVersion": 1, "docs": docs}), encoding="utf-8")
    return path


def test_missing_child_ids_are_tolerated_and_counted(tmp_path, run_cli):
    export = _write_export(
        tmp_path / "ws.json",
        [
            {"id": "root", "props": {"name": "Root", "created": 1700000000000},
             "children": ["a", "gone-1", "gone-2"]},
            {"id": "a", "props": {"name": "A child with <span data-inlineref-node=\"nowhere\"></span>",
                                  "_ownerId": "root", "created": 1700000000000}},
        ],
    )
    result = run_cli("import", str(export), "--output", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert any("2 child ids" in w for w in report["warnings"])
    stats = _stats(run_cli)
    assert stats["nodes"] == 2
    assert stats["edges"] == {"child": 1, "link": 1}
    assert stats["unresolved_links"] == 1


def test_reimport_of_a_changed_export_updates_in_place(tmp_path, run_cli, db_path):
    source = corpus_path("tana-basic") / "basic-example.json"
    copy = tmp_path / "basic-example.json"
    shutil.copy(source, copy)
    run_cli("import", str(copy))
    before = _stats(run_cli)
    document = json.loads(copy.read_text())
    target = next(d for d in document["docs"] if d["props"].get("name") and "_docType" not in d["props"]
                  and not d["props"].get("_ownerId", "").endswith("_TRASH") and not d["id"].startswith("SYS"))
    shown = _show(run_cli, db_path, target["id"])
    target["props"]["name"] = "Renamed in place"
    copy.write_text(json.dumps(document), encoding="utf-8")
    assert run_cli("import", str(copy)).exit_code == 0
    after = _stats(run_cli)
    assert after["nodes"] == before["nodes"] and after["sources"] == [
        s | {"imported_at": after["sources"][0]["imported_at"]} for s in before["sources"]
    ]
    renamed = _show(run_cli, db_path, target["id"])
    assert renamed["title"] == "Renamed in place" != shown["title"]
