"""Markdown inside code is never rewritten or scanned: import, passages, rendering (issue 20, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctx.code_spans import blank_code, code_spans, outside_code
from ctx.passages import collapse_attachments, split

EMBED = "![[Engelbart.jpg|100x145]]"


@pytest.mark.parametrize(
    "text",
    [
        f"Resize it:\n\n```md\n{EMBED}\n```\n",
        f"Resize it:\n\n~~~\n{EMBED}\n~~~\n",
        f"Resize it:\n\n    {EMBED}\n",
        f"Resize it:\n\n\t{EMBED}\n",
        f"Resize it with `{EMBED}` in a note.",
        f"Resize it with ``{EMBED}`` in a note.",
        f"- a list\n  - item\n    ```\n    {EMBED}\n    ```\n",
        f"Unclosed fence:\n```\n{EMBED}\n",
    ],
)
def test_attachment_links_in_code_stay_as_written(text):
    assert collapse_attachments(text) == text
    assert EMBED in "".join(p.text for p in split(text, "Embed files"))


def test_attachment_links_outside_code_still_collapse_beside_code():
    text = f"see {EMBED} and `{EMBED}`\n\n```\n{EMBED}\n```\nthen ![chart](c.png)"
    assert collapse_attachments(text) == (
        f"see [file: Engelbart.jpg] and `{EMBED}`\n\n```\n{EMBED}\n```\nthen [image: chart]"
    )


def test_indented_lines_in_a_list_or_a_paragraph_are_not_code():
    listed = "- item\n\n    continued ![a](x.png)\n"
    assert collapse_attachments(listed) == "- item\n\n    continued [image: a]\n"
    lazy = "a paragraph\n    still it ![a](x.png)\n"
    assert collapse_attachments(lazy) == "a paragraph\n    still it [image: a]\n"


def test_code_spans_are_exact():
    text = "a `b` c\n\n```\nx\n```\nd ``e`f`` g ` h"
    spans = [text[s:e] for s, e in code_spans(text)]
    assert spans == ["`b`", "```\nx\n```\n", "``e`f``"]  # blocks are whole lines
    # A fence closes only on a line of fence characters at least as long as its opener.
    text = "````\n```js\n```\nstill code\n````\nout"
    assert [text[s:e] for s, e in code_spans(text)] == ["````\n```js\n```\nstill code\n````\n"]


def test_outside_code_never_matches_across_code():
    text = "[[a `x]] y` b]]"
    assert outside_code(text, lambda s: s.replace("[[", "<")) == "<a `x]] y` b]]"


def test_blank_code_hides_links_and_tags_in_code():
    text = "#real\n\n    #include <stdio.h>\n    [[NotALink]]\n\ntext `#nope` [[Yes]]"
    blanked = blank_code(text)
    assert "#include" not in blanked and "NotALink" not in blanked and "#nope" not in blanked
    assert "#real" in blanked and "[[Yes]]" in blanked


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Embed files.md").write_text(
        "# Embed files\n\nTo resize an embedded image, add its size after a bar:\n\n"
        f"```md\n{EMBED}\n```\n\nInline works too: `{EMBED}`.\n\n"
        "An indented example:\n\n    ![[Engelbart.jpg|200]]\n    #include <not-a-tag>\n    [[Not a link]]\n\n"
        "The picture itself: ![[Engelbart.jpg]] and #real-tag.\n",
        encoding="utf-8",
    )
    (vault / "Not a link.md").write_text("A note that code mentions.\n", encoding="utf-8")
    return vault


def test_build_and_passages_keep_code_and_importer_ignores_it(tmp_path, run_cli):
    vault = _vault(tmp_path)
    assert run_cli("import", str(vault)).exit_code == 0
    out = run_cli("build", "Embed files", "--max-tokens", "2000")
    assert out.exit_code == 0, out.stderr
    assert f"```md\n{EMBED}\n```" in out.stdout
    assert f"`{EMBED}`" in out.stdout
    assert "    ![[Engelbart.jpg|200]]" in out.stdout
    # Outside code the attachment is still a placeholder.
    assert "The picture itself: [file: Engelbart.jpg]" in out.stdout
    # The question path (passages) shows the same text.
    asked = run_cli("build", "how do I resize an embedded image?", "--max-tokens", "2000")
    assert EMBED in asked.stdout
    shown = json.loads(run_cli("show", "Embed files", "--format", "json").stdout)
    assert "include" not in " ".join(shown.get("tags", []))
    assert "real-tag" in shown.get("tags", [])
    links = [e for e in shown.get("edges", shown.get("links", [])) if "Not a link" in json.dumps(e)]
    assert links == []
