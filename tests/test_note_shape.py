"""A log of unrelated entries told from a page about one thing by its own text (``note_shape``):
real help pages (the shared foam-docs and logseq-docs vaults) are pages, every note of the
generated memory logs (meetings, chats, journals, stand-ups, lab notebooks, mail digests) is a log.
Read from the graph's own passages, as the build reads them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import bench_module, corpus_path, read_only_graph

from ctx.assemble.note_shape import is_log


def shapes(db: Path) -> dict[str, bool]:
    """Node id -> is a log, for every note of two passages or more."""
    conn = sqlite3.connect(db)
    titles = {nid: (title, kind) for nid, title, kind in conn.execute("SELECT id, title, type FROM nodes")}
    passages: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for nid, heading, text in conn.execute("SELECT node_id, heading, text FROM passage_texts ORDER BY node_id, ord"):
        passages.setdefault(nid, []).append((tuple(heading.split(" > ")) if heading else (), text))
    conn.close()
    return {nid: is_log(titles[nid][0], rows, day_page=titles[nid][1] == "journal")
            for nid, rows in passages.items() if len(rows) > 1}


@pytest.mark.parametrize("corpus, pages", [("foam-docs", 0.9), ("logseq-docs", 0.8)])
def test_help_pages_in_sections_are_pages(tmp_path_factory, corpus, pages):
    found = shapes(read_only_graph(tmp_path_factory, corpus_path(corpus)))
    assert len(found) > 50
    assert sum(not log for log in found.values()) >= pages * len(found)


def test_a_help_page_keeps_its_subject_s_words_in_its_sections(tmp_path_factory):
    found = shapes(read_only_graph(tmp_path_factory, corpus_path("foam-docs")))
    graph_view = [nid for nid in found if nid.endswith("graph-view")]
    assert graph_view and not any(found[nid] for nid in graph_view)


def test_every_generated_log_is_a_log(tmp_path):
    memory_logs = bench_module("memory_logs")
    memory_logs2 = bench_module("memory_logs2")
    memory_logs.generate(1, tmp_path / "a")  # meetings in agenda sections, a chat, a journal
    memory_logs2.generate(4, tmp_path / "b")  # stand-ups, a lab notebook timed by the hour, mail
    for root in ("a", "b"):
        found = shapes(imported_graph_at(tmp_path / root / "notes", tmp_path / f"{root}.db"))
        assert len(found) > 40
        assert all(found.values()), [nid for nid, log in found.items() if not log]


def imported_graph_at(vault: Path, db: Path) -> Path:
    from ctx.importers.engine import import_path
    from ctx.store import connect

    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.close()
    return db


def test_a_log_is_told_by_its_headings_or_its_title_s_words():
    entries = [(("17:22",), "Autoclaved bottles of medium."), (("18:05",), "Cleaned the water bath in the lab.")]
    assert is_log("Lab notebook, entry 2", entries)
    # The same text under headings that are not times, and a title its sections keep saying.
    sections = [(("Styling",), "The graph's colours follow the theme."), (("Filters",), "Hide tags from the graph.")]
    assert not is_log("Graph view", sections)
    assert is_log("Graph view", [((h[0].replace(":", "h"),), t) for h, t in entries])
    # A title of no words of its own (a date, a version) names no subject; a day page is a log.
    assert is_log("2021-07-04", sections)
    assert is_log("Graph view", sections, day_page=True)
    # A note of one passage is that passage, ranked whole: no entries to tell apart.
    assert not is_log("2021-07-04", sections[:1])
    # Plural and singular forms of a title word are the same word.
    assert not is_log("Templates", [((), "A template is a note."), ((), "Templates live in a folder.")])
