"""Obsidian and Foam vaults: real corpora counted independently, every syntax rule, bad input."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import corpus_path
from vault_counts import count_vault

LINK_EDGES = "type IN ('link', 'embed') AND file != ''"


def _import(run_cli, path: Path, *extra: str) -> dict:
    result = run_cli("import", str(path), "--output", "json", *extra)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _query(db_path: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute(sql, args).fetchall()


def _count(db_path: Path, sql: str, *args: object) -> int:
    return _query(db_path, sql, *args)[0][0]


def _edges(db_path: Path, src: str) -> list[tuple[str, str | None, str | None]]:
    """(type, dst, label) of a node's outgoing edges, in a stable order (None sorts first)."""
    return _in_order(_query(db_path, "SELECT type, dst, label FROM edges WHERE src = ?", src))


def _in_order(edges: list[tuple]) -> list[tuple]:
    return sorted((tuple(e) for e in edges), key=lambda e: tuple(x or "" for x in e))


def _node(db_path: Path, node_id: str) -> dict:
    with sqlite3.connect(db_path) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM nodes WHERE id = ?", (node_id,)).fetchone()
    assert row is not None, f"no node {node_id!r}"
    node = dict(row)
    for key in ("tags", "fields", "aliases"):
        node[key] = json.loads(node[key])
    return node


def _vault(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


# -- real corpora ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("corpus", "flavour"), [("obsidian-dwarves-brain", "obsidian"), ("foam-docs", "foam")]
)
def test_corpus_counts_match_an_independent_count(corpus, flavour, run_cli, db_path):
    root = corpus_path(corpus)
    expected = count_vault(root, foam=flavour == "foam")
    report = _import(run_cli, root)
    assert report["format"] == flavour
    assert report["warnings"] == []
    assert _count(db_path, "SELECT COUNT(*) FROM nodes WHERE file != ''") == expected.notes
    assert _count(db_path, f"SELECT COUNT(*) FROM edges WHERE {LINK_EDGES}") == len(expected.links)
    assert _count(db_path, f"SELECT COUNT(*) FROM edges WHERE {LINK_EDGES} AND dst IS NOT NULL") == expected.resolved
    assert _count(db_path, f"SELECT COUNT(*) FROM edges WHERE {LINK_EDGES} AND dst IS NULL") == expected.unresolved
    # Sanity: the corpora really exercise both outcomes.
    assert expected.resolved > 100 and expected.unresolved > 0


def test_dwarves_brain_dates_come_from_frontmatter(run_cli, db_path):
    root = corpus_path("obsidian-dwarves-brain")
    _import(run_cli, root)
    node = _node(db_path, "§ Devbox")
    assert node["title"] == "Devbox Map of Content"
    assert node["created"] == 1723161600.0  # date: 2024-08-09
    assert node["updated"] == node["created"]  # one frontmatter date beats the checkout's mtime
    assert node["tags"][:3] == ["moc", "devbox", "nix"]
    assert node["fields"]["authors"] == ["bievh"]


# -- detection ---------------------------------------------------------------------------------


def test_detection_picks_the_flavour(tmp_path, run_cli):
    plain = _vault(tmp_path / "plain", {"a.md": "hello"})
    obsidian = _vault(tmp_path / "obs", {"a.md": "hello", ".obsidian/app.json": "{}"})
    foam = _vault(tmp_path / "foam", {"a.md": "[[b]]\n\n[b]: b.md \"B\"\n", "b.md": "B"})
    for path, expected in [(plain, "obsidian"), (obsidian, "obsidian"), (foam, "foam")]:
        report = _import(run_cli, path, "--db", str(tmp_path / f"{path.name}.db"))
        assert report["format"] == expected, path


def test_demo_vault_imports_cleanly(demo_vault, run_cli, db_path):
    report = _import(run_cli, demo_vault)
    assert report["format"] == "obsidian" and report["warnings"] == []
    stats = json.loads(run_cli("stats", "--format", "json").stdout)
    assert stats["nodes_by_type"]["meeting"] >= 5 and stats["nodes_by_type"]["task"] >= 5
    assert stats["unresolved_links"] == 1  # [[Pricing Page]] is deliberately missing
    assert run_cli("show", "Apollo", "--format", "json").exit_code == 0  # by alias


def test_an_import_stores_token_estimates_and_show_counts_exactly(demo_vault, run_cli, db_path):
    """Exact counting is a build's job (and ``ctx show``'s): an import stores the estimate."""
    from ctx.store import connect
    from ctx.tokens import count_tokens, estimate_tokens

    _import(run_cli, demo_vault)
    conn = connect(db_path)
    rows = conn.execute("SELECT id, title, body, tokens FROM nodes WHERE body != ''").fetchall()
    assert rows and all(tokens == estimate_tokens(f"{title}\n{body}") for _, title, body, tokens in rows)
    node_id, title, body, _ = max(rows, key=lambda r: len(r[2]))
    shown = json.loads(run_cli("show", node_id, "--format", "json").stdout)
    assert shown["tokens"] == count_tokens(f"{title}\n{body}") != estimate_tokens(f"{title}\n{body}")


# -- syntax ------------------------------------------------------------------------------------


def test_wikilink_forms_and_labels(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "Home.md": (
                "See [[Target]], [[Target|shown text]], [[Target#Section Two]], "
                "[[Target#^blk1]] and ![[Target#Section Two]].\n"
                "Again [[target]] is the same edge. [[#Local heading]] points at itself.\n"
                "| a | b |\n|---|---|\n| [[Other\\|alias in table]] | x |\n"
                "![[diagram.png]] is an attachment, not a note.\n"
            ),
            "Target.md": "# Section Two\ntext ^blk1\n",
            "Other.md": "other",
        },
    )
    _import(run_cli, vault)
    assert _edges(db_path, "Home") == _in_order([
        ("embed", "Target", "#Section Two"),
        ("link", "Other", "alias in table"),
        ("link", "Target", "#Section Two"),
        ("link", "Target", "#^blk1"),
        ("link", "Target", None),
    ])


def test_frontmatter_tags_aliases_dates_fields_and_field_links(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "Meeting.md": (
                "---\ntitle: Weekly sync\naliases: [Sync, standup]\ntags: [meeting, '#team']\n"
                "date: 2026-03-10\nupdated: 2026-03-11T09:30:00Z\nstatus: done\n"
                "attendees: ['[[Ada]]', '[[Bob|Robert]]', 'Carol']\nowner: [[Ada]]\n"
                "budget: 1200\nprivate: false\n---\nBody #inline text.\n"
            ),
            "Ada.md": "Ada",
            "Bob.md": "Bob",
        },
    )
    _import(run_cli, vault)
    node = _node(db_path, "Meeting")
    assert node["title"] == "Weekly sync"
    assert node["aliases"] == ["Sync", "standup"]
    assert node["tags"] == ["meeting", "team", "inline"]
    assert node["created"] == 1773100800.0  # 2026-03-10
    assert node["updated"] == 1773221400.0
    assert node["fields"] == {
        "date": ["2026-03-10"], "status": ["done"], "attendees": ["[[Ada]]", "[[Bob|Robert]]", "Carol"],
        "owner": ["[[Ada]]"], "budget": ["1200"], "private": ["false"],
    }
    assert node["body"] == "Body #inline text.\n"
    fields = [e for e in _edges(db_path, "Meeting") if e[0].startswith("field:")]
    assert fields == [("field:attendees", "Ada", None), ("field:attendees", "Bob", None), ("field:owner", "Ada", None)]
    # Aliases and titles are names links resolve by.
    assert run_cli("show", "standup", "--format", "json").exit_code == 0


def test_bom_and_windows_or_old_mac_line_endings_leave_no_carriage_returns(tmp_path, run_cli, db_path):
    # CRLF files used to keep every "\r" in the stored body, so the context printed them (and
    # paid tokens for them); a heading stripped from the body left a stray "\r\n" in front.
    vault = _vault(
        tmp_path / "v",
        {
            "Crlf.md": b"\xef\xbb\xbf---\r\ntitle: Crlf Note\r\nstatus: active\r\n---\r\n"
                       b"# Crlf Note\r\n\r\nLinks to [[Mac]] and #gamma.\r\n",
            "Mac.md": b"first line\rsecond line\r",
        },
    )
    _import(run_cli, vault)
    crlf = _node(db_path, "Crlf")
    assert crlf["title"] == "Crlf Note" and crlf["fields"] == {"status": ["active"]}
    assert crlf["tags"] == ["gamma"]
    assert "\r" not in crlf["body"] and crlf["body"].endswith("Links to [[Mac]] and #gamma.\n")
    assert _node(db_path, "Mac")["body"] == "first line\nsecond line\n"
    built = run_cli("build", "Crlf Note", "--format", "json")
    assert built.exit_code == 0 and "\r" not in built.stdout
    assert [n["id"] for n in json.loads(built.stdout)["nodes"]][:2] == ["Crlf", "Mac"]


def test_a_note_saved_as_utf16_or_utf32_is_read_as_text(tmp_path, run_cli, db_path):
    # Notepad's "Unicode" and PowerShell's ``>`` write UTF-16 LE with a BOM: its NUL bytes made
    # the note look binary ("binary file; skipped") and it never reached the graph.
    note = "---\ntitle: Wide Note\nstatus: active\n---\nCafé notes link [[Plain]] and #gamma.\n"
    vault = _vault(
        tmp_path / "v",
        {
            "Wide.md": note.replace("\n", "\r\n").encode("utf-16"),  # the machine's order, with its BOM
            "Big.md": b"\xfe\xff" + "Big-endian words about zebras.\n".encode("utf-16-be"),
            "Thirty.md": b"\xff\xfe\x00\x00" + "Thirty-two bits about okapis.\n".encode("utf-32-le"),
            "Odd.md": b"\xff\xfe" + "An odd byte follows: ".encode("utf-16-le") + b"!",
            "Plain.md": b"plain note\n",
            "binary.md": b"\x00\x01\x02binary",
        },
    )
    result = run_cli("import", str(vault))
    assert result.exit_code == 0, result.stderr
    assert "binary.md: binary file; skipped" in result.stderr
    odd_byte = 2 + 2 * len("An odd byte follows: ")  # after the BOM and 21 two-byte characters
    assert f"Odd.md: invalid UTF-16-LE at byte {odd_byte}; undecodable bytes replaced" in result.stderr
    assert not any(name in result.stderr for name in ("Wide.md", "Big.md", "Thirty.md"))
    wide = _node(db_path, "Wide")
    assert wide["title"] == "Wide Note" and wide["fields"] == {"status": ["active"]} and wide["tags"] == ["gamma"]
    assert wide["body"] == "Café notes link [[Plain]] and #gamma.\n"
    assert _node(db_path, "Big")["body"] == "Big-endian words about zebras.\n"
    assert _node(db_path, "Thirty")["body"] == "Thirty-two bits about okapis.\n"
    assert _node(db_path, "Odd")["body"] == "An odd byte follows: \ufffd"
    assert [r["id"] for r in json.loads(run_cli("search", "zebras", "--format", "json").stdout)["results"]] == ["Big"]


def test_inline_tags_skip_code_headings_urls_and_anchors(tmp_path, run_cli, db_path):
    body = (
        "# Heading\n## #NotAHeadingTag? no: this one is a heading with text\n"
        "Real #tag-one and #nested/tag, (#paren) but not a#b, not #123, not `#code`.\n"
        "```\n#fenced\n```\n"
        "[anchor](#section) and [[Note#heading]] and https://example.com/#frag &#35;\n"
    )
    vault = _vault(tmp_path / "v", {"T.md": body, "Note.md": ""})
    _import(run_cli, vault)
    assert _node(db_path, "T")["tags"] == ["NotAHeadingTag", "tag-one", "nested/tag", "paren"]


def test_markdown_links_relative_decoded_and_external_ignored(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "a/Start.md": (
                "[up](../Top%20Note.md) [side](Side.md#part) [abs](/a/Side.md) "
                "[web](https://example.com/x.md) [mail](mailto:x@y.z) [pic](img.png) "
                "[missing](gone.md) ![shown](Side.md)\n"
            ),
            "a/Side.md": "side",
            "Top Note.md": "top",
        },
    )
    _import(run_cli, vault)
    assert _edges(db_path, "a/Start") == _in_order([
        ("embed", "a/Side", "shown"),
        ("link", None, "missing"),
        ("link", "Top Note", "up"),
        ("link", "a/Side", "#part"),
        ("link", "a/Side", "abs"),
    ])


def test_same_name_in_two_folders_and_path_links(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "Plan.md": "root plan",
            "work/Plan.md": "work plan",
            "home/Index.md": "[[Plan]] [[work/Plan]] [[work/Plan.md|the work one]]",
        },
    )
    _import(run_cli, vault)
    assert {_node(db_path, "Plan")["body"], _node(db_path, "work/Plan")["body"]} == {"root plan", "work plan"}
    # A bare name picks the note nearest the root, as Obsidian does; a path picks exactly.
    assert _edges(db_path, "home/Index") == _in_order([("link", "Plan", None), ("link", "work/Plan", None)])


def test_non_markdown_and_hidden_folders_are_not_notes(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "a.md": "a",
            "data.csv": "x,y",
            "image.png": b"\x89PNG\r\n\x1a\n\x00",
            ".obsidian/workspace.md": "config",
            ".git/HEAD.md": "ref",
            "node_modules/pkg/README.md": "dependency",
            ".trash/old.md": "deleted",
        },
    )
    report = _import(run_cli, vault)
    assert report["files_seen"] == 1
    assert [r[0] for r in _query(db_path, "SELECT id FROM nodes")] == ["a"]


def test_foam_link_definitions_are_not_double_counted(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            ".foam/config": "",
            "index.md": (
                "# Index\nSee [[notes/alpha]] and [[beta]].\n\n"
                "[notes/alpha]: notes/alpha.md \"Alpha\"\n[beta]: beta.md \"Beta\"\n"
            ),
            "mixed.md": "Read [the guide][guide] and [[beta]].\n\n[guide]: notes/alpha.md\n[beta]: beta.md\n",
            "notes/alpha.md": "alpha",
            "beta.md": "beta",
        },
    )
    report = _import(run_cli, vault)
    assert report["format"] == "foam"
    assert _edges(db_path, "index") == _in_order([("link", "beta", None), ("link", "notes/alpha", None)])
    assert _node(db_path, "index")["body"] == "# Index\nSee [[notes/alpha]] and [[beta]].\n"
    # A definition that is a real reference link stays in the body and is an edge.
    assert _edges(db_path, "mixed") == _in_order([("link", "beta", None), ("link", "notes/alpha", "guide")])
    assert "[guide]: notes/alpha.md" in _node(db_path, "mixed")["body"]


# -- bad input ---------------------------------------------------------------------------------


def test_bad_input_warns_naming_the_file_and_imports_the_rest(tmp_path, run_cli, db_path):
    vault = _vault(
        tmp_path / "v",
        {
            "good.md": "fine [[broken fm]]",
            "broken fm.md": "---\ntitle: [unclosed\ntags: x\n---\nstill here\n",
            "latin1.md": "caf\xe9 au lait".encode("latin-1"),
            "binary.md": b"\x00\x01\x02binary",
            "list fm.md": "---\n- just\n- a list\n---\nbody\n",
        },
    )
    os.symlink(tmp_path / "nowhere.md", vault / "dangling.md")
    report = _import(run_cli, vault)
    warnings = "\n".join(report["warnings"])
    for name in ("broken fm.md", "latin1.md", "binary.md", "dangling.md", "list fm.md"):
        assert name in warnings, name
    assert len(report["warnings"]) == 5
    broken = _node(db_path, "broken fm")
    assert broken["title"] == "broken fm" and broken["body"].startswith("---\ntitle: [unclosed")
    assert _node(db_path, "latin1")["body"] == "caf\ufffd au lait"
    assert _edges(db_path, "good") == _in_order([("link", "broken fm", None)])
    ids = {r[0] for r in _query(db_path, "SELECT id FROM nodes")}
    assert ids == {"good", "broken fm", "latin1", "list fm"}
    # The text summary names the warning count too.
    again = run_cli("import", str(vault))
    assert again.exit_code == 0


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file_warns(tmp_path, run_cli):
    vault = _vault(tmp_path / "v", {"a.md": "a", "secret.md": "s"})
    (vault / "secret.md").chmod(0)
    try:
        report = _import(run_cli, vault)
    finally:
        (vault / "secret.md").chmod(0o644)
    assert any("secret.md" in w for w in report["warnings"])


@pytest.mark.usefixtures("devices_on")  # the frontmatter device itself (ctx.speedups)
def test_frontmatter_flow_lists_read_fast_exactly_as_pyyaml_reads_them():
    """`tags: [a, b]` skips PyYAML's composer; whatever the fast reader accepts, PyYAML agrees on."""
    import random

    import yaml

    from ctx.importers.markdown import _simple_frontmatter, _yaml_loader

    pool = ["a", "b c", "2024-01-02", "2024-01-02T10:00:00", "yes", "no", "null", "~", "1", "1.5",
            "0x10", "a:b", "a: b", "a#b", "a #b", "x/y", "tag-name", "#tag", "@x", "%", "a!", "é",
            "TRUE", "1_000", ".inf", "-1", "+1", "", " ", "=", "<<", "'q'", '"q"', "[n]", "{m}"]
    rng = random.Random(1)
    read_fast = 0
    for _ in range(3000):
        items = [rng.choice(pool) for _ in range(rng.randint(0, 4))]
        separator = rng.choice([", ", ",", " , "])
        text = f"tags: [{separator.join(items)}]{rng.choice(['', ' '])}\ntitle: x\n"
        got = _simple_frontmatter(text)
        if got is None:
            continue
        read_fast += 1
        assert got == yaml.load(text, Loader=_yaml_loader()), text
    assert read_fast > 1000  # the common shapes do take the fast path
