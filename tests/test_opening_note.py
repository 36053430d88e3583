"""Without embeddings, a free-text question's context opens with the shown note that holds the
question best, not with the note that matched one generic word of it in its title (issue 20 item
3: "paragraph" found Basic formatting syntax first); a note the question names keeps its place
although it holds nothing but that name (the bridge of a multi-hop question); and what the
context holds is the same either way, only its order changes. Real graphs, imported from markdown
into SQLite (and PostgreSQL where a local server runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctx.assemble import BuildRequest, build_context, pipeline
from ctx.assemble.passage_rank import rank_passages
from ctx.importers.engine import import_path
from ctx.store import connect
from ctx.store.view import GraphView

QUESTION = "how deep can embedded notes that embed other notes go?"
NOTES = {
    # One of the question's words, in the title and again in the text: BM25's favourite.
    "Deep Work": "Deep work is focus without distraction. Deep focus takes practice, and deep "
                 "work is rare.",
    # The answer: most of the question's words, none in its title.
    "Transclusion": "An embedded note may embed other notes in turn, up to three levels deep; past "
                    "that the embed shows a link instead.",
}
# The bridge of a multi-hop question: named by it, holding no other word of it.
BRIDGE_QUESTION = "what currency did the country Signmark is from use before the euro?"
BRIDGE_NOTES = {
    "Signmark": "Signmark is a deaf rapper from Finland.",
    "Finnish markka": "The markka was the currency of Finland until the euro replaced it in 2002.",
    "Money": "A country's currency may change: a new one replaces the old.",
}
# Other notes that embed notes: "embed" and "notes" say little here, "deep" much.
FILLERS = [
    f"Filler {i} says where notes are kept and how an embedded note can embed other notes, no more."
    if i in (1, 3, 5) else f"Filler {i} is about the weather, the harvest and the roads, at length."
    for i in range(8)
]


def _folder(folder: Path, notes: dict[str, str]) -> Path:
    folder.mkdir()
    for title, text in notes.items():
        (folder / f"{title}.md").write_text(f"{text}\n")
    for i, text in enumerate(FILLERS):
        (folder / f"Filler {i}.md").write_text(f"{text}\n")
    return folder


def _graph(folder: Path, notes: dict[str, str]):
    conn = connect(folder.parent / f"{folder.name}.db", create=True)
    import_path(conn, _folder(folder, notes))
    return conn


def _title_of(conn, node_id: str) -> str:
    return conn.execute("SELECT title FROM nodes WHERE id = ?", (node_id,)).fetchone()[0]


def _blocks(text: str) -> list[str]:
    """The context's note blocks (``### Title``), each as its title."""
    return re.findall(r"^### (.+)$", text, flags=re.M)


def _build(conn, question: str, fmt: str = "markdown") -> str:
    return build_context(conn, BuildRequest(topics=(question,), max_tokens=400, format=fmt)).text


def test_the_context_opens_with_the_note_holding_the_question_not_the_generic_title(tmp_path, monkeypatch):
    conn = _graph(tmp_path / "vault", NOTES)
    # Full text ranks the note matching "deep" in its title first: this graph reproduces the issue.
    ranked = [_title_of(conn, n) for n in rank_passages(GraphView(conn), QUESTION, None).node_order()[:2]]
    assert ranked == ["Deep Work", "Transclusion"]
    opened = _build(conn, QUESTION)
    assert _blocks(opened)[0] == "Transclusion"
    assert json.loads(_build(conn, QUESTION, "json"))["nodes"][0]["title"] == "Transclusion"
    # The ranking's order, as the old code showed it.
    monkeypatch.setattr(pipeline, "_opening", lambda build: None)
    ranked_order = _build(conn, QUESTION)
    assert _blocks(ranked_order)[0] == "Deep Work"
    # The same notes, only in another order: the rest keep the ranking's order behind the opener.
    assert sorted(_blocks(opened)) == sorted(_blocks(ranked_order))
    assert _blocks(opened)[1:] == [t for t in _blocks(ranked_order) if t != "Transclusion"]


def test_a_note_the_question_names_keeps_its_place(tmp_path):
    conn = _graph(tmp_path / "vault", BRIDGE_NOTES)
    ranked = [_title_of(conn, n) for n in rank_passages(GraphView(conn), BRIDGE_QUESTION, None).node_order()]
    assert ranked[:2] == ["Signmark", "Money"]
    # "Money" holds more of the question's words than Signmark, which holds only its name...
    from ctx.store import word_cover

    words = ("currency", "country", "signmark", "use", "euro")
    held = word_cover(words, [("Signmark", BRIDGE_NOTES["Signmark"]), ("Money", BRIDGE_NOTES["Money"])]).held
    assert len(held[1]) > len(held[0]) == 1
    # ...but the question names Signmark: it still opens the context.
    assert _blocks(_build(conn, BRIDGE_QUESTION))[0] == "Signmark"


def test_a_question_about_one_word_keeps_the_ranking(tmp_path, monkeypatch):
    conn = _graph(tmp_path / "vault", NOTES)
    # One content word: there is no share of the question to weigh.
    opened = _build(conn, "deep")
    monkeypatch.setattr(pipeline, "_opening", lambda build: None)
    assert opened == _build(conn, "deep")


def test_words_are_held_as_the_stemmed_index_matches_them():
    from ctx.store import word_cover

    found = word_cover(["wikilink", "folder", "points"], [
        ("Wikilinks", "a wikilink that points at a folder"),
        ("Note embeds", "embedding a note, not a wikilink"),
        ("Folders", "nothing else"),
        ("About", "the point"),
    ])
    assert found.held == (frozenset({"wikilink", "folder", "points"}), frozenset({"wikilink"}),
                          frozenset({"folder"}), frozenset({"points"}))
    # "Wikilinks" is said by "wikilink", "Folders" by "folder"; "Note embeds" not at all; a title
    # of function words only is no name.
    assert found.named == (1.0, 0.0, 1.0, 0.0)


def test_each_word_cover_sees_only_its_own_texts():
    """The texts of one call are gone before the next (they are rolled back, not deleted): a
    call with fewer texts than the last finds only its own."""
    from ctx.store import word_cover

    many = word_cover(["harvest", "roads"], [(f"Field {i}", "the harvest and the roads") for i in range(5)])
    assert many.held == (frozenset({"harvest", "roads"}),) * 5
    one = word_cover(["harvest", "roads"], [("Weather", "rain all week")])
    assert one.held == (frozenset(),) and one.named == (0.0,)
    again = word_cover(["roads"], [("Rivers", "nothing here"), ("Maps", "roads and rivers")])
    assert again.held == (frozenset(), frozenset({"roads"})) and again.named == (0.0, 0.0)


def test_both_engines_open_with_the_same_note(tmp_path, pg_url):
    pytest.importorskip("psycopg")
    from ctx import Graph

    folder = _folder(tmp_path / "vault", {**NOTES, **BRIDGE_NOTES})
    graphs = [Graph.open(target, create=True) for target in (tmp_path / "g.db", pg_url)]
    try:
        for graph in graphs:
            graph.import_path(folder)
        for question in (QUESTION, BRIDGE_QUESTION):
            lite, pg = ([n["title"] for n in json.loads(g.build(question, max_tokens=400, format="json").text)["nodes"]]
                        for g in graphs)
            assert lite == pg and lite[0] == ("Transclusion" if question == QUESTION else "Signmark")
    finally:
        for graph in graphs:
            graph.close()
