"""Contexts for questions: passages, query-focused rendering, the default lens, "did you mean"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

CONFLICT_FACT = (
    "When two devices edit the same block offline, the later edit is kept and the earlier one is "
    "saved as a conflict copy named after its device."
)
PRICING_FACT = "The sync plan costs four euros a month and includes ten graphs."

SECTIONS = {
    "Pricing": PRICING_FACT,
    "Devices": "Phones, tablets and laptops can all join one graph after signing in.",
    "Conflicts": CONFLICT_FACT,
    "Storage": "Files are kept on servers in Frankfurt and deleted thirty days after a graph is removed.",
    "Troubleshooting": "If the indicator stays orange, restart the app and check the proxy settings.",
    "History": "Every version of a page is kept for a year and can be restored from its menu.",
    "Limits": "A single file larger than one hundred megabytes is skipped with a notice.",
}
FILLER = {
    "Pricing": "billing invoices receipts currency refunds",
    "Devices": "screens keyboards tablets phones laptops",
    "Conflicts": "merging timestamps copies versions offline editing",
    "Storage": "servers regions deletion retention backups",
    "Troubleshooting": "indicator restart proxy firewall logs",
    "History": "versions restore menu timeline snapshots",
    "Limits": "megabytes skipped notice quotas sizes",
}


def section(name: str) -> str:
    words = FILLER[name]
    padding = " ".join(f"This part talks about {words} in plain words, case {i}." for i in range(5))
    return f"## {name}\n\n{padding}\n\n{SECTIONS[name]}\n\n{padding}"


def write_vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "Sync FAQ.md").write_text("# Sync FAQ\n\n" + "\n\n".join(section(n) for n in SECTIONS))
    (root / "Encrypted Graphs.md").write_text(
        "# Encrypted Graphs\n\nEach graph is protected by its own password. The key never leaves the "
        "device, so nobody at the company can read your pages.\n"
    )
    (root / "Work.md").write_text("# Work\n\nIn physics, work is force multiplied by distance.\n")
    (root / "Canvas.md").write_text("# Canvas\n\nA canvas is an endless board for cards, images and links.\n")
    (root / "Release Notes.md").write_text(
        "# Release Notes\n\nVersion 2 improved sync speed and fixed a crash on start.\n"
    )
    return root


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("questions")
    vault = write_vault(root / "vault")
    db = root / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    return conn, db


def build(conn, topic: str, **kw):
    kw.setdefault("max_tokens", 600)
    return build_context(conn, BuildRequest(topics=(topic,), **kw))


def test_a_question_gets_the_relevant_middle_of_a_long_note(graph):
    conn, _ = graph
    faq_tokens = conn.execute("SELECT tokens FROM nodes WHERE id = 'Sync FAQ'").fetchone()[0]
    result = build(conn, "what happens when two devices edit the same block offline?", max_tokens=450)
    assert faq_tokens > 3 * 450  # the note could never fit whole
    assert count_tokens(result.text) <= 450
    assert CONFLICT_FACT in " ".join(result.text.split())
    assert PRICING_FACT not in result.text  # the opening section is not what was asked
    assert "#### Conflicts" in result.text  # under its heading, nested below the note's own
    assert "[…]" in result.text  # the left-out text is marked


def test_json_says_which_passages_were_kept(graph):
    conn, _ = graph
    doc = json.loads(build(conn, "what happens when two devices edit the same block offline?", format="json").text)
    faq = next(n for n in doc["nodes"] if n["id"] == "Sync FAQ")
    assert faq["truncated"] is True
    stored = conn.execute("SELECT ord, text FROM passage_texts WHERE node_id = 'Sync FAQ' ORDER BY ord").fetchall()
    assert faq["passages"]["total"] == len(stored) >= len(SECTIONS)
    answer = next(o for o, text in stored if "the later edit is kept" in text)
    assert answer in faq["passages"]["shown"] and len(faq["passages"]["shown"]) < len(stored)
    assert CONFLICT_FACT in " ".join(faq["content"].split())


def test_an_exact_title_keeps_the_graph_lens_and_its_opening(graph):
    conn, _ = graph
    doc = json.loads(build(conn, "Sync FAQ", format="json", max_tokens=2000).text)
    assert doc["meta"]["lens"] == "general"
    assert doc["meta"]["lens_choice"]["lens"] == "general"
    faq = next(n for n in doc["nodes"] if n["id"] == "Sync FAQ")
    assert "passages" not in faq and faq["content"].startswith("#### Pricing")


def test_a_question_chooses_the_answer_lens(graph):
    conn, _ = graph
    doc = json.loads(build(conn, "how much does sync cost?", format="json").text)
    assert doc["meta"]["lens"] == "answer"


def test_words_missing_from_the_answer_do_not_hide_it(graph):
    conn, db = graph
    # "work" is in no word of the answer note, and the note titled "Work" is not what is asked.
    result = build(conn, "how do encrypted graphs work", format="json", max_tokens=300)
    doc = json.loads(result.text)
    assert doc["nodes"][0]["id"] == "Encrypted Graphs"
    # Without the passage index (a graph from before it existed) the node search is OR-ed too.
    conn.execute("DELETE FROM passages")
    try:
        again = json.loads(build(conn, "how do encrypted graphs work", format="json", max_tokens=300).text)
        assert again["nodes"][0]["id"] == "Encrypted Graphs"
    finally:
        from ctx.store.passages import refresh

        conn.execute("UPDATE nodes SET split = 0")
        conn.execute("BEGIN IMMEDIATE")
        refresh(conn)
        conn.execute("COMMIT")


def test_a_one_letter_typo_is_not_found_and_suggests_the_title(graph, run_cli):
    conn, db = graph
    result = run_cli("build", "Canvs", db=db)
    assert result.exit_code == 3
    assert "did you mean 'Canvas'?" in result.stderr
    assert "Did you mean 'Canvas'?" in result.stdout
    doc = json.loads(run_cli("build", "Canvs", "--format", "json", db=db).stdout)
    assert doc["meta"]["suggestions"] == {"Canvs": ["Canvas"]}
    # A near-miss that still matches something is built, but says what it probably meant.
    near = run_cli("build", "Encrypted Graph", db=db)
    assert near.exit_code == 0 and "did you mean 'Encrypted Graphs'?" in near.stderr


def test_a_short_topic_whose_passages_full_text_found_is_not_checked_word_by_word(graph, monkeypatch):
    """Whether a short topic is a typo is read off its full-text ranking when it has one; the
    index is asked word by word only when that ranking is empty (the typo itself)."""
    from ctx.store.view import GraphView

    conn, _ = graph
    asked: list[list[str]] = []
    known = GraphView.passage_terms_known

    def counted(self, terms):
        asked.append(list(terms))
        return known(self, terms)

    monkeypatch.setattr(GraphView, "passage_terms_known", counted)
    assert build(conn, "encrypted graph sync", format="json").found
    assert asked == []
    assert not build(conn, "Canvs").found
    assert asked == [["canvs"]]


def test_a_mistyped_lens_name_suggests_the_lens(graph, run_cli):
    _, db = graph
    result = run_cli("build", "Canvas", "--lens", "questoin", db=db)
    assert result.exit_code == 2
    assert "did you mean 'question'?" in result.stderr


def test_the_output_is_byte_identical_across_processes(graph):
    _, db = graph
    code = (
        "import sys; from ctx.store import connect; from ctx.assemble import BuildRequest, build_context;"
        "r = build_context(connect(sys.argv[1]), BuildRequest(('what happens to edits made offline on two devices?',),"
        " max_tokens=700, format=sys.argv[2])); sys.stdout.write(r.text)"
    )
    for fmt in ("markdown", "json"):
        outs = {subprocess.run([sys.executable, "-c", code, str(db), fmt], capture_output=True, text=True,
                               check=True).stdout for _ in range(2)}
        assert len(outs) == 1 and next(iter(outs))


def test_a_top_ranked_node_is_not_cut_to_scraps_while_a_lower_one_is_whole(tmp_path):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    vault = tmp_path / "vault"
    vault.mkdir()
    long_text = "\n\n".join(f"Paragraph {i} of the long design note, full of detail. " * 4 for i in range(30))
    (vault / "Hub.md").write_text("# Hub\n\nSee [[Design]] first, then [[Small A]] and [[Small B]].\n")
    (vault / "Design.md").write_text("---\nupdated: 2026-01-10\n---\n# Design\n\n" + long_text)
    for name in ("Small A", "Small B"):
        (vault / f"{name}.md").write_text(f"---\nupdated: 2025-01-01\n---\n# {name}\n\nA short note.\n")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    doc = json.loads(build_context(conn, BuildRequest(("Hub",), max_tokens=700, format="json")).text)
    nodes = {n["id"]: n for n in doc["nodes"]}
    ranks = {n["id"]: n["rank"] for n in doc["nodes"]}
    assert "Design" in nodes, doc
    design = nodes["Design"]
    whole_below = [i for i, n in nodes.items() if not n["truncated"] and ranks[i] > design["rank"]]
    if design["truncated"] and whole_below:
        assert design["tokens"] >= 120  # a useful slice, not a few words
