"""`ctx search` accepts anything a person or an agent might type."""

from __future__ import annotations

import json

import pytest

HOSTILE = [
    '"', '""', '"unbalanced', "it's", "AND", "OR", "NOT", "NEAR", "NEAR(apollo sync)", "apollo AND",
    "OR risk", "NOT launch", "*", "apollo*", "*apollo", "-", "-apollo", "--", "(", ")", "(apollo",
    "apollo)", "((()", ":", "title:apollo", "body:", "^", "^apollo",
    "Tomás Herrera", "日本語のテキスト", "emoji 🚀 launch", "a" * 5000, "apollo " * 500,
    "{curly}", "[brackets]", "a+b", "a/b\\c", "%_", "';--", "\x00", "NULL", "apollo NOT",
]


@pytest.mark.parametrize("query", HOSTILE, ids=[repr(q[:20]) for q in HOSTILE])
def test_hostile_queries_return_normally(query, demo_db, run_cli):
    for extra in ([], ["--format", "json"]):
        # `--` ends the options, so a query starting with '-' is still a query (as in any shell).
        result = run_cli("search", *extra, "--db", str(demo_db), "--", query)
        if query in ("AND", "OR", "NOT", "it's"):  # only function words: refused in one line, as below
            assert result.exit_code == 2 and result.stdout == "" and "has only common words" in result.stderr
            continue
        assert result.exit_code == 0, (query, result.stderr)
        if extra:
            json.loads(result.stdout)


@pytest.mark.parametrize("query", ["", "   ", "\t"], ids=repr)
def test_a_blank_query_is_a_usage_error(query, demo_db, run_cli):
    """As `ctx build ""` is (until dc7f3bd a blank search printed "no matches" and exited 0)."""
    for extra in ([], ["--format", "json"]):
        result = run_cli("search", *extra, "--db", str(demo_db), "--", query)
        assert result.exit_code == 2 and result.stdout == "", (query, result.stdout)
        assert result.stderr == "ctx: error: give some text to search for\n"


def test_a_query_of_only_function_words_is_refused_alike_everywhere(demo_db, run_cli, tmp_path):
    """At 07d9e5b `ctx search "how do I"` ranked notes on their "do" (and "the" scored every note
    0.00): noise. Refused in one line with exit 2, by the CLI, the MCP tool and Graph.search; a
    note named by exactly such words is still found, and one content word is enough."""
    from ctx import Graph
    from ctx.errors import UsageError
    from ctx.mcp_server import CtxTools

    line = ("ctx: error: 'how do I' has only common words (how, do, i), which nearly every note holds;"
            " add a word that names what you are looking for\n")
    for extra in ([], ["--format", "json"]):
        refused = run_cli("search", *extra, "how do I", db=demo_db)
        assert (refused.exit_code, refused.stdout, refused.stderr) == (2, "", line)
    tools = CtxTools(demo_db)
    try:
        reply = tools.search("how do I")
        assert reply.is_error and reply.text == line.rstrip("\n")
    finally:
        tools.handle.close()
    with Graph.open(demo_db) as graph, pytest.raises(UsageError, match="only common words"):
        graph.search("The, and?")
    found = json.loads(run_cli("search", "how do I sync", "--format", "json", db=demo_db).stdout)
    assert found["count"] > 0
    # A note whose title is only function words is what such a query names.
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "The Who.md").write_text("# The Who\n\nA band from London.\n", encoding="utf-8")
    (vault / "Other.md").write_text("# Other\n\nWho is the drummer of the band?\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert run_cli("import", str(vault), db=db).exit_code == 0
    named = json.loads(run_cli("search", "the who", "--format", "json", db=db).stdout)["results"]
    assert named[0]["id"] == "The Who"


def test_function_words_run_together_are_function_words(demo_db, run_cli, tmp_path):
    """Full-text search splits "it's" into "it" and "s": at 733ae3a `ctx build "it's"` built a
    context of notes that hold an "s" (exit 0) and `ctx search "what's it?"` ranked notes on "what"
    and "it", while "what is it" was refused. A contraction is refused as its words are; one content
    word beside it still searches, and a note named "It's" is still found."""
    for text, listed in (("it's", "it's"), ("What’s it?", "what's, it"), ("don't", "don't"),
                         ("how's that", "how's, that"), ("I'm", "i'm")):
        line = f"ctx: error: {text!r} has only common words ({listed}), which nearly every note holds;"
        for command in ("build", "search"):
            refused = run_cli(command, text, db=demo_db)
            assert (refused.exit_code, refused.stdout) == (2, ""), (command, text, refused.stdout)
            assert refused.stderr.startswith(line), refused.stderr
    assert run_cli("build", "it's the sync", db=demo_db).exit_code == 0
    assert json.loads(run_cli("search", "it's the sync", "--format", "json", db=demo_db).stdout)["count"] > 0
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "It's.md").write_text("A song.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert run_cli("import", str(vault), db=db).exit_code == 0
    assert run_cli("build", "it's", db=db).exit_code == 0
    assert json.loads(run_cli("search", "it's", "--format", "json", db=db).stdout)["results"][0]["id"] == "It's"


def test_the_help_and_the_tool_schema_say_a_query_of_function_words_is_refused(run_cli):
    """Where a person and an agent read what a query may be: `ctx search --help` and the MCP search
    tool's `query` argument both said any text is accepted (fea84be mended only the tool's
    description), while "how do I" is a usage error."""
    from ctx.mcp_server import input_schema, tool_specs

    helped = " ".join(run_cli("search", "--help").stdout.split())
    query = input_schema(next(s for s in tool_specs() if s.name == "search"))["properties"]["query"]["description"]
    for text in (helped, query):
        assert "any text is accepted" not in text.lower()
        assert "function words" in text and "how do I" in text
    assert "usage error (exit 2)" in helped


def test_a_build_of_only_function_words_is_refused_as_its_search_is(demo_db, run_cli, tmp_path):
    """`ctx build "how do I"` built a context of the notes that say "do" (exit 0); it is refused
    as the same search is, in the CLI, the MCP context tool and build_context; a note named by
    such words is still built, and one content word is enough."""
    from ctx.assemble import BuildRequest, build_context
    from ctx.errors import UsageError
    from ctx.mcp_server import CtxTools
    from ctx.store import connect

    line = ("ctx: error: 'how do I' has only common words (how, do, i), which nearly every note holds;"
            " add a word that names what you are looking for\n")
    for extra in ([], ["--format", "json"], ["--lens", "general"]):
        refused = run_cli("build", *extra, "how do I", db=demo_db)
        assert (refused.exit_code, refused.stdout, refused.stderr) == (2, "", line)
    tools = CtxTools(demo_db)
    try:
        reply = tools.context("how do I")
        assert reply.is_error and reply.text == line.rstrip("\n")
    finally:
        tools.handle.close()
    conn = connect(demo_db)
    try:
        with pytest.raises(UsageError, match="only common words"):
            build_context(conn, BuildRequest(topics=("Project Apollo", "the"), max_tokens=500))
    finally:
        conn.close()
    built = run_cli("build", "how do I sync offline", "--max-tokens", "300", db=demo_db)
    assert built.exit_code == 0 and "## Sources" in built.stdout
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "The Who.md").write_text("# The Who\n\nA band from London.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert run_cli("import", str(vault), db=db).exit_code == 0
    named = run_cli("build", "the who", "--max-tokens", "300", db=db)
    assert named.exit_code == 0 and "A band from London." in named.stdout


def test_search_finds_demo_notes(demo_db, run_cli):
    hits = json.loads(run_cli("search", "conflict resolution", "--format", "json", db=demo_db).stdout)["results"]
    assert hits[0]["id"] == "Tasks/Finish conflict resolution"
    assert hits[0]["source_path"] == "Tasks/Finish conflict resolution.md"
    accented = json.loads(run_cli("search", "Tomas", "--format", "json", db=demo_db).stdout)["results"]
    assert "People/Tomás Herrera" in [h["id"] for h in accented]
