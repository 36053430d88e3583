"""Hostile imports: one bad file never costs an import, and no input takes minutes.

For every importer, bad files (impossible dates, a YAML alias bomb, nesting past the recursion
limit, values of the wrong type, huge numbers, truncated exports; see tests/hostile.py) sit beside
good ones: the import ends without an internal error, each bad file is named in a warning, every
good note is imported, and the graph answers build/show/search afterwards with strict JSON.

Adversarial lines: each pattern that made a parser quadratic (or could) is parsed at 1 MB under a
generous wall limit. Quadratic behaviour took minutes at 200 KB, so the limit cannot be met by a
super-linear parser, and a linear one meets it many times over even on a loaded machine.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import hostile

ONE_MB = 1_000_000
# CPU seconds, not wall: a quadratic parse burns CPU whatever the load, while a busy machine only
# stretches the wall clock (63 s of wall for a 1 MB line at load 10, a few CPU seconds).
PARSE_LIMIT_SECONDS = 15.0  # per 1 MB line; linear parsers take well under a second
IMPORT_LIMIT_SECONDS = 40.0  # a whole 1 MB import: detection, parse, tokens, SQLite


def strict_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("fmt", hostile.FORMATS)
def test_bad_files_are_warnings_and_the_rest_imports(tmp_path, run_cli, db_path, fmt):
    source = hostile.build_bad_source(tmp_path / "src", fmt)
    result = run_cli("import", str(source.path), "--format", fmt)
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("ctx: warning:")]
    for name in source.bad:
        assert any(name in w for w in warnings), f"no warning names {name}:\n" + "\n".join(warnings)
    for title in source.good_titles:
        found = strict_json(run_cli("search", title, "--format", "json").stdout)
        assert any(r["title"] == title for r in found["results"]), (title, found)
    # The graph is usable afterwards, by every command, in strict JSON.
    for title in source.good_titles:
        built = run_cli("build", title, "--format", "json", "--lens", "workspace")
        assert built.exit_code == 0, built.stderr
        strict_json(built.stdout)
        shown = run_cli("show", title, "--format", "json")
        assert shown.exit_code == 0, shown.stderr
        strict_json(shown.stdout)
    stats = run_cli("stats", "--format", "json")
    assert stats.exit_code == 0
    strict_json(stats.stdout)
    # Every node (a search for "a" listed those holding the word until function words alone
    # became a usage error).
    import sqlite3

    with sqlite3.connect(db_path) as conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM nodes WHERE NOT private")]
    assert ids
    for node_id in ids:
        node = run_cli("show", node_id, "--format", "json")
        assert node.exit_code == 0, (node_id, node.stderr)
        data = strict_json(node.stdout)
        for stamp in (data["created"], data["updated"]):
            assert stamp is None or -62135596800 <= stamp <= 253402300799, (node_id, stamp)


def test_dates_are_checked_before_they_reach_the_graph(tmp_path, run_cli):
    """`updated: 1e25` once made every later build of the graph fail, even for other notes."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Far.md").write_text("---\nupdated: 1.0e+25\ncreated: -.inf\n---\nFar future.\n", encoding="utf-8")
    (vault / "Plain.md").write_text("---\nupdated: 2024-05-01\n---\nA plain note that links [[Far]].\n",
                                    encoding="utf-8")
    result = run_cli("import", str(vault))
    assert result.exit_code == 0, result.stderr
    assert "Far.md: node 'Far': updated date outside the years 1 to 9999; dropped" in result.stderr
    assert "Far.md: node 'Far': created date not a finite number; dropped" in result.stderr
    for lens in ("general", "workspace", "planning"):
        assert run_cli("build", "Plain", "--lens", lens).exit_code == 0
    shown = strict_json(run_cli("show", "Far", "--format", "json").stdout)
    assert shown["updated"] is not None and shown["updated"] < 253402300799  # the file's mtime instead


def test_alias_bomb_is_refused_in_bounded_time_and_memory(tmp_path, run_cli):
    import resource

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "bomb.md").write_text(hostile.ALIAS_BOMB, encoding="utf-8")
    (vault / "fine.md").write_text("---\ntags: [a]\n---\nFine.\n", encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    result = run_cli("import", str(vault))
    assert time.process_time() - started < 30
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200_000, f"peak memory grew by {grown_kb} KB"  # a billion laughs is GBs
    assert result.exit_code == 0
    assert "bomb.md: broken frontmatter (line 3: YAML aliases (*name) are not accepted)" in result.stderr
    assert run_cli("show", "bomb").exit_code == 0  # imported as plain text


def _parse_all(fmt: str, source: Path) -> float:
    from ctx.importers import get_importer
    from ctx.importers.base import FileInfo

    importer = get_importer(fmt)
    base = importer.base_dir(source)
    slowest = 0.0
    for rel in importer.list_files(source):
        text = (base / rel).read_text(encoding="utf-8")
        started = time.process_time()
        parsed = importer.parse(FileInfo(rel, base / rel, 0.0), text)
        slowest = max(slowest, time.process_time() - started)
        assert parsed.nodes, (fmt, rel)
    return slowest


@pytest.mark.parametrize("fmt", hostile.FORMATS)
def test_every_parser_is_linear_on_1mb_adversarial_lines(tmp_path, fmt):
    for case in hostile.ADVERSARIAL_LINES[fmt]:
        source = hostile.write_line_source(tmp_path / case.replace(" ", "-"), fmt, case, ONE_MB)
        seconds = _parse_all(fmt, source)
        assert seconds < PARSE_LIMIT_SECONDS, f"{fmt} {case!r}: {seconds:.1f}s for a 1 MB line"


# The pattern per format that was (or is nearest to) quadratic before; the whole import of it
# runs by default, every pattern with CTX_HOSTILE_FULL=1 (bench/bench_hostile.py times them all).
WORST_CASES = {
    "obsidian": "backticks", "foam": "md link title", "dendron": "angle links", "logseq": "embed unclosed",
    "roam": "embed unclosed", "tana": "angle brackets", "notion": "brackets across lines", "json": "long string",
}
FULL = os.environ.get("CTX_HOSTILE_FULL") == "1"
IMPORT_CASES = [
    pytest.param(fmt, case, marks=() if case == WORST_CASES[fmt] else (pytest.mark.slow,))
    for fmt in hostile.FORMATS
    for case in hostile.ADVERSARIAL_LINES[fmt]
    if FULL or case == WORST_CASES[fmt]
]


@pytest.mark.parametrize(("fmt", "case"), IMPORT_CASES)
def test_a_whole_import_of_a_1mb_adversarial_line_is_bounded(tmp_path, fmt, case):
    source = hostile.write_line_source(tmp_path / "src", fmt, case, ONE_MB)
    started = time.process_time()
    report, warnings, error = hostile.import_in_process(tmp_path / "g.db", source, fmt)
    seconds = time.process_time() - started
    assert error is None, error
    assert seconds < IMPORT_LIMIT_SECONDS, f"{fmt} {case!r}: {seconds:.1f}s"


def test_a_huge_note_and_title_are_cut_with_a_warning(tmp_path, run_cli, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("import:\n  max_note_chars: 5000\n  max_title_chars: 50\n", encoding="utf-8")
    monkeypatch.setenv("CTX_HOME", str(home))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "big.md").write_text("---\ntitle: " + "T" * 200 + "\n---\n" + "word " * 10_000, encoding="utf-8")
    result = run_cli("import", str(vault))
    assert result.exit_code == 0
    assert "big.md: node 'big': text of 50,000 characters cut to 5,000 (import.max_note_chars)" in result.stderr
    assert "big.md: node 'big': title of 200 characters cut to 50 (import.max_title_chars)" in result.stderr
    shown = strict_json(run_cli("show", "big", "--format", "json").stdout)
    assert len(shown["body"]) == 5000 and len(shown["title"]) == 50


def test_a_title_of_several_lines_is_one_heading(tmp_path, run_cli):
    """A title is printed as a heading: one of several lines (YAML's ``title: |``, a JSON record's
    "\\n") split it, the rest read as text or as a heading of its own, in every format."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text('---\ntitle: "Line one\\n## Injected\\r\\nLine two"\n---\nAbout capybaras.\n',
                                encoding="utf-8")
    (vault / "b.md").write_text("---\ntitle: |\n  Folded\n    title\n---\nAbout capybaras too.\n", encoding="utf-8")
    assert run_cli("import", str(vault)).exit_code == 0
    graph = tmp_path / "graph.json"
    graph.write_text(json.dumps({"nodes": [{"id": "j", "title": "Json\u2028record\n\ntitle", "body": "Capybaras."}]}),
                     encoding="utf-8")
    assert run_cli("import", str(graph), db=tmp_path / "json.db").exit_code == 0
    for db, titles in ((None, {"a": "Line one ## Injected Line two", "b": "Folded title"}),
                       (tmp_path / "json.db", {"j": "Json record title"})):
        for node, title in titles.items():
            shown = strict_json(run_cli("show", node, "--format", "json", db=db).stdout)
            assert shown["title"] == title
        for lens in ("answer", "general"):
            out = run_cli("build", "capybaras", "--lens", lens, "--max-tokens", "600", db=db).stdout
            lines = out.splitlines()
            for title in titles.values():  # the whole title on its heading's line, a date after it or not
                assert any(line == f"### {title}" or line.startswith(f"### {title} (") for line in lines), out
            assert not any(line.startswith(("## Injected", "Line two", "title", "record")) for line in lines), out
