"""Hostile inputs for every importer, shared by the tests and bench/bench_hostile.py.

Two kinds:

* ``ADVERSARIAL_LINES``: per importer, one-line patterns that each made some parser super-linear
  (a backtick run, ``[a](b "`` repeated, ``{{embed [[a`` repeated, ``[`` across lines, a lazy
  ``(.+?)\\s*$`` over a run of spaces, ``<`` without ``>``...) or could have; ``write_line_source``
  turns a pattern into a source of a given size in that importer's format.
* ``BAD_FILES``: per importer, small files that are wrong in one way each (impossible dates, a
  YAML alias bomb, nesting past the recursion limit, wrong types, huge numbers, truncation), each
  written next to good files so a test can check that the good ones still import.

Everything here is written from scratch for ctx; nothing is copied from any audit's cases.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NOTION_ID = "0123456789abcdef0123456789abcdef"
DEEP = 3_000  # nesting levels: well past Python's default recursion limit of 1,000


# ---------------------------------------------------------------------------------------------
# One long adversarial line per importer


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


MARKDOWN_LINES: dict[str, str] = {
    "backticks": "`",
    "backtick-a": "`a",
    "double-backtick-a": "``a",
    "md link title": '[a](b "',
    "md link open": "[a](",
    "nested brackets": "[a[",
    "wikilinks unclosed": "[[a",
    "embeds unclosed": "![[a",
    "hash tags": "#a ",
    "hashes": "#",
    "angle links": "[a](<b",
    "fence ticks": "```a",
    "tilde fences": "~~~a",
    "link definition": "[a]: b ",
    "spaces then text": " ",
    "parens": "(",
    "escapes": "\\",
}
OUTLINE_LINES: dict[str, str] = {
    "embed unclosed": "{{embed [[a",
    "embed braces": "{{",
    "page links unclosed": "[[a",
    "bracket tags unclosed": "#[[a",
    "block refs unclosed": "((abcdef",
    "backticks": "`",
    "fence ticks": "```a",
    "attributes": "a:: ",
    "hash digits": "#1",
    "hash words": "#a.",
    "colons": ":",
}
TANA_LINES: dict[str, str] = {
    "angle brackets": "<",
    "inline ref unclosed": '<span data-inlineref-node="',
    "entities": "&amp;",
    "ampersands": "&",
    "date spans": '<span data-inlineref-date="{',
}
NOTION_LINES: dict[str, str] = {
    "brackets across lines": "[a\n",
    "brackets": "[",
    "md link open": "[a](",
    "relations unclosed": "(a.md",
    "property spaces": " ",
    "heading spaces": " ",
    "hex ids": "0123456789abcdef",
}
JSON_LINES: dict[str, str] = {
    "long string": "a",
    "escapes": "\\u00e9",
    "quotes": '\\"',
}

ADVERSARIAL_LINES: dict[str, dict[str, str]] = {
    "obsidian": MARKDOWN_LINES,
    "foam": MARKDOWN_LINES,
    "dendron": MARKDOWN_LINES,
    "logseq": OUTLINE_LINES,
    "roam": OUTLINE_LINES,
    "tana": TANA_LINES,
    "notion": NOTION_LINES,
    "json": JSON_LINES,
}


def write_line_source(folder: Path, fmt: str, case: str, size: int) -> Path:
    """A source in ``fmt`` whose one note/block/record holds the pattern ``case`` repeated to
    ``size`` characters; returns what to pass to ``ctx import``."""
    line = _repeat(ADVERSARIAL_LINES[fmt][case], size)
    folder.mkdir(parents=True, exist_ok=True)
    if fmt in ("obsidian", "foam", "dendron"):
        name = "root.hostile.md" if fmt == "dendron" else "hostile.md"
        (folder / name).write_text(f"# Hostile\n\n{line}\n", encoding="utf-8")
        if fmt == "dendron":
            (folder / "dendron.yml").write_text("version: 5\n", encoding="utf-8")
        if fmt == "foam":
            (folder / ".foam").mkdir(exist_ok=True)
        return folder
    if fmt == "logseq":
        (folder / "pages").mkdir(exist_ok=True)
        (folder / "journals").mkdir(exist_ok=True)
        (folder / "pages" / "Hostile.md").write_text(f"- {line}\n", encoding="utf-8")
        return folder
    if fmt == "roam":
        page = [{"title": "Hostile", "uid": "hp", "children": [{"string": line, "uid": "hb"}]}]
        path = folder / "roam.json"
        path.write_text(json.dumps(page), encoding="utf-8")
        return path
    if fmt == "tana":
        doc = {"formatVersion": 1, "docs": [{"id": "h1", "props": {"name": line}, "children": []}]}
        path = folder / "tana.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path
    if fmt == "notion":
        if case == "heading spaces":
            text = f"# a{line}b\n\nBody.\n"
        elif case == "property spaces":
            text = f"# Hostile\n\nStatus: a{line}b\n\nBody.\n"
        else:
            text = f"# Hostile\n\n{line}\n"
        (folder / f"Hostile {NOTION_ID}.md").write_text(text, encoding="utf-8")
        return folder
    if fmt == "json":
        path = folder / "graph.jsonl"
        path.write_text(json.dumps({"id": "h1", "title": "Hostile", "body": json.loads(f'"{line}"')}) + "\n",
                        encoding="utf-8")
        return path
    raise ValueError(fmt)


# ---------------------------------------------------------------------------------------------
# Bad files beside good ones


@dataclass(frozen=True)
class BadFile:
    name: str  # file name relative to the source folder (what the warning names)
    content: str | bytes
    # Where its problem is reported: a warning naming the file (or a record in it). Files whose
    # problem is repaired rather than reported (none so far) would say so here.
    warns: bool = True


def _deep_logseq(levels: int) -> str:
    return "".join("\t" * i + f"- level {i}\n" for i in range(levels))


def _deep_roam(levels: int) -> str:
    """A Roam export (as text: json.dumps itself would recurse) whose one page nests ``levels``."""
    opening = "".join(f'{{"string": "level {i}", "uid": "deep-{i}", "children": [' for i in range(levels))
    closing = "]}" * levels
    return f'[{{"title": "Deep page", "uid": "deep-page", "children": [{opening}{closing}]}}]'


def _deep_json_value(levels: int) -> str:
    return "[" * levels + "]" * levels


ALIAS_BOMB = (
    "---\n"
    'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "---\n# Bomb\n\nAlias bomb.\n"
)

MARKDOWN_BAD = [
    BadFile("impossible-date.md", "---\ndate: 2021-02-30\n---\n# Impossible\n\nNo such day.\n"),
    BadFile("huge-updated.md", "---\nupdated: 1.0e+25\ncreated: .inf\n---\n# Huge\n\nFar future.\n"),
    BadFile("nan-date.md", "---\nupdated: .nan\n---\n# NaN\n\nNot a number.\n"),
    BadFile("big-int-date.md", "---\ncreated: " + "9" * 400 + "\n---\n# Big\n\nBig integer.\n"),
    BadFile("alias-bomb.md", ALIAS_BOMB),
    BadFile("deep-yaml.md", "---\nx: " + "[" * 200 + "]" * 200 + "\n---\n# Deep\n\nDeep YAML.\n"),
    BadFile("bad-yaml.md", "---\ntitle: [unclosed\n---\n# Bad YAML\n\nBroken.\n"),
    BadFile("python-tag.md", "---\nx: !!python/object:os.system ls\n---\n# Tag\n\nTag.\n"),
    BadFile("binary.md", b"\x00\x01\x02binary"),
    BadFile("bad-utf8.md", b"# Bad UTF-8\n\n\xff\xfe text\n"),
    BadFile("year-zero.md", "---\ncreated: 0000-01-01\nupdated: 10000-01-01\n---\n# Zero\n\nYear zero.\n"),
]

LOGSEQ_BAD = [
    BadFile("journals/2021_02_30.md", "- a day that does not exist\n"),
    BadFile("pages/Deep.md", _deep_logseq(DEEP), warns=False),  # imported whole, not warned
    BadFile("pages/Bad dates.md", "created-at:: 99999999999999999999\nupdated-at:: 1\n- block\n"),
    BadFile("pages/Bad props.md", "title:: \n- id:: \n- a:: [[\n- {{embed}}\n"),
]

ROAM_BAD = [
    BadFile("truncated.json", _deep_roam(3)[:-15]),
    # 300 levels (600 JSON containers): json reads it, and the importer (which recursed, three
    # frames a level) now takes it whole. 3,000 levels is past what json itself reads: a warning.
    BadFile("deep.json", _deep_roam(300), warns=False),
    BadFile("too-deep.json", _deep_roam(DEEP)),
    BadFile("types.json", json.dumps([
        {"title": ["a", "list"], "children": []},
        {"title": "Typed", "uid": {"not": "a string"}, "create-time": 1e30, "edit-time": float("inf"),
         "children": [{"string": ["list"], "uid": 5, "children": "nope"}, 7, None]},
    ], allow_nan=True)),
    BadFile("not-a-list.json", json.dumps({"title": "x", "children": [], "uid": "z"})),
]

TANA_BAD_DOCS = [
    {"id": "bad-props", "props": ["a", "list"], "children": []},
    {"id": "bad-children", "props": {"name": "Bad children"}, "children": {"a": 1}},
    {"id": "bad-values", "props": {"name": {"x": 1}, "_docType": ["list"], "created": 1e30,
                                   "_ownerId": 5, "_metaNodeId": ["x"]}, "modifiedTs": ["a", None, 1e40]},
    {"id": 12345, "props": {"name": "numeric id"}},
    "not a doc",
]


def _tana_chain(length: int) -> list[dict]:
    docs = []
    for i in range(length):
        ref = f'<span data-inlineref-node="chain-{i + 1}"></span>' if i + 1 < length else "end"
        docs.append({"id": f"chain-{i}", "props": {"name": f"link {ref}"}, "children": []})
    return docs


TANA_BAD = [
    BadFile("tana-chain.json", json.dumps({"formatVersion": 1, "docs": _tana_chain(DEEP)}), warns=False),
    BadFile("tana-types.json", json.dumps({"formatVersion": 1, "docs": TANA_BAD_DOCS}, allow_nan=True)),
    BadFile("tana-truncated.json", json.dumps({"formatVersion": 1, "docs": TANA_BAD_DOCS[:1]})[:-10]),
]

NOTION_BAD = [
    BadFile(f"Big cells {NOTION_ID}.csv", "Name,Notes\nBig," + "x" * 200_000 + "\nSmall,y\n", warns=False),
    BadFile(f"Ragged {NOTION_ID}.csv", "Name,A,B\nOnly one\nThree,1,2,3,4\n\"Open quote,1,2\n"),
    BadFile(f"Binary {NOTION_ID}.md", b"\x00\x00binary page"),
]

JSON_BAD_RECORDS = [
    {"id": "pos", "title": "Huge position", "position": 10**30},
    {"id": "src", "title": "Object source path", "source_path": {"a": 1}},
    {"id": "deep", "title": "Deep value", "extra": json.loads(_deep_json_value(400))},
    {"id": "dates", "title": "Bad dates", "created": 1e25, "updated": "2021-02-30"},
    {"id": "types", "title": ["not", "a", "string"]},
    {"id": "tags", "title": "Bad tags", "tags": [{"a": 1}]},
    {"id": {"an": "object"}},
    {"title": "No id"},
    {"id": "pos", "title": "Duplicate id"},
    "not an object",
]


@dataclass(frozen=True)
class HostileSource:
    fmt: str
    path: Path  # what to import
    bad: list[str]  # names the warnings must mention
    good_titles: list[str]  # titles that must be in the graph afterwards


GOOD_NOTES = ("Good one", "Good two")


def build_bad_source(folder: Path, fmt: str) -> HostileSource:
    """A source in ``fmt`` holding every bad file of that format beside two good notes."""
    folder.mkdir(parents=True, exist_ok=True)

    def write(name: str, content: str | bytes) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")

    if fmt in ("obsidian", "foam", "dendron"):
        prefix = "notes." if fmt == "dendron" else ""
        if fmt == "dendron":
            write("dendron.yml", "version: 5\n")
        for title in GOOD_NOTES:
            write(f"{prefix}{title.replace(' ', '-').lower()}.md", f"---\ntitle: {title}\n---\n\nA good note.\n")
        for bad in MARKDOWN_BAD:
            write(prefix + bad.name, bad.content)
        return HostileSource(fmt, folder, [prefix + b.name for b in MARKDOWN_BAD if b.warns], list(GOOD_NOTES))
    if fmt == "logseq":
        write("logseq/config.edn", "{}\n")
        for title in GOOD_NOTES:
            write(f"pages/{title}.md", "- a good block\n")
        for bad in LOGSEQ_BAD:
            write(bad.name, bad.content)
        return HostileSource(fmt, folder, [b.name for b in LOGSEQ_BAD if b.warns and b.name.startswith("journals")],
                             list(GOOD_NOTES))
    if fmt == "roam":
        write("good.json", json.dumps([{"title": t, "uid": f"g{i}", "children": [{"string": "good", "uid": f"gb{i}"}]}
                                       for i, t in enumerate(GOOD_NOTES)]))
        for bad in ROAM_BAD:
            write(bad.name, bad.content)
        # not-a-list.json does not look like a Roam export, so the folder's import leaves it out.
        return HostileSource(fmt, folder, ["truncated.json", "too-deep.json", "types.json"], list(GOOD_NOTES))
    if fmt == "tana":
        docs = [{"id": f"g{i}", "props": {"name": t}, "children": []} for i, t in enumerate(GOOD_NOTES)]
        write("good.json", json.dumps({"formatVersion": 1, "docs": docs}))
        for bad in TANA_BAD:
            write(bad.name, bad.content)
        return HostileSource(fmt, folder, ["tana-types.json", "tana-truncated.json"], list(GOOD_NOTES))
    if fmt == "notion":
        for title in GOOD_NOTES:
            write(f"{title} {NOTION_ID[:-1]}{len(title)}.md", f"# {title}\n\nA good page.\n")
        for bad in NOTION_BAD:
            write(bad.name, bad.content)
        return HostileSource(fmt, folder, [b.name for b in NOTION_BAD if b.warns], list(GOOD_NOTES))
    if fmt == "json":
        records = [{"id": f"g{i}", "title": t} for i, t in enumerate(GOOD_NOTES)] + JSON_BAD_RECORDS
        lines = [json.dumps(r, allow_nan=True) for r in records] + ['{"id": "trunc', "[1, 2"]
        path = folder / "graph.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        # Lines 3-5 are repaired in place (a position beyond SQLite's integers is no position, an
        # object source path is the file's, a deep value is kept as text); line 6's dates are
        # dropped with a warning naming the node; every later line is skipped with a warning.
        first_skipped = len(GOOD_NOTES) + 5
        bad_lines = [f"graph.jsonl:{n}:" for n in range(first_skipped, len(lines) + 1)]
        bad_lines.append("graph.jsonl: node 'dates': created date")
        return HostileSource(fmt, path, bad_lines, list(GOOD_NOTES))
    raise ValueError(fmt)


FORMATS = ("obsidian", "foam", "dendron", "logseq", "roam", "tana", "notion", "json")


def bad_case_count(fmt: str) -> int:
    """How many hostile files (and, for a JSON graph, records and lines) ``build_bad_source`` writes."""
    return {
        "obsidian": len(MARKDOWN_BAD), "foam": len(MARKDOWN_BAD), "dendron": len(MARKDOWN_BAD),
        "logseq": len(LOGSEQ_BAD), "roam": len(ROAM_BAD), "tana": len(TANA_BAD) + len(TANA_BAD_DOCS) - 1,
        "notion": len(NOTION_BAD), "json": len(JSON_BAD_RECORDS) + 2,
    }[fmt]


def import_in_process(db: Path, source: Path, fmt: str) -> tuple[object, list[str], str | None]:
    """(report or None, warnings, error text or None) of one import; an exception that is not one
    of ctx's own errors is returned as ``internal error: ...`` (what the CLI would print)."""
    from ctx.errors import CtxError
    from ctx.importers.engine import import_path
    from ctx.store import connect

    conn = connect(db, create=True)
    try:
        report = import_path(conn, source, format=fmt)
        return report, list(report.warnings), None
    except CtxError as exc:
        return None, [], str(exc)
    except Exception as exc:  # noqa: BLE001 - exactly what the audit counts
        return None, [], f"internal error: {exc.__class__.__name__}: {exc}"
    finally:
        conn.close()


TimedImport = Callable[[Path, Path, str], float]


def fifo_supported() -> bool:
    return hasattr(os, "mkfifo")
