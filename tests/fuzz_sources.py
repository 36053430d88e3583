"""Hypothesis strategies for hostile sources of every format, and the check each example must pass.

A generated example is a handful of files in one format: text built from the syntax each parser
looks for (brackets, backticks, ``::``, ``{{embed``, ``<span``, quotes, tabs, dates that do not
exist, numbers past any range, YAML anchors and tags) and, for the JSON exports, records whose
values have any JSON type at any place. Two good notes sit beside them. ``check_example`` imports
the lot and asserts what issue 11 promises:

* the import ends without an internal error (ctx's own errors are fine: exit 2);
* every good note is imported;
* every file the importer lists is either read or named in a warning, and for the record-based
  formats (JSON lines, Roam pages) every record is either imported or named in a warning;
* the graph answers build, show and search afterwards, its JSON strict.

Used by tests/test_fuzz_import.py (small fixed budget) and bench/bench_hostile.py (larger).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

NOTION_ID = "0123456789abcdef0123456789abcdef"
GOOD_TITLES = ("Good alpha", "Good beta")

FRAGMENTS = [
    "[[", "]]", "[", "]", "(", ")", "((", "))", "{{embed ", "{{embed [[", "{{", "}}", "`", "``", "```",
    "~~~", "#", "#[[", "#tag", "::", ":", "- ", "\t", "    ", "\n", "\n\n", "\n- ", "\n\t- ", "---", "...",
    "<", ">", "&amp;", "&", '"', "'", "\\", "|", "*", "!", "![[", "](", "](<", ']( "', "http://x.y",
    "a.md", "b.csv", "id:: ", "title:: ", "tags:: ", "alias:: ", "created-at:: ", "2021-02-30", "1e25",
    '<span data-inlineref-node="', '"></span>', '<span data-inlineref-date="{', "é", "\u200b", "😀",
    "\u202e", "Ω", "0123456789abcdef0123456789abcdef", "Key: value", "%20", "../", "/", ".", "^block",
]
_plain_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r")
_plain = st.text(_plain_chars, max_size=8)
text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), _plain), max_size=30).map("".join)

YAML_VALUES = [
    "2021-02-30", "0000-01-01", "10000-01-01", "2021-13-01T25:61:00", "1.0e+25", "-1.0e+25", ".nan", ".inf",
    "-.inf", "9" * 40, "-" + "9" * 40, "[[Good alpha]]", '"[[Good beta]]"', "[a, [b, [c]]]", "&x [1, 2]",
    "*x", "!!binary aGk=", "!!python/object:os.system x", "{a: b, c: [d]}", "''", '"\\x00"', "|\n  block\n",
    ">-\n  folded\n", "[" * 70 + "]" * 70, "yes", "null", "~", "0x1F", "0o17", "1_000", "12:30:00",
    "2024-01-01 10:00:00 +05:00", "[private]", "true",
]
_yaml_keys = st.one_of(
    st.sampled_from(["title", "tags", "tag", "aliases", "created", "updated", "date", "modified", "type",
                     "private", "owner", "id", "desc"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,10}", fullmatch=True),
)
_yaml_value = st.one_of(st.sampled_from(YAML_VALUES), text.map(lambda t: t.replace("\n", " ")))
frontmatter = st.lists(st.tuples(_yaml_keys, _yaml_value), max_size=6).map(
    lambda pairs: "---\n" + "".join(f"{k}: {v}\n" for k, v in pairs) + "---\n"
)
markdown_note = st.tuples(st.one_of(st.just(""), frontmatter), text).map("".join)


def _outline_line(parts: tuple[int, bool, str]) -> str:
    depth, bullet, body = parts
    return "\t" * depth + ("- " if bullet else "") + body.replace("\n", " ")


logseq_page = st.lists(
    st.tuples(st.integers(0, 8), st.booleans(), text).map(_outline_line), max_size=12
).map("\n".join)

# Any JSON value, with floats that are not finite or far out of range among them.
json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([1e25, -1e25, 1e308, math.inf, -math.inf, math.nan, 0.5]),
    text,
)
any_json = st.recursive(json_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                              st.dictionaries(_plain, inner, max_size=4)),
                        max_leaves=12)


def _roam_block(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={"string": st.one_of(text, any_json), "uid": st.one_of(_plain, any_json),
                  "children": children, "create-time": json_scalar, "edit-time": json_scalar},
    )


roam_blocks = st.recursive(st.just([]), lambda inner: st.lists(st.one_of(_roam_block(inner), any_json), max_size=3),
                           max_leaves=10)
roam_page = st.fixed_dictionaries(
    {"title": st.one_of(text, any_json)},
    optional={"uid": st.one_of(_plain, any_json), "children": roam_blocks, "create-time": json_scalar,
              "edit-time": json_scalar},
)
roam_export = st.lists(st.one_of(roam_page, any_json), max_size=5)

_tana_ids = st.sampled_from(["t1", "t2", "t3", "SYS_A13", "ws_SCHEMA", "ws_TRASH", "meta1", "tuple1"])
tana_doc = st.fixed_dictionaries(
    {"id": st.one_of(_tana_ids, any_json)},
    optional={
        "props": st.one_of(
            st.fixed_dictionaries({}, optional={
                "name": st.one_of(text, any_json), "_docType": st.one_of(st.sampled_from(
                    ["tuple", "metanode", "tagDef", "attrDef", "home", "journal", "codeblock"]), any_json),
                "_ownerId": st.one_of(_tana_ids, any_json), "_metaNodeId": st.one_of(_tana_ids, any_json),
                "created": json_scalar, "description": st.one_of(text, any_json)}),
            any_json,
        ),
        "children": st.one_of(st.lists(st.one_of(_tana_ids, any_json), max_size=4), any_json),
        "modifiedTs": st.one_of(st.lists(json_scalar, max_size=3), any_json),
    },
)
tana_export = st.lists(st.one_of(tana_doc, any_json), max_size=8).map(lambda docs: {"formatVersion": 1, "docs": docs})

notion_page = st.tuples(text, st.lists(st.tuples(_plain, text), max_size=4), text).map(
    lambda p: f"# {p[0]}\n\n" + "".join(f"{k}: {v}\n" for k, v in p[1]) + "\n" + p[2]
)


def _csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


notion_csv = st.one_of(
    st.lists(st.lists(text, max_size=5), max_size=6).map(_csv_text),
    text,  # whatever a .csv happens to hold
)

json_record = st.one_of(
    st.fixed_dictionaries({"id": st.one_of(_plain, any_json)}, optional={
        "title": st.one_of(text, any_json), "body": st.one_of(text, any_json), "tags": any_json,
        "aliases": any_json, "fields": any_json, "created": json_scalar, "updated": json_scalar,
        "parent": any_json, "links": any_json, "supports": any_json, "position": json_scalar,
        "source_path": any_json, "type": any_json, "extra": any_json}),
    st.fixed_dictionaries({"source": any_json, "target": any_json}, optional={"type": any_json,
                                                                             "position": json_scalar}),
    any_json,
)
json_line = st.one_of(json_record.map(lambda r: json.dumps(r, allow_nan=True)), text.map(lambda t: t.replace("\n", " ")))


def _maybe_truncated(content: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(content, st.floats(0, 1), st.booleans()).map(
        lambda c: c[0][: int(len(c[0]) * c[1])] if c[2] and c[0] else c[0]
    )


def _json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


# format -> strategy of {relative path: content} for the hostile files
def hostile_files(fmt: str) -> st.SearchStrategy[dict[str, str]]:
    def numbered(names: str, content: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, str]]:
        return st.lists(content, min_size=1, max_size=3).map(
            lambda items: {names.format(i): item for i, item in enumerate(items)}
        )

    if fmt in ("obsidian", "foam"):
        return numbered("fuzz-{}.md", markdown_note)
    if fmt == "dendron":
        return numbered("fuzz.n{}.md", markdown_note)
    if fmt == "logseq":
        return st.tuples(numbered("pages/fuzz-{}.md", logseq_page),
                         numbered("journals/2021_0{}_3.md", logseq_page)).map(lambda p: {**p[0], **p[1]})
    if fmt == "roam":
        return numbered("fuzz-{}.json", _maybe_truncated(roam_export.map(_json_text)))
    if fmt == "tana":
        return numbered("fuzz-{}.json", _maybe_truncated(tana_export.map(_json_text)))
    if fmt == "notion":
        return st.tuples(numbered("Fuzz {} " + NOTION_ID + ".md", notion_page),
                         numbered("Table {} " + NOTION_ID + ".csv", notion_csv)).map(lambda p: {**p[0], **p[1]})
    if fmt == "json":
        return st.lists(json_line, max_size=8).map(lambda lines: {"graph.jsonl": "\n".join(lines) + "\n"})
    raise ValueError(fmt)


FORMATS = ("obsidian", "foam", "dendron", "logseq", "roam", "tana", "notion", "json")


def _good_files(fmt: str) -> dict[str, str]:
    a, b = GOOD_TITLES
    if fmt in ("obsidian", "foam"):
        return {f"{t}.md": f"# {t}\n\nA good note about {t.split()[1]}. [[{b}]]\n" for t in (a, b)}
    if fmt == "dendron":
        return {f"good.{t.split()[1]}.md": f"---\ntitle: {t}\n---\nA good note.\n" for t in (a, b)}
    if fmt == "logseq":
        return {f"pages/{t}.md": f"- a good block of {t}\n\t- with a child\n" for t in (a, b)}
    if fmt == "roam":
        pages = [{"title": t, "uid": f"good{i}", "children": [{"string": "good block", "uid": f"gb{i}"}]}
                 for i, t in enumerate((a, b))]
        return {"good.json": json.dumps(pages)}
    if fmt == "tana":
        docs = [{"id": f"good{i}", "props": {"name": t}, "children": []} for i, t in enumerate((a, b))]
        return {"good.json": json.dumps({"formatVersion": 1, "docs": docs})}
    if fmt == "notion":
        return {f"{t} {NOTION_ID[:-1]}{i}.md": f"# {t}\n\nA good page.\n" for i, t in enumerate((a, b))}
    if fmt == "json":
        return {}  # written into graph.jsonl with the hostile lines
    raise ValueError(fmt)


@dataclass
class Outcome:
    fmt: str
    internal_error: str | None = None
    usage_error: str | None = None
    warnings: list[str] = field(default_factory=list)


def write_example(root: Path, fmt: str, files: dict[str, str]) -> Path:
    """The source folder (or file) for one example: the good notes and the hostile files."""
    root.mkdir(parents=True, exist_ok=True)
    all_files = {**_good_files(fmt), **files}
    if fmt == "json":
        good = [json.dumps({"id": f"good{i}", "title": t}) for i, t in enumerate(GOOD_TITLES)]
        all_files = {"graph.jsonl": "\n".join(good) + "\n" + files["graph.jsonl"]}
    if fmt == "logseq":
        all_files["logseq/config.edn"] = "{}\n"
    if fmt == "dendron":
        all_files["dendron.yml"] = "version: 5\n"
    for rel, content in all_files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return root / "graph.jsonl" if fmt == "json" else root


def check_example(workdir: Path, fmt: str, files: dict[str, str]) -> Outcome:
    """Import one example and assert the promises above; returns what happened (for counting)."""
    from ctx.assemble import BuildRequest, build_context
    from ctx.errors import CtxError
    from ctx.importers import get_importer
    from ctx.importers.engine import import_path
    from ctx.graph import Graph
    from ctx.inspection import search_report, show_report

    source = write_example(workdir / "src", fmt, files)
    from ctx.store import connect

    graph = Graph.open(workdir / "graph.db", create=True)
    conn = connect(workdir / "graph.db")  # the test's own look at the rows
    outcome = Outcome(fmt)
    try:
        try:
            report = import_path(graph.store, source, format=fmt)
        except CtxError as exc:
            outcome.usage_error = str(exc)
            raise AssertionError(f"{fmt}: the import failed although good notes were there: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - what the CLI would call an internal error
            outcome.internal_error = f"{exc.__class__.__name__}: {exc}"
            raise AssertionError(f"{fmt}: internal error {outcome.internal_error}") from exc
        outcome.warnings = list(report.warnings)
        warned = "\n".join(report.warnings)

        titles = {r[0] for r in conn.execute("SELECT title FROM nodes")}
        for title in GOOD_TITLES:
            assert title in titles, f"{fmt}: good note {title!r} missing; warnings:\n{warned}"

        # Every file the importer lists was read, or is named in a warning.
        importer = get_importer(fmt)
        read = {r[0] for r in conn.execute("SELECT path FROM files")}
        for rel in importer.list_files(source if fmt == "json" else source.resolve()):
            assert rel in read or rel in warned, f"{fmt}: {rel} neither imported nor named:\n{warned}"
        _check_records(conn, fmt, files, warned, read)

        # The graph is usable: build, show and search answer, in strict JSON.
        for title in GOOD_TITLES[:1]:
            for output in ("markdown", "json"):
                result = build_context(graph.store, BuildRequest(topics=(title,), format=output, max_tokens=600))
                assert result.found, f"{fmt}: build of {title!r} found nothing"
                if output == "json":
                    strict_loads(result.text)
            strict_loads(show_report(graph, title, fmt="json").text)
            strict_loads(search_report(graph, title, limit=20, fmt="json").text)
        # Broad (any word matches) with query syntax in it; not only function words, which are
        # refused as a usage error.
        strict_loads(search_report(graph, f"a the [[ # {GOOD_TITLES[0]}", limit=50, fmt="json").text)
    finally:
        conn.close()
        graph.close()
    return outcome


def _check_records(conn: Any, fmt: str, files: dict[str, str], warned: str, read: set[str]) -> None:
    """Record-level: every JSON line and every Roam page is imported or named in a warning."""
    if fmt == "json":
        ids = {r[0] for r in conn.execute("SELECT id FROM nodes")}
        offset = len(GOOD_TITLES)
        for number, line in enumerate(files["graph.jsonl"].split("\n"), start=offset + 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                assert f"graph.jsonl:{number}:" in warned, f"bad line {number} not named:\n{warned}"
                continue
            node_id = record.get("id") if isinstance(record, dict) else None
            is_edge = isinstance(record, dict) and any(k in record for k in ("source", "src", "from"))
            if isinstance(node_id, (str, int)) and not isinstance(node_id, bool) and str(node_id) in ids:
                continue
            if is_edge and f"graph.jsonl:{number}:" not in warned:
                continue  # an edge record stored (or its unknown source warned about by id)
            assert f"graph.jsonl:{number}" in warned or "graph.jsonl: node" in warned, (
                f"record on line {number} neither imported nor named:\n{line[:200]}\n{warned}"
            )
    if fmt == "roam":
        titles = {r[0] for r in conn.execute("SELECT title FROM nodes WHERE type IN ('page', 'journal')")}
        for rel, content in files.items():
            if rel not in read:
                continue  # not a Roam export (or not readable): checked with the files above
            try:
                pages = json.loads(content)
            except (ValueError, RecursionError):
                continue  # the whole file is named (checked with the files)
            if not isinstance(pages, list):
                continue
            for index, page in enumerate(pages):
                title = page.get("title") if isinstance(page, dict) else None
                usable = isinstance(title, (str, int, float)) and not isinstance(title, bool)
                if usable and str(title).strip() in titles:
                    continue
                # Skipped pages are named by index; a page dropped by the record check (an
                # unusable id) by its file.
                assert f"{rel}: page [{index}]" in warned or f"{rel}: " in warned, (
                    f"{rel} page [{index}] neither imported nor named:\n{warned}"
                )


def strict_loads(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)
