"""A conversation dated only by its ``created:`` stamp (an assistant chat export: ``#### User`` /
``#### Assistant`` turns) gets paragraph vectors as a log dated by ``date:`` does; a page a
template stamped with ``created:`` does not.

Before, a Markdown note's ``created`` was a node column only and such a chat read as undated: each
passage had one vector diluted over a user's turn of unrelated asides, and with embeddings ctx fell
below itself without them on bench_memory's memory_logs4 sets (see ``paragraph_vectors``)."""

from __future__ import annotations

from pathlib import Path

from conftest import bench_module

from ctx.assemble import paragraph_vectors
from ctx.assemble.paragraph_vectors import is_transcript
from ctx.importers.engine import import_path
from ctx.store import as_store, connect

memory_logs4 = bench_module("memory_logs4")

TURN = "#### User\n\n{ask}\n\n{aside}\n\n#### Assistant\n\n{answer}\n\n{more}\n"


def _chat(frontmatter: str) -> str:
    turns = "\n".join(TURN.format(ask=f"Question {i} about the spreadsheet totals?",
                                  aside=f"Before I forget, the aquarium's water was {20 + i} degrees.",
                                  answer=f"A pivot table by month shows where row {i} doubles.",
                                  more=f"Freeze the header row {i} so the filters stay visible.")
                      for i in range(4))
    return f"---\ntitle: Budget help\n{frontmatter}\n---\n\n{turns}"


def _page(frontmatter: str) -> str:
    # A project page as a template writes it: ``created:`` stamped, one subject in named parts.
    parts = {"Why now": "The customer's contract expects an export by July.",
             "Dependencies": "The report schema must be stable after the beta.",
             "Open questions": "Push or pull first is still undecided.",
             "Risks": "The connector vendor changes its API every quarter."}
    body = "\n".join(f"## {name}\n\n{text}\n\nA second paragraph on {name.lower()} and its owner.\n"
                     for name, text in parts.items())
    return f"---\ntitle: Project Hermes\n{frontmatter}\n---\n\n{body}"


def _wanted_titles(tmp_path: Path, name: str, files: dict[str, str]) -> dict[str, int]:
    """Each note's title -> how many of its paragraphs ``ctx embed`` would give a vector."""
    root = tmp_path / name
    root.mkdir()
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    conn = connect(tmp_path / f"{name}.db", create=True)
    try:
        import_path(conn, root)
        owners = dict(conn.execute("SELECT hash, node_id FROM passages").fetchall())
        titles = dict(conn.execute("SELECT id, title FROM nodes").fetchall())
        wanted = paragraph_vectors.wanted(as_store(conn).reader(include_private=True))
    finally:
        conn.close()
    counts = dict.fromkeys(titles.values(), 0)
    for passage_hash, _, _ in wanted:
        counts[titles[owners[passage_hash]]] += 1
    return counts


def test_a_chat_dated_by_created_gets_paragraph_vectors_and_a_stamped_page_does_not(tmp_path):
    counts = _wanted_titles(tmp_path, "vault", {
        "budget-help.md": _chat("created: 2024-05-28T07:30:00+10:00"),
        "hermes.md": _page("created: 2026-02-10\nupdated: 2026-04-30"),
    })
    assert counts["Budget help"] == 16  # 4 turns, each User and Assistant section two paragraphs
    assert counts["Project Hermes"] == 0


def test_a_conversation_without_any_date_gets_them_too(tmp_path):
    # Its shape says it is a record of turns; every note has a date anyway (its file's).
    counts = _wanted_titles(tmp_path, "vault", {"budget-help.md": _chat("source: assistant export")})
    assert counts == {"Budget help": 16}


def test_the_generated_chat_exports_are_transcripts(tmp_path):
    # bench_memory's fourth kind, on the seed its own test uses: every conversation reads as turns,
    # and those that are logs (is_log: not about their title throughout) get paragraph vectors.
    memory_logs4.generate(150, tmp_path / "set")
    chats = sorted((tmp_path / "set" / "notes" / "chats").glob("*.md"))
    conn = connect(tmp_path / "g.db", create=True)
    try:
        import_path(conn, tmp_path / "set" / "notes")
        reader = as_store(conn).reader(include_private=True)
        ids = reader.nodes_with_passages(2)
        found = reader.passages_of(ids)
        transcripts = [i for i in ids if is_transcript(found[i])]
        owners = {p for p, _, _ in paragraph_vectors.wanted(reader)}
    finally:
        conn.close()
    assert len(transcripts) == len(chats)
    assert owners


class _Row:
    def __init__(self, text: str) -> None:
        self.text = text


def test_a_transcript_is_four_or_more_headings_that_repeat_a_few_names():
    turns = [_Row("## Alice\n\nHello.\n\n## Bob\n\nHi."), _Row("## Alice\n\nSo.\n\n## Bob\n\nWell.")]
    assert not is_transcript(turns)  # 4 headings, 2 names: each said twice, not three times
    assert is_transcript(turns + [_Row("## Alice\n\nRight.\n\n## Bob\n\nYes.")])
    # A comment in a code block is not a heading: three turns of one name with code between.
    code = [_Row(f"### Q\n\n```python\n# step {i}\n# note {i}\nx = {i}\n```") for i in range(4)]
    assert is_transcript(code)
    assert not is_transcript([_Row("# A\n\n## B\n\n## C\n\n## D\n\n## E")])
