"""``ctx build --since``: every build records a manifest; a later build says what is new, what
changed (the changed passages only) and what dropped out, within the same exact budget. Real
files, real SQLite, the real CLI and MCP tools."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import FIXTURES
from json_contract import assert_valid_build

from ctx.tokens import count_tokens

TOPIC = "Project Apollo"
ID = re.compile(r"context: (c-[0-9]{12})")


@pytest.fixture
def vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))  # the config file the tests write
    copy = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", copy)
    return copy


def _imported(run_cli, vault: Path) -> None:
    result = run_cli("import", str(vault))
    assert result.exit_code == 0, result.stderr


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _context_id(text: str) -> str:
    found = ID.search(text)
    assert found, text[:400]
    return found.group(1)


def _rows(db: Path) -> list[tuple[str, int]]:
    conn = sqlite3.connect(db)
    try:
        return [(r[0], r[1]) for r in conn.execute("SELECT id, graph_version FROM contexts ORDER BY seq")]
    finally:
        conn.close()


def test_the_same_build_has_the_same_id_and_an_unchanged_context_says_so_in_one_line(run_cli, vault, db_path):
    _imported(run_cli, vault)
    first = run_cli("build", TOPIC, "--max-tokens", "1500")
    again = run_cli("build", TOPIC, "--max-tokens", "1500")
    assert first.stdout == again.stdout
    ident = _context_id(first.stdout)
    assert [r[0] for r in _rows(db_path)] == [ident]  # recorded once, under its id

    diff = run_cli("build", TOPIC, "--max-tokens", "1500", "--since", "last")
    assert diff.exit_code == 0, diff.stderr
    assert diff.stdout.count("\n") == 1
    assert diff.stdout.startswith(f"# Context diff: {TOPIC}: unchanged since {ident} (graph v1; ")
    used = int(re.search(r"; (\d+)/1500 tokens\)", diff.stdout).group(1))
    assert used == count_tokens(diff.stdout)
    by_id = run_cli("build", TOPIC, "--max-tokens", "1500", "--since", ident)
    assert by_id.stdout == diff.stdout


def test_a_changed_passage_is_sent_alone_and_marked(run_cli, vault, db_path):
    _imported(run_cli, vault)
    # A budget the whole walk fits in: at one it fills, the edit's few tokens move the packing
    # boundary (a tag in, a note out), which is another test's subject (new and dropped out).
    full = run_cli("build", TOPIC, "--max-tokens", "12000")
    assert re.search(r"tokens: \d+/12000 · nodes: \d+ full, 0 shortened, 0 summarized, 0 omitted", full.stdout)
    before = _context_id(full.stdout)
    assert "The marketing page still needs pricing copy" in full.stdout
    # One sentence of the Scope section changes; the note's other passages do not.
    _edit(vault / "Projects" / "Project Apollo.md", "the admin web view.", "the admin web view, and a KESTREL-7 kiosk.")
    _imported(run_cli, vault)

    diff = run_cli("build", TOPIC, "--max-tokens", "12000", "--since", "last")
    assert diff.exit_code == 0, diff.stderr
    text = diff.stdout
    assert text.startswith(f"# Context diff: {TOPIC}\nsince {before} (graph v1) · now c-")
    assert "0 new, 1 changed, 0 dropped out," in text
    assert "## Changed" in text and "## New" not in text and "## Dropped out" not in text
    assert "KESTREL-7 kiosk" in text
    # The changed passage only: not the note's opening, nor the passages after it, nor any
    # other note the context showed unchanged.
    assert "The marketing page still needs pricing copy" not in text
    assert "Apollo is a mobile app" not in text
    assert "[…]" in text  # the gap marks say where the rest of the note is
    assert count_tokens(text) < count_tokens(full.stdout) // 3
    used = int(re.search(r"tokens: (\d+)/12000", text).group(1))
    assert used == count_tokens(text)


def test_new_and_dropped_out_nodes_are_listed_with_why(run_cli, vault, db_path):
    _imported(run_cli, vault)
    full = run_cli("build", TOPIC, "--max-tokens", "4000")
    assert "### Apollo Risks" in full.stdout
    (vault / "Projects" / "Apollo Risks.md").unlink()
    (vault / "Projects" / "Apollo Budget.md").write_text(
        "---\nproject: \"[[Project Apollo]]\"\n---\n# Apollo Budget\n\nThe OSPREY-3 line item covers contractors.\n",
        encoding="utf-8",
    )
    _imported(run_cli, vault)
    diff = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", "last")
    text = diff.stdout
    new = text.split("## New", 1)[1].split("\n## ", 1)[0]
    assert "### Apollo Budget" in new and "OSPREY-3" in new
    dropped = text.split("## Dropped out\n", 1)[1].split("\n\n", 1)[0]
    assert "- Apollo Risks (id: Projects/Apollo Risks; no longer in the graph)" in dropped.splitlines()
    assert count_tokens(text) <= 4000


def test_json_has_the_diff_section_and_is_valid(run_cli, vault):
    _imported(run_cli, vault)
    first = json.loads(run_cli("build", TOPIC, "--format", "json", "--max-tokens", "3000").stdout)
    ident = first["meta"]["context"]
    _edit(vault / "Projects" / "Project Apollo.md", "the admin web view.", "the admin web view, and a KESTREL-7 kiosk.")
    _imported(run_cli, vault)
    result = run_cli("build", TOPIC, "--format", "json", "--max-tokens", "3000", "--since", ident)
    document = json.loads(result.stdout)
    assert_valid_build(document)
    diff = document["diff"]
    assert diff["since"] == ident and diff["context"] == document["meta"]["context"] != ident
    assert diff["unchanged"] is False
    assert diff["new"] == [] and diff["dropped"] == []
    assert [c["id"] for c in diff["changed"]] == ["Projects/Project Apollo"]
    [node] = document["nodes"]
    assert node["change"] == "changed" and "KESTREL-7" in node["content"]
    assert node["changed_passages"]["shown"] == diff["changed"][0]["passages"]
    assert document["meta"]["tokens"]["used"] == count_tokens(result.stdout) <= 3000

    same = json.loads(run_cli("build", TOPIC, "--format", "json", "--max-tokens", "3000", "--since", "last").stdout)
    assert_valid_build(same)
    assert same["diff"]["unchanged"] is True and same["nodes"] == []


def test_since_last_compares_with_a_context_of_the_same_format(run_cli, vault):
    """JSON packs fewer nodes than markdown into the same budget: at dc7f3bd a markdown build
    after a JSON one (`--since last`) listed as new, or "dropped out: no room", nodes that only
    the other format's packing left out, though nothing in the graph changed. Now `--since last`
    takes the newest context of the build's own format; an id of the other format is still
    compared, and the diff says the earlier context was the other format."""
    _imported(run_cli, vault)
    shown = run_cli("build", TOPIC, "--max-tokens", "1200")
    as_json = json.loads(run_cli("build", TOPIC, "--max-tokens", "1200", "--format", "json").stdout)
    markdown_ids = re.findall(r"^### .*$", shown.stdout, re.MULTILINE)
    assert len(markdown_ids) != len(as_json["nodes"])  # the two formats pack other nodes

    again = run_cli("build", TOPIC, "--max-tokens", "1200", "--since", "last")
    assert again.exit_code == 0, again.stderr
    assert again.stdout.startswith(f"# Context diff: {TOPIC}: unchanged since {_context_id(shown.stdout)}")
    json_again = json.loads(run_cli("build", TOPIC, "--max-tokens", "1200", "--format", "json", "--since", "last").stdout)
    assert json_again["diff"]["unchanged"] is True and "since_format" not in json_again["diff"]

    across = run_cli("build", TOPIC, "--max-tokens", "1200", "--since", as_json["meta"]["context"])
    assert across.exit_code == 0, across.stderr
    assert f"since {as_json['meta']['context']} (graph v1; a json context: other nodes fit its budget)" in across.stdout
    other = run_cli("build", TOPIC, "--max-tokens", "1200", "--format", "json", "--since", _context_id(shown.stdout))
    document = json.loads(other.stdout)
    assert_valid_build(document)
    assert document["diff"]["since_format"] == "markdown"


def test_the_help_names_the_format_among_what_since_last_matches(run_cli):
    """`--since last` takes the newest context of the same format too (above), but `ctx build
    --help` and the MCP context tool listed topics, lens, depth, budget and encoding only: a JSON
    build after markdown ones said "no earlier context with these arguments" against its help."""
    from ctx.mcp_server import input_schema, tool_specs

    helped = " ".join(run_cli("build", "--help").stdout.split())
    tool = input_schema(next(s for s in tool_specs() if s.name == "context"))["properties"]["since"]["description"]
    for text in (helped, tool):
        assert re.search(r"the same topics?, lens, depth, budget, encoding and format\)", text), text


@pytest.mark.parametrize("budget", ["300", "700", "4000"])
def test_a_question_s_json_names_its_context_at_every_budget(run_cli, vault, db_path, budget):
    # The answer lens's lean header left ``meta.context`` out at every budget, so a script asking
    # questions could not name a context for --since; only the bare last-resort header may drop it.
    _imported(run_cli, vault)
    question = "what storage does the offline mode use?"
    first = json.loads(run_cli("build", question, "--format", "json", "--max-tokens", budget).stdout)
    assert first["meta"]["lens"] == "answer"
    ident = first["meta"]["context"]
    assert ident in [row[0] for row in _rows(db_path)]  # the id the graph recorded it under
    again = json.loads(run_cli("build", question, "--format", "json", "--max-tokens", budget, "--since", ident).stdout)
    assert again["diff"]["since"] == ident and again["diff"]["unchanged"] is True


@pytest.mark.parametrize("budget", [60, 120, 300])
def test_a_large_diff_stays_within_small_budgets(run_cli, vault, budget):
    _imported(run_cli, vault)
    run_cli("build", TOPIC, "--max-tokens", str(budget))
    for note in sorted((vault / "Projects").glob("*.md")) + sorted((vault / "Meetings").glob("*.md")):
        _edit(note, "\n", "\nEdited: every note says HERON-5 now.\n")
    _imported(run_cli, vault)
    for fmt in ("markdown", "json"):
        result = run_cli("build", TOPIC, "--max-tokens", str(budget), "--since", "last", "--format", fmt)
        assert result.exit_code == 0, result.stderr
        assert count_tokens(result.stdout) <= budget, (fmt, result.stdout)
        if fmt == "json":
            assert_valid_build(json.loads(result.stdout))


def test_since_refuses_what_it_cannot_name(run_cli, vault):
    _imported(run_cli, vault)
    bad = run_cli("build", TOPIC, "--since", "yesterday")
    assert bad.exit_code == 2
    assert bad.stderr.strip().splitlines() == [
        "ctx: error: --since must be 'last' or a context id like c-012345678901, not 'yesterday'"
    ]
    unknown = run_cli("build", TOPIC, "--since", "c-012345678901")
    assert unknown.exit_code == 2
    assert len(unknown.stderr.strip().splitlines()) == 1 and "no such context recorded" in unknown.stderr
    # No earlier context for these arguments: the whole context, and a notice.
    first = run_cli("build", TOPIC, "--max-tokens", "900", "--since", "last")
    assert first.exit_code == 0
    assert first.stdout.startswith(f"# Context: {TOPIC}\n")
    assert "no earlier context with these arguments" in first.stderr


def test_manifests_are_bounded_per_key(run_cli, vault, db_path, tmp_path):
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.yaml").write_text("contexts:\n  keep: 2\n", encoding="utf-8")
    _imported(run_cli, vault)
    ids = []
    for n in range(3):
        ids.append(_context_id(run_cli("build", TOPIC, "--max-tokens", "1500").stdout))
        _edit(vault / "Projects" / "Project Apollo.md", "the admin web view", f"the admin web view (v{n})")
        _imported(run_cli, vault)
    run_cli("build", TOPIC, "--max-tokens", "1200")  # another key keeps its own
    assert len(set(ids)) == 3
    kept = [r[0] for r in _rows(db_path)]
    assert ids[0] not in kept and ids[1] in kept and ids[2] in kept and len(kept) == 3
    gone = run_cli("build", TOPIC, "--max-tokens", "1500", "--since", ids[0])
    assert gone.exit_code == 2


def test_a_build_answers_while_another_process_holds_the_write_lock(run_cli, vault, db_path, monkeypatch):
    _imported(run_cli, vault)
    monkeypatch.setenv("CTX_BUSY_TIMEOUT_MS", "60000")  # were the build to wait, it would wait a minute
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        plain = run_cli("build", TOPIC, "--max-tokens", "900")
        assert plain.exit_code == 0 and plain.stderr == ""
        diff = run_cli("build", TOPIC, "--max-tokens", "900", "--since", "last")
        assert diff.exit_code == 0
        assert "not recorded (the graph is busy or read-only)" in diff.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _rows(db_path) == []


def test_a_private_reader_s_manifest_is_not_a_public_reader_s(run_cli, vault, db_path):
    (vault / "Projects" / "Apollo Salaries.md").write_text(
        "---\nproject: \"[[Project Apollo]]\"\ntags: [private]\n---\n# Apollo Salaries\n\nSecret.\n", encoding="utf-8"
    )
    _imported(run_cli, vault)
    private = run_cli("build", TOPIC, "--max-tokens", "4000", "--include-private")
    assert "Apollo Salaries" in private.stdout
    ident = _context_id(private.stdout)
    public = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", "last")
    assert "Apollo Salaries" not in public.stdout + public.stderr
    assert "no earlier context with these arguments" in public.stderr
    refused = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", ident)
    assert refused.exit_code == 2 and "Apollo Salaries" not in refused.stderr


def test_a_private_note_s_change_shows_to_a_public_diff_only_as_the_graph_s_version(run_cli, vault):
    """What docs/configuration.md says a public reader can learn of a private note's edit: the
    graph's version moved (the context id and `graph vN`), nothing else; the diff is the one line
    of an unchanged context."""
    salaries = vault / "Projects" / "Apollo Salaries.md"
    salaries.write_text(
        "---\nproject: \"[[Project Apollo]]\"\ntags: [private]\n---\n# Apollo Salaries\n\nSecret.\n", encoding="utf-8"
    )
    _imported(run_cli, vault)
    first = run_cli("build", TOPIC, "--max-tokens", "4000")
    salaries.write_text(salaries.read_text(encoding="utf-8").replace("Secret.", "Secret, raised."), encoding="utf-8")
    _imported(run_cli, vault)
    diff = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", _context_id(first.stdout))
    assert diff.exit_code == 0, diff.stderr
    assert re.fullmatch(
        rf"# Context diff: {TOPIC}: unchanged since {_context_id(first.stdout)} \(graph v2; \d+/4000 tokens\)\n",
        diff.stdout,
    )


def test_the_mcp_context_tool_takes_since(vault, db_path, run_cli):
    from ctx.mcp_server import CtxTools

    _imported(run_cli, vault)
    tools = CtxTools(db_path)
    try:
        first = tools.context(TOPIC, max_tokens=2000)
        assert not first.is_error
        assert first.text == run_cli("build", TOPIC, "--max-tokens", "2000").stdout
        ident = _context_id(first.text)
        again = tools.context(TOPIC, max_tokens=2000, since="last")
        assert again.text.startswith(f"# Context diff: {TOPIC}: unchanged since {ident}")
        bad = tools.context(TOPIC, since="nope")
        assert bad.is_error and bad.text.startswith("ctx: error: --since must be")
    finally:
        tools.close()


def test_a_removed_passage_is_said_to_be_removed(run_cli, vault):
    _imported(run_cli, vault)
    full = run_cli("build", TOPIC, "--max-tokens", "4000")
    assert "The marketing page still needs pricing copy" in full.stdout
    note = vault / "Projects" / "Project Apollo.md"
    text = note.read_text(encoding="utf-8")
    # The last section (a passage of its own) goes; the note's other passages stay as they were.
    note.write_text(text.split("## Plan and status", 1)[0].rstrip() + "\n", encoding="utf-8")
    _imported(run_cli, vault)
    diff = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", _context_id(full.stdout), "--format", "json")
    document = json.loads(diff.stdout)
    assert_valid_build(document)
    changed = {c["id"]: c for c in document["diff"]["changed"]}
    assert changed["Projects/Project Apollo"] == {"id": "Projects/Project Apollo", "passages": [], "removed": 1}
    node = next(n for n in document["nodes"] if n["id"] == "Projects/Project Apollo")
    assert node["removed_passages"] == 1 and node["content"] == ""
    markdown = run_cli("build", TOPIC, "--max-tokens", "4000", "--since", _context_id(full.stdout))
    assert "[1 passage(s) shown before: removed or rewritten]" in markdown.stdout


def test_what_a_diff_had_no_room_for_comes_in_the_next_one(run_cli, vault, db_path):
    """A diff cut for room records what the reader saw, not the whole context: the next
    ``--since last`` gives the rest (never a piece twice), until the context reads unchanged.
    The reader looked at a large context; every section of the topic's note is rewritten; it
    now asks with a small budget."""
    _imported(run_cli, vault)
    full = json.loads(run_cli("build", TOPIC, "--max-tokens", "4000", "--format", "json").stdout)
    before = {n["id"] for n in full["nodes"]}
    note = vault / "Projects" / "Project Apollo.md"
    text = note.read_text(encoding="utf-8")
    for heading in ("## Goals", "## Scope", "## Plan and status"):
        text = text.replace(heading, f"PLOVER-9 was rewritten here, with a few more words than before.\n\n{heading}")
    note.write_text(text.replace("#planning", "Rewritten at the end too.\n\n#planning"), encoding="utf-8")
    _imported(run_cli, vault)

    given: list[tuple[str, str, tuple[int, ...] | None]] = []
    since = full["meta"]["context"]
    for _ in range(30):
        result = run_cli("build", TOPIC, "--max-tokens", "600", "--format", "json", "--since", since)
        assert result.exit_code == 0, result.stderr
        document = json.loads(result.stdout)
        assert_valid_build(document)
        assert document["meta"]["tokens"]["used"] == count_tokens(result.stdout) <= 600
        diff = document["diff"]
        if diff["unchanged"]:
            break
        pieces = [("text", n["id"], tuple(n.get("changed_passages", {}).get("shown", ())) or None)
                  for n in document["nodes"] if not n.get("no_room")]
        pieces += [("dropped", d["id"], None) for d in diff["dropped"]]
        assert pieces, "a diff that shows nothing cannot make progress"
        assert not set(pieces) & set(given), "a piece was sent twice"
        given += pieces
        since = "last"
    else:
        raise AssertionError("the diffs never ran out")
    apollo = sorted(o for kind, node_id, ords in given if node_id == "Projects/Project Apollo" for o in ords or ())
    stored = sqlite3.connect(db_path)
    try:
        total = stored.execute("SELECT count(*) FROM passages WHERE node_id = 'Projects/Project Apollo'").fetchone()[0]
    finally:
        stored.close()
    assert apollo == list(range(total))  # every rewritten passage came, once
    now = json.loads(run_cli("build", TOPIC, "--max-tokens", "600", "--format", "json").stdout)
    dropped = {node_id for kind, node_id, _ in given if kind == "dropped"}
    assert dropped == before - {n["id"] for n in now["nodes"]}


def test_diffs_are_the_same_bytes_on_both_engines(vault, tmp_path, request):
    """The same sources and the same builds give the same manifests, ids and diffs on SQLite and
    PostgreSQL (a real server): a diff after an edit, an unchanged line, a diff against another
    budget's context (dropped-out nodes and why)."""
    pytest.importorskip("psycopg")
    from ctx.graph import Graph

    pg_url = request.getfixturevalue("pg_url")
    answers: list[list[str]] = []
    for target in (tmp_path / "g.db", pg_url):
        copy = tmp_path / f"vault-{len(answers)}"
        shutil.copytree(vault, copy)
        with Graph.open(target, create=True) as graph:
            graph.import_path(copy)
            big = graph.build(TOPIC, max_tokens=3000)
            small = graph.build(TOPIC, max_tokens=900)
            _edit(copy / "Projects" / "Project Apollo.md", "the admin web view.", "the admin web view, and a KESTREL-7 kiosk.")
            graph.import_path(copy)
            texts = [big.text, small.text]
            for since in ("last", "last", _context_id(big.text)):
                texts.append(graph.build(TOPIC, max_tokens=900, since=since).text)
            answers.append(texts)
    lite, pg = answers
    assert lite == pg
    assert "KESTREL-7" in lite[2] and "unchanged since" in lite[3] and "## Dropped out" in lite[4]


def test_the_id_names_what_a_lens_does_not_where_its_file_lives(run_cli, vault, tmp_path):
    # The same lens file in two folders (ctx installed twice, a lens copied to a colleague's
    # folder) gives the same context id and the same bytes; a lens that differs gets another id.
    _imported(run_cli, vault)
    from ctx.lenses.lookup import builtin_lens_dir

    ids = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        lens = tmp_path / folder / "mine.yaml"
        shutil.copy(builtin_lens_dir() / "planning.yaml", lens)
        ids.append(run_cli("build", TOPIC, "--lens", str(lens), "--max-tokens", "1500").stdout)
    assert _context_id(ids[0]) == _context_id(ids[1]) and ids[0] == ids[1]
    other = tmp_path / "two" / "other.yaml"
    other.write_text((tmp_path / "two" / "mine.yaml").read_text(encoding="utf-8").replace("max_depth: 5", "max_depth: 4"),
                     encoding="utf-8")
    shown = run_cli("build", TOPIC, "--lens", str(other), "--max-tokens", "1500").stdout
    assert _context_id(shown) != _context_id(ids[0])
