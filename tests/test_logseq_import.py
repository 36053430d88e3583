"""Logseq graphs: the logseq-docs graph counted independently from its markdown files."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from collections import Counter
from pathlib import Path

from tests.conftest import corpus_path
from tests.outline_syntax import ATTRIBUTE, PAGE, WORD_TAG, attribute_targets, edge_counts, references

NOT_FIELDS = {"id", "collapsed", "heading", "background-color", "title", "alias", "tags",
              "created-at", "created_at", "updated-at", "updated_at"}
BULLET = re.compile(r"^ *-( |$)")
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _names(value: str) -> list[str]:
    found = PAGE.findall(value) + [t for t in WORD_TAG.findall(PAGE.sub(" ", value)) if not t.isdigit()]
    return found or [v.strip().lstrip("#") for v in value.split(",") if v.strip()]


def read_page(path: Path) -> tuple[dict[str, str], list[dict]]:
    """Page properties and blocks ({"text", "props"}) of one page, by indentation alone."""
    text = path.read_text(encoding="utf-8")
    props: dict[str, str] = {}
    if text.startswith("---"):
        end = text.find("\n---", 3)
        for line in text[3:end].splitlines():
            if ":" in line:
                key, value = line.split(":", 1)
                props[key.strip()] = value.strip().strip("\"'")
        text = text[end + 4 :]
    blocks: list[dict] = []
    fence, in_paragraph, last_indent = False, False, None
    for line in text.expandtabs(4).splitlines():
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if fence:
            blocks[-1]["text"].append(line)
            fence = not stripped.startswith("```")
            continue
        attribute = ATTRIBUTE.match(line)
        if BULLET.match(line):
            first = line.lstrip()[1:].strip()
            block = {"text": [first], "props": []}
            if ATTRIBUTE.match(first) and ATTRIBUTE.match(first).group(2).strip():
                block = {"text": [], "props": [ATTRIBUTE.match(first).groups()]}
            blocks.append(block)
            in_paragraph, last_indent = False, indent
            fence = first.startswith("```") and first.count("```") == 1
            continue
        if not stripped:
            in_paragraph = False
            continue
        if last_indent is None and attribute:
            props[attribute.group(1).strip()] = attribute.group(2).strip()
            continue
        if (last_indent is None or indent <= last_indent) and not in_paragraph:
            blocks.append({"text": [stripped], "props": []})
            in_paragraph, last_indent = True, indent
        elif attribute and attribute.group(2).strip():
            blocks[-1]["props"].append(attribute.groups())
        else:
            blocks[-1]["text"].append(stripped)
        fence = stripped.startswith("```") and stripped.count("```") == 1
    return props, blocks


def _journal_title(stem: str) -> str:
    year, month, day = (int(p) for p in stem.split("_"))
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{MONTHS[month - 1]} {day}{suffix}, {year}"


def expected_counts(graph: Path) -> dict[str, object]:
    files = sorted(graph.glob("pages/*.md")) + sorted(graph.glob("journals/*.md"))
    edges: Counter[str] = Counter()
    types: Counter[str] = Counter()
    names: set[str] = set()  # every name a page answers to, lowercased
    titles: list[str] = []
    tag_names: set[str] = set()
    block_ids: set[str] = set()
    links: list[str] = []
    refs: list[str] = []
    fields = 0
    for file in files:
        props, blocks = read_page(file)
        journal = file.parent.name == "journals"
        default = _journal_title(file.stem) if journal else file.stem.replace("___", "/").replace("%2F", "/")
        title = props.get("title") or default
        titles.append(title)
        names.update({title.lower(), default.lower()})
        names.update(a.lower() for a in _names(props.get("alias", "")) if props.get("alias"))
        if journal:
            names.add(file.stem.replace("_", "-"))
        types["journal" if journal else "page"] += 1
        types["block"] += len(blocks)
        edges["child"] += len(blocks)
        owners = [(props.items(), "")] + [(b["props"], "\n".join(b["text"])) for b in blocks]
        for properties, text in owners:
            tags = []
            for key, value in properties:
                key, value = key.strip(), value.strip()
                if key.lower() == "tags":
                    tags += _names(value)
                elif key.lower() == "id":
                    block_ids.add(value.lower())
                elif key.lower() not in NOT_FIELDS and value:
                    fields += 1
                    targets = attribute_targets(value)
                    edges[f"field:{key}"] += len(targets)
                    links += targets
            found = references(text)
            tags += found["tag"]
            distinct_tags = {t.lower() for t in tags}
            edges["tag"] += len(distinct_tags)
            tag_names |= distinct_tags
            edges.update(edge_counts({k: v for k, v in found.items() if k != "tag"}))
            links += found["link"] + found["embed_page"]
            refs += found["ref"] + found["embed_block"]
    # Namespace parents: a child edge per level, and a stub page where no file names the parent.
    stubs: set[str] = set()
    for title in titles:
        parts = title.split("/")
        for depth in range(len(parts) - 1, 0, -1):
            parent = "/".join(parts[:depth]).lower()
            edges["child"] += 1
            if parent in names or parent in stubs:
                break
            stubs.add(parent)
    names |= stubs
    types["page"] += len(stubs)
    types["tag"] = len(tag_names)
    return {
        "types": +types,
        "edges": +edges,
        "fields": fields,
        "unresolved": sum(n.strip().lower() not in names for n in links)
        + sum(r.lower() not in block_ids for r in refs),
    }


def test_logseq_docs_counts_match_the_markdown(run_cli, db_path):
    graph = corpus_path("logseq-docs")
    result = run_cli("import", str(graph), "--output", "json")
    assert result.exit_code == 0, result.stderr
    org = len(list(graph.glob("*/*.org")))
    assert any(f"{org} org-mode pages skipped" in w for w in json.loads(result.stdout)["warnings"])
    expected = expected_counts(graph)
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    assert stats["sources"][0]["format"] == "logseq"
    assert stats["nodes_by_type"] == expected["types"]
    assert stats["edges"] == expected["edges"]
    assert stats["unresolved_links"] == expected["unresolved"]
    with sqlite3.connect(db_path) as conn:
        stored_fields = conn.execute(
            "SELECT count(*) FROM nodes n, json_each(n.fields) f WHERE n.type IN ('page', 'journal', 'block')"
        ).fetchone()[0]
    assert stored_fields == expected["fields"]


def test_page_properties_namespaces_and_block_ids(run_cli):
    run_cli("import", str(corpus_path("logseq-docs")))
    page = json.loads(run_cli("show", "Whiteboard/Action Bar", "--format", "json").stdout)
    assert page["fields"]["type"] == ["UI Element"]
    assert page["aliases"] == ["Object Action Bar"]
    edges = {(e["type"], e["direction"], e["id"]) for e in page["edges"]}
    assert ("parent", "in", "Whiteboard") in edges or ("child", "in", "Whiteboard") in edges
    # "- [[Color swatch]]\n  id:: 6380d38c-..." keeps its uuid as the node id.
    block = json.loads(run_cli("show", "6380d38c-2dda-486a-a1f7-d99bf0b1d7a1", "--format", "json").stdout)
    assert block["title"] == "[[Color swatch]]" and block["type"] == "block"


def test_journal_dated_from_file_name(run_cli):
    run_cli("import", str(corpus_path("logseq-docs")))
    journal = json.loads(run_cli("show", "Feb 7th, 2021", "--format", "json").stdout)
    assert journal["type"] == "journal"
    assert journal["created"] == 1612656000.0  # 2021-02-07T00:00:00Z


def _small_graph(root: Path) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "journals").mkdir()
    (root / "pages" / "Alpha.md").write_text(
        "type:: [[Project]]\n\n- First idea #[[big plans]]\n  id:: 11111111-2222-3333-4444-555555555555\n"
        "\t- Nested, see ((99999999-0000-0000-0000-000000000000))\n- {{embed [[Beta]]}}\n",
        encoding="utf-8",
    )
    (root / "pages" / "Beta%2FGamma.md").write_text("- Points back to ((11111111-2222-3333-4444-555555555555))\n", encoding="utf-8")
    (root / "journals" / "2024_01_02.md").write_text("- Met about [[Alpha]]\n", encoding="utf-8")
    (root / "pages" / "Old.org").write_text("* an org page\n", encoding="utf-8")
    return root


def test_small_graph_refs_embeds_namespace_stub_and_dangling_ref(tmp_path, run_cli):
    graph = _small_graph(tmp_path / "graph")
    result = run_cli("import", str(graph), "--output", "json")
    assert result.exit_code == 0, result.stderr
    assert any("1 org-mode pages skipped" in w for w in json.loads(result.stdout)["warnings"])
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    # Pages Alpha, Beta/Gamma, the stub Beta, journal; blocks 2+1+1+1; one tag.
    assert stats["nodes_by_type"] == {"page": 3, "journal": 1, "block": 5, "tag": 1}
    assert stats["edges"] == {"child": 6, "ref": 2, "embed": 1, "link": 1, "tag": 1, "field:type": 1}
    # The dangling ((9999...)) and [[Project]] point nowhere.
    assert stats["unresolved_links"] == 2


def test_reimport_after_an_edit_updates_in_place(tmp_path, run_cli):
    graph = tmp_path / "docs"
    shutil.copytree(corpus_path("logseq-docs"), graph)
    run_cli("import", str(graph))
    before = json.loads(run_cli("stats", "--format", "json").stdout)
    page = graph / "pages" / "Block Reference.md"
    page.write_text(page.read_text(encoding="utf-8").rstrip("\n") + "\n- An added block about [[Queries]]\n", encoding="utf-8")
    result = run_cli("import", str(graph), "--output", "json")
    assert json.loads(result.stdout)["files_parsed"] == 1
    after = json.loads(run_cli("stats", "--format", "json").stdout)
    assert after["nodes_by_type"]["block"] == before["nodes_by_type"]["block"] + 1
    assert after["edges"]["link"] == before["edges"]["link"] + 1
    assert after["nodes"] == before["nodes"] + 1
