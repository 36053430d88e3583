"""Without embeddings, the note that matches most of a question ranks above one that matches a
single word of it strongly, as in its title (issue 20, item 3)."""

from __future__ import annotations

import json


def test_the_note_covering_the_question_outranks_a_one_word_title_match(tmp_path, run_cli):
    vault = tmp_path / "vault"
    vault.mkdir()
    # "Paragraph" is one word of the question, in its title and three times in a short body.
    (vault / "Paragraph.md").write_text(
        "# Paragraph\n\nParagraph styles: every paragraph has a paragraph mark.\n", encoding="utf-8"
    )
    # The answer has the question's other words once each, in a longer running text.
    (vault / "Soft wraps.md").write_text(
        "# Soft wraps\n\nTo break a line without leaving the block you are writing in, end the line with"
        " two spaces or a backslash; the editor keeps both parts together when it renders the note,"
        " and exports keep them too.\n",
        encoding="utf-8",
    )
    for i in range(6):  # notes that match nothing, so the graph has a vocabulary of its own
        (vault / f"Note {i}.md").write_text(f"# Note {i}\n\nA short text number {i} about something else entirely.\n")
    assert run_cli("import", str(vault)).exit_code == 0
    out = run_cli("build", "how do I break a line inside a paragraph?", "--format", "json")
    assert out.exit_code == 0, out.stderr
    ids = [n["id"] for n in json.loads(out.stdout)["nodes"]]
    assert ids[0] == "Soft wraps", ids
