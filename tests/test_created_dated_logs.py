"""A log dated by the creation date its author or exporter wrote (``created:`` in Markdown
frontmatter: an assistant chat export, a Notion page) gets paragraph vectors as a log dated by
``date:`` does; a Dendron note, which Dendron stamps with ``created`` whatever it is, does not.

Before, Markdown's ``created`` was a node column only, so such a log read as undated and each of
its passages had one vector diluted over a user's turn of unrelated asides (bench_memory's
memory_logs4 dev sets: open questions with embeddings 0.00-0.45 against 0.35-0.90 with paragraph
vectors; see ``paragraph_vectors``)."""

from __future__ import annotations

from conftest import bench_module

from ctx.assemble import paragraph_vectors
from ctx.importers.engine import import_path
from ctx.store import as_store, connect

memory_logs4 = bench_module("memory_logs4")

TURN = "#### User\n\n{ask}\n\n{aside}\n\n#### Assistant\n\n{answer}\n\n{more}\n"


def _log(created: str) -> str:
    turns = "\n".join(TURN.format(ask=f"Question {i} about the spreadsheet totals?",
                                  aside=f"Before I forget, the aquarium's water was {20 + i} degrees.",
                                  answer=f"A pivot table by month shows where row {i} doubles.",
                                  more=f"Freeze the header row {i} so the filters stay visible.")
                      for i in range(4))
    return f"---\ntitle: Budget help\n{created}\n---\n\n{turns}"


def test_a_chat_export_dated_by_created_gets_paragraph_vectors(tmp_path):
    memory_logs4.generate(1400, tmp_path / "set")
    chats = sorted((tmp_path / "set" / "notes" / "chats").glob("*.md"))
    conn = connect(tmp_path / "g.db", create=True)
    try:
        import_path(conn, tmp_path / "set" / "notes")
        fields = dict(conn.execute("SELECT source_path, fields FROM nodes WHERE type = 'note'").fetchall())
        owners = {p for p, _, _ in paragraph_vectors.wanted(as_store(conn).reader(include_private=True))}
    finally:
        conn.close()
    assert len(fields) == len(chats)
    assert all('"created"' in fields[f"chats/{p.name}"] for p in chats)  # kept as a field
    assert owners  # every conversation is a log of several-paragraph passages: they get vectors


def test_markdown_keeps_a_written_created_date_and_dendron_does_not(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "budget-help.md").write_text(_log("created: 2024-05-28T07:30:00+10:00"))
    dendron = tmp_path / "dendron"
    dendron.mkdir()
    (dendron / "dendron.yml").write_text("version: 5\n")
    (dendron / "budget.help.md").write_text(_log("id: abc123\ncreated: 1716845400000\nupdated: 1716845400000"))
    for root in (vault, dendron):
        conn = connect(tmp_path / f"{root.name}.db", create=True)
        try:
            import_path(conn, root)
            rows = conn.execute("SELECT fields FROM nodes WHERE title = 'Budget help'").fetchall()
            wanted = paragraph_vectors.wanted(as_store(conn).reader(include_private=True))
        finally:
            conn.close()
        assert len(rows) == 1
        if root is vault:
            assert '"created"' in rows[0][0] and wanted
        else:
            assert '"created"' not in rows[0][0] and not wanted
