"""Notion markdown+CSV exports, counted independently from the exported files."""

from __future__ import annotations

import csv
import json
import posixpath
import re
import shutil
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

from tests.conftest import corpus_path

HEX = re.compile(r" [0-9a-f]{32}")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PROPERTY = re.compile(r"^[^:#\-*>\[|`\s][^:]{0,59}?: \S")


def _key(relpath: str) -> str:
    path = HEX.sub("", relpath)
    for suffix in ("_all.csv", ".csv", ".md"):
        if path.endswith(suffix):
            return path[: -len(suffix)].lower()
    return path.lower()


def expected_counts(export: Path) -> dict[str, object]:
    rels = sorted(p.relative_to(export).as_posix() for p in export.rglob("*") if p.suffix in (".md", ".csv"))
    csvs = [r for r in rels if r.endswith(".csv") and not (r.endswith(".csv") and r[:-4] + "_all.csv" in rels)]
    pages = [r for r in rels if r.endswith(".md")]
    keys = {_key(r) for r in pages + csvs}
    types: Counter[str] = Counter(page=len(pages), database=len(csvs))
    edges: Counter[str] = Counter()
    targets: list[str] = []
    fields = 0
    for rel in pages:
        lines = (export / rel).read_text(encoding="utf-8").splitlines()
        body = [line for line in lines if line.strip()][1:]  # after the "# Title" line
        while body and PROPERTY.match(body[0]):
            fields += 1
            body.pop(0)
        for target in LINK.findall("\n".join(body)):
            if "://" in target or not unquote(target).endswith((".md", ".csv")):
                continue
            edges["link"] += 1
            targets.append(_key(posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(target)))))
    for rel in csvs:
        with (export / rel).open(encoding="utf-8-sig", newline="") as handle:
            rows = [r for r in csv.reader(handle)][1:]
        rows = [r for r in rows if any(c.strip() for c in r)]
        types["row"] += len(rows)
        edges["child"] += len(rows)
        edges["link"] += len(rows)
        fields += sum(1 for r in rows for c in r[1:] if c.strip())
        targets += [f"{_key(rel)}/{r[0].strip().lower()}" for r in rows]
    edges["child"] += sum(1 for k in keys if posixpath.dirname(k) in keys)
    return {
        "types": +types,
        "edges": +edges,
        "fields": fields,
        "unresolved": sum(t not in keys for t in targets),
    }


def _stats(run_cli) -> dict:
    return json.loads(run_cli("stats", "--format", "json").stdout)


def _field_count(db_path: Path) -> int:
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        return conn.execute("SELECT count(*) FROM nodes n, json_each(n.fields)").fetchone()[0]


def test_notion_export_counts_match_the_files(run_cli, db_path):
    export = corpus_path("notion-export")
    result = run_cli("import", str(export))
    assert result.exit_code == 0, result.stderr
    expected = expected_counts(export)
    stats = _stats(run_cli)
    assert stats["sources"][0]["format"] == "notion"
    assert stats["nodes_by_type"] == expected["types"]
    assert stats["edges"] == expected["edges"]
    assert stats["unresolved_links"] == expected["unresolved"]
    assert _field_count(db_path) == expected["fields"]


def test_titles_lose_their_ids_and_rows_keep_their_columns(run_cli, db_path):
    run_cli("import", str(corpus_path("notion-export")))
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        titles = [r[0] for r in conn.execute("SELECT title FROM nodes")]
        database = conn.execute("SELECT id, body FROM nodes WHERE type = 'database'").fetchone()
        row_fields = json.loads(conn.execute("SELECT fields FROM nodes WHERE type = 'row' LIMIT 1").fetchone()[0])
    assert not [t for t in titles if re.search(r"[0-9a-f]{32}", t)]
    assert database[0].endswith("Habit Tracker.csv")
    assert database[1].startswith("Columns: Date,")  # the byte-order mark is gone
    assert set(row_fields) <= {"Ran today", "Meditated", "Practiced guitar", "Full date"}


def _tiny_export(root: Path) -> Path:
    sub = root / "Notes 0123456789abcdef0123456789abcdef"
    sub.mkdir(parents=True)
    (root / "Notes 0123456789abcdef0123456789abcdef.md").write_text(
        "# Notes\n\nOwner: Sam\nStatus: Active\n\nSee [Idea](Notes%200123456789abcdef0123456789abcdef/"
        "Idea%20fedcba9876543210fedcba9876543210.md) and [Tasks](Tasks%2011112222333344445555666677778888.csv).\n",
        encoding="utf-8",
    )
    (sub / "Idea fedcba9876543210fedcba9876543210.md").write_text("# Idea\n\nA thought.\n", encoding="utf-8")
    (root / "People 99998888777766665555444433332222.csv").write_bytes(
        "\ufeffName,Role\nAda,Engineer\nLin,\n".encode("utf-8")
    )
    return root


def test_tiny_export_properties_links_missing_csv_and_bom(tmp_path, run_cli):
    export = _tiny_export(tmp_path / "export")
    assert run_cli("import", str(export)).exit_code == 0
    stats = _stats(run_cli)
    assert stats["nodes_by_type"] == {"page": 2, "database": 1, "row": 2}
    # links: Notes->Idea, Notes->Tasks.csv (missing), Ada->page, Lin->page (no pages); child: Notes->Idea + 2 rows
    assert stats["edges"] == {"link": 4, "child": 3}
    assert stats["unresolved_links"] == 3
    notes = json.loads(run_cli("show", "Notes", "--format", "json").stdout)
    assert notes["fields"] == {"Owner": ["Sam"], "Status": ["Active"]}
    ada = json.loads(run_cli("show", "People.csv#Ada", "--format", "json").stdout)
    assert ada["fields"] == {"Role": ["Engineer"]} and ada["type"] == "row"


def test_reimport_of_a_changed_export_updates_in_place(tmp_path, run_cli):
    export = tmp_path / "notion"
    shutil.copytree(corpus_path("notion-export"), export)
    run_cli("import", str(export))
    before = _stats(run_cli)
    page = next(export.rglob("Journal *.md"))
    page.write_text(page.read_text(encoding="utf-8") + "\n\nMood: calm\n", encoding="utf-8")
    result = json.loads(run_cli("import", str(export), "--output", "json").stdout)
    assert result["files_parsed"] == 1
    after = _stats(run_cli)
    assert after["nodes"] == before["nodes"] and after["edges"] == before["edges"]
    shown = json.loads(run_cli("show", "Journal", "--format", "json").stdout)
    assert "Mood: calm" in shown["body"]
