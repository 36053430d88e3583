"""Dates that anchor answers: every node a context shows carries its day, in markdown and JSON, in
every built-in lens; a lens can turn them off; a question about time reads oldest first."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest

from ctx.assemble import BuildRequest, build_context
from ctx.assemble.timeline import about_time
from ctx.importers.engine import import_path
from ctx.lenses import builtin_lens_names
from ctx.store import connect
from ctx.tokens import count_tokens

SESSIONS = {  # file -> (date, paragraphs)
    "standup-01.md": ("2024-03-04", ["The harbour crane inspection is booked with Tallis Systems.",
                                     "Lunch options near the office were discussed at length."]),
    "standup-02.md": ("2024-03-11", ["The harbour crane failed its inspection: the brake pads are worn.",
                                     "Everyone agreed the coffee machine needs descaling."]),
    "standup-03.md": ("2024-02-26", ["Rosa ordered new brake pads for the harbour crane from Keel & Marsh.",
                                     "The quarterly report is due at the end of the month."]),
}


@pytest.fixture(scope="module")
def dated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dated")
    notes = root / "notes"
    notes.mkdir()
    for i, (name, (day, paragraphs)) in enumerate(sorted(SESSIONS.items())):
        body = "\n\n".join(paragraphs)
        (notes / name).write_text(f"---\ntitle: Standup {i + 1}\ndate: {day}\n---\n\n{body}\n", encoding="utf-8")
    (notes / "crane.md").write_text("# Harbour crane\n\nThe crane on pier four. See [[standup-01]].\n")
    db = root / "g.db"
    conn = connect(db, create=True)
    import_path(conn, notes)
    conn.close()
    return db


def _build(db: Path, topic: str, **kw) -> str:
    conn = connect(db)
    try:
        return build_context(conn, BuildRequest(topics=(topic,), **kw)).text
    finally:
        conn.close()


@pytest.mark.parametrize("lens", sorted(set(builtin_lens_names())))
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_every_shown_node_carries_its_date_in_every_builtin_lens(dated, lens, fmt):
    text = _build(dated, "harbour crane brake pads", lens=lens, format=fmt, max_tokens=3000)
    if fmt == "json":
        nodes = json.loads(text)["nodes"]
        assert nodes
        shown = [(n["title"], n.get("date")) for n in nodes]
    else:
        shown = re.findall(r"^### (?:\[\d+\] )?(.*?)(?: — [^(]*)?(?: \((\d{4}-\d{2}-\d{2})\))?$", text, re.M)
        assert shown
    days = {f"Standup {i + 1}": day for i, (_, (day, _)) in enumerate(sorted(SESSIONS.items()))}
    for title, day in shown:
        assert day, (lens, title)
        if title in days:
            assert day == days[title]  # the note's own date field, not the file's mtime


def test_the_answer_lens_shows_the_date_beside_the_title(dated):
    text = _build(dated, "Who ordered new brake pads?", max_tokens=1000)
    assert "### Standup 3 (2024-02-26)\n" in text


def test_a_lens_can_turn_dates_off(dated, tmp_path):
    lens = tmp_path / "nodates.yaml"
    lens.write_text("name: nodates\nedges:\n  link: {}\noutput:\n  dates: false\n", encoding="utf-8")
    for fmt in ("markdown", "json"):
        text = _build(dated, "harbour crane", lens=str(lens), format=fmt)
        assert not re.search(r"\d{4}-\d{2}-\d{2}\)", text)
        if fmt == "json":
            assert all("date" not in n for n in json.loads(text)["nodes"])


def test_a_question_about_time_reads_oldest_first(dated):
    question = "When did the harbour crane fail its inspection, and when were brake pads ordered?"
    text = _build(dated, question, max_tokens=2000)
    days = re.findall(r"^### .*\((\d{4}-\d{2}-\d{2})\)$", text, re.M)
    assert len(days) >= 2
    assert days == sorted(days)
    nodes = json.loads(_build(dated, question, max_tokens=2000, format="json"))["nodes"]
    assert [n["date"] for n in nodes] == sorted(n["date"] for n in nodes)
    # A question that is not about time reads best first.
    for other in ("Who ordered the harbour crane brake pads, and what failed?",
                  "What failed when the harbour crane was inspected, and who ordered brake pads?"):
        plain = json.loads(_build(dated, other, max_tokens=2000, format="json"))["nodes"]
        assert len(plain) >= 2
        assert [n["rank"] for n in plain] == sorted(n["rank"] for n in plain)


@pytest.mark.parametrize("budget", [60, 80, 120, 200, 400])
@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_dates_keep_budgets_exact(dated, budget, fmt):
    text = _build(dated, "harbour crane brake pads", max_tokens=budget, format=fmt)
    assert count_tokens(text, "cl100k_base") <= budget


def test_time_words():
    assert about_time(("When was the crane inspected?",))
    assert about_time(("what happened last week",))
    assert about_time(("anything before March 2024",))
    assert about_time(("the plan in May 3",))
    assert not about_time(("Who may approve the crane?",))
    assert not about_time(("Who was the first president of the society?",))
    assert not about_time(("harbour crane brake pads",))
    # "when" opening a condition is not a question about when: such a question reads best first.
    assert not about_time(("why does the crane stop when I lift a container?",))
    assert not about_time(("what happens when a link points at a folder",))
    assert about_time(("when the crane stopped, was it raining?", "When was it inspected?"))
    assert about_time(("Who fixed the crane when it broke last week?",))
    # Nor is "when" before anything but an auxiliary, past a topic's first word: it opens a clause.
    assert not about_time(("can I still run my scripts when notes are created?",))
    assert not about_time(("How did the numbers look when Fatima checked?",))
    assert about_time(("By when does the crane have to be fixed?",))
    assert about_time(("the war Italy entered when?",))
    assert about_time(("when Guyana joined CARICOM",))
    # A frequency is how often, not when.
    assert not about_time(("downsides of buying crypto with a fixed amount every month",))
    assert not about_time(("inspect the crane each week or every 2 weeks?",))
    assert about_time(("what did we buy last month",))


def test_journal_days_date_their_pages_and_blocks(tmp_path):
    logseq = tmp_path / "logseq"
    (logseq / "journals").mkdir(parents=True)
    (logseq / "pages").mkdir()
    (logseq / "logseq").mkdir()
    (logseq / "journals" / "2021_02_07.md").write_text("- Met Rosa about the crane\n  - brake pads ordered\n")
    roam = tmp_path / "roam.json"
    roam.write_text(json.dumps([
        {"title": "March 5th, 2024", "uid": "03-05-2024", "create-time": 1718000000000,
         "children": [{"string": "Crane inspection failed", "uid": "blk1", "create-time": 1709640000000}]},
        {"title": "Crane", "uid": "crane", "create-time": 1718000000000, "children": []},
    ]))
    for source, fmt in ((logseq, "logseq"), (roam, "roam")):
        conn = connect(tmp_path / f"{fmt}.db", create=True)
        import_path(conn, source, format=fmt)
        rows = conn.execute("SELECT title, type, created FROM nodes ORDER BY title").fetchall()
        days = {title: dt.datetime.fromtimestamp(created, dt.timezone.utc).date().isoformat()
                for title, _, created in rows}
        conn.close()
        if fmt == "logseq":
            assert days["Feb 7th, 2021"] == "2021-02-07"
            assert days["Met Rosa about the crane"] == "2021-02-07"
            assert days["brake pads ordered"] == "2021-02-07"
        else:
            assert days["March 5th, 2024"] == "2024-03-05"  # the page's day, not when it was opened
            assert days["Crane"] == "2024-06-10"  # another page keeps its creation time


def test_one_date_shared_by_every_note_is_said_once(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in (("a.md", "The harbour crane was inspected."), ("b.md", "The harbour crane brakes were replaced.")):
        (notes / name).write_text(f"# {name[0].upper()}\n\n{text}\n", encoding="utf-8")
    stamp = dt.datetime(2024, 3, 11, 12, tzinfo=dt.timezone.utc).timestamp()
    for path in notes.iterdir():
        os.utime(path, (stamp, stamp))
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, notes)
    conn.close()
    text = _build(db, "harbour crane", max_tokens=1000)
    assert "all 2024-03-11" in text.splitlines()[0]
    assert "(2024-03-11)" not in text  # not beside every title
    assert re.findall(r"^### (.*)$", text, re.M) and count_tokens(text) <= 1000
    nodes = json.loads(_build(db, "harbour crane", max_tokens=1000, format="json"))["nodes"]
    assert nodes and all(n["date"] == "2024-03-11" for n in nodes)  # JSON keeps it per node


def test_a_date_with_a_zone_is_shown_as_the_day_its_author_wrote(tmp_path):
    # Converted to UTC, 07:30 on 28 May at +10:00 is 27 May and 21:00 on 28 May at -05:00 is 29 May:
    # every context contradicted the note's own date field. The wall clock is kept, the zone dropped.
    notes = tmp_path / "notes"
    notes.mkdir()
    written = {  # file -> (frontmatter line, the day its author wrote)
        "sydney.md": ("created: 2024-05-28T07:30:00+10:00", "2024-05-28"),
        "toronto.md": ("date: 2024-05-28T21:00:00-05:00", "2024-05-28"),
        "quoted.md": ('created: "2024-05-28 23:45 +02:00"', "2024-05-28"),
        "utc.md": ("date: 2024-05-28T23:59:00Z", "2024-05-28"),
        "naive.md": ("date: 2024-05-28 00:10", "2024-05-28"),
    }
    for name, (line, _) in written.items():
        (notes / name).write_text(f"---\ntitle: {name[:-3]}\n{line}\n---\n\nThe harbour crane was checked "
                                  f"by the {name[:-3]} team.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, notes)
    conn.close()
    text = _build(db, "harbour crane checked", max_tokens=2000)
    assert "all 2024-05-28" in text.splitlines()[0]  # one day for all five, said once
    nodes = json.loads(_build(db, "harbour crane checked", max_tokens=2000, format="json"))["nodes"]
    assert {n["title"]: n["date"] for n in nodes} == {name[:-3]: day for name, (_, day) in written.items()}

    from typer.testing import CliRunner

    from ctx.app import app

    shown = CliRunner().invoke(app, ["show", "sydney", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "created: 2024-05-28 07:30  updated:" in shown.output  # as written, no zone claimed


def test_a_daily_note_is_dated_by_its_name_not_its_files_mtime(tmp_path):
    # Obsidian's daily notes are files named for their day with no frontmatter: a context showed the
    # day the file was last touched (here 2026-01-15, as a fresh clone would) beside the day's title.
    notes = tmp_path / "notes"
    (notes / "daily").mkdir(parents=True)
    (notes / "meetings").mkdir()
    named = {  # file -> the day it is dated by
        "daily/2024-05-28.md": "2024-05-28",
        "daily/2024_05_29.md": "2024-05-29",
        "meetings/2024-05-30 Ops review 3.md": "2024-05-30",
        "daily/2024-02-30.md": "2026-01-15",  # no such day: the mtime stands
        "daily/202405311030 crane.md": "2026-01-15",  # a zettelkasten id, not a day
    }
    touched = dt.datetime(2026, 1, 15, 9, tzinfo=dt.timezone.utc).timestamp()
    for rel in named:
        (notes / rel).write_text(f"The harbour crane was checked; see {rel[:-3]}.\n", encoding="utf-8")
        os.utime(notes / rel, (touched, touched))
    (notes / "daily" / "2024-06-01.md").write_text(  # a frontmatter date still wins over the name
        "---\ndate: 2024-06-02\n---\n\nThe harbour crane was checked again.\n", encoding="utf-8")
    named["daily/2024-06-01.md"] = "2024-06-02"
    db = tmp_path / "g.db"
    conn = connect(db, create=True)
    import_path(conn, notes)
    conn.close()
    nodes = json.loads(_build(db, "harbour crane checked", max_tokens=3000, format="json"))["nodes"]
    assert {n["source_path"]: n["date"] for n in nodes} == named
    text = _build(db, "harbour crane checked", max_tokens=3000)
    # A title that holds its day shows it once; another spelling of the day gets it after the title.
    assert "### 2024-05-28\n" in text and "(2024-05-28)" not in text and "### 2024_05_29 (2024-05-29)" in text
    assert text.count("2026-01-15") == 2


def test_a_graph_read_at_an_earlier_reading_reads_every_file_again_once(tmp_path):
    # An import reads only changed files: without this, a graph made before daily notes were dated
    # by name kept each one's mtime until the note was edited. Simulated as such a graph is: the
    # old date in the node, no reading recorded (graphs before readings were recorded said none).
    from ctx.importers.engine import read_at
    from ctx.importers.markdown import MarkdownImporter
    from ctx.store import as_store

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "2024-05-28.md").write_text("The harbour crane was checked.\n", encoding="utf-8")
    (notes / "crane.md").write_text("# Crane\n\nOn pier four.\n", encoding="utf-8")
    touched = dt.datetime(2026, 1, 15, 9, tzinfo=dt.timezone.utc).timestamp()
    for path in notes.iterdir():
        os.utime(path, (touched, touched))
    conn = connect(tmp_path / "g.db", create=True)
    try:
        first = import_path(conn, notes)
        assert (first.files_parsed, read_at(as_store(conn).reader(), 1)) == (2, MarkdownImporter.reading)
        assert import_path(conn, notes).files_unchanged == 2  # nothing to read again
        with conn:
            conn.execute("UPDATE nodes SET created = ?, updated = ? WHERE id = '2024-05-28'", (touched, touched))
            conn.execute("DELETE FROM meta WHERE key = 'source_reading:1'")
        again = import_path(conn, notes)
        day = conn.execute("SELECT created FROM nodes WHERE id = '2024-05-28'").fetchone()[0]
        assert (again.files_parsed, again.files_unchanged, again.changed) == (2, 0, True)
        assert dt.datetime.fromtimestamp(day, dt.timezone.utc).date().isoformat() == "2024-05-28"
        assert import_path(conn, notes).files_unchanged == 2  # once
    finally:
        conn.close()


def test_a_json_graph_read_before_zoned_dates_kept_their_day_is_read_again_once(tmp_path):
    # 4fbbb30 kept a zoned date's wall clock ("2024-05-28T07:30+10:00" is 07:30 on 28 May) in every
    # importer's parse_date, but raised the reading of Markdown's only: a JSON graph imported
    # before kept 27 May (its UTC conversion) in every context until its file changed.
    from ctx.importers.engine import read_at
    from ctx.importers.jsongraph import JsonGraphImporter
    from ctx.store import as_store

    graph = tmp_path / "graph.jsonl"
    graph.write_text(json.dumps({"id": "crane", "title": "Crane check", "body": "The harbour crane was checked.",
                                 "created": "2024-05-28T07:30:00+10:00"}) + "\n", encoding="utf-8")
    converted = dt.datetime(2024, 5, 27, 21, 30, tzinfo=dt.timezone.utc).timestamp()  # as read before 4fbbb30
    conn = connect(tmp_path / "g.db", create=True)
    try:
        import_path(conn, graph)
        assert read_at(as_store(conn).reader(), 1) == JsonGraphImporter.reading
        with conn:
            conn.execute("UPDATE nodes SET created = ?, updated = ? WHERE id = 'crane'", (converted, converted))
            conn.execute("DELETE FROM meta WHERE key = 'source_reading:1'")
        again = import_path(conn, graph)
        day = conn.execute("SELECT created FROM nodes WHERE id = 'crane'").fetchone()[0]
        assert again.changed
        assert dt.datetime.fromtimestamp(day, dt.timezone.utc).isoformat() == "2024-05-28T07:30:00+00:00"
        assert not import_path(conn, graph).changed  # once
    finally:
        conn.close()
