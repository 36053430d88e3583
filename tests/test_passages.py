"""Passage splitting (ctx/passages.py) and the passages the store keeps (ctx/store/passages.py)."""

from __future__ import annotations

import pytest

from ctx.passages import (
    MAX_TOKENS,
    collapse_attachments,
    estimate_tokens,
    nest_headings,
    split,
)
from ctx.tokens import count_tokens


def paragraph(topic: str, sentences: int = 6) -> str:
    return " ".join(f"Sentence {i} about {topic} says something specific and useful." for i in range(sentences))


def test_a_short_note_is_one_passage():
    body = "A short note.\n\nWith two paragraphs."
    passages = split(body, "Short")
    assert len(passages) == 1
    assert passages[0].text == body and passages[0].heading == ()


def test_an_empty_body_has_no_passages():
    assert split("", "Empty") == [] and split("\n \n", "Empty") == []


def test_headings_start_passages_and_give_their_path():
    body = "\n\n".join(
        [
            "# Guide",  # the note's own title heading is not part of any path
            "## Install",
            paragraph("installing", 8),
            "### On Windows",
            paragraph("windows", 8),
            "## Use",
            paragraph("using", 8),
        ]
    )
    passages = split(body, "Guide")
    assert [p.heading for p in passages] == [("Install",), ("Install", "On Windows"), ("Use",)]
    assert passages[1].text.startswith("### On Windows")
    # Spans cover the body in order and never overlap.
    assert all(a.end <= b.start for a, b in zip(passages, passages[1:]))
    assert [p.ord for p in passages] == [0, 1, 2]


def test_small_sections_merge_until_the_passage_is_big_enough():
    body = "\n\n".join(f"## Part {i}\nOne line about part {i}." for i in range(6))
    passages = split(body, "Parts")
    assert len(passages) == 1  # six tiny sections are one passage, headings inside it
    assert "## Part 5" in passages[0].text


def test_paragraphs_merge_up_to_the_maximum_and_long_ones_split_at_sentences():
    body = "\n\n".join(paragraph(f"topic {i}", 4) for i in range(20))
    passages = split(body, "Long")
    assert len(passages) > 3
    sizes = [count_tokens(p.text) for p in passages]
    assert max(sizes) <= MAX_TOKENS * 1.3, sizes
    long_paragraph = paragraph("one endless paragraph", 60)
    pieces = split(long_paragraph, "Endless")
    assert len(pieces) > 2
    assert all(p.text.rstrip().endswith(".") for p in pieces)  # cut at sentence ends
    assert "".join(p.text for p in pieces).replace(" ", "") == long_paragraph.replace(" ", "")


def test_a_code_fence_is_kept_whole_however_long():
    code = "\n".join(f"print('line {i} of a long program')" for i in range(200))
    body = f"Intro text.\n\n```python\n{code}\n```\n\nOutro text."
    passages = split(body, "Code")
    fenced = [p for p in passages if "```python" in p.text]
    assert len(fenced) == 1
    assert code in fenced[0].text and fenced[0].text.count("```") == 2
    # A heading-like line inside the fence starts nothing.
    body2 = "```\n# not a heading\n```\n\n" + paragraph("after", 2)
    assert all(p.heading == () for p in split(body2, "Fence"))


def test_outline_blocks_split_at_top_level_items():
    items = "\n".join(f"- item {i} {paragraph(f'item {i}', 3)}\n  - child of {i}" for i in range(20))
    passages = split(items, "Outline")
    assert len(passages) > 2
    assert all(p.text.lstrip().startswith("- item") for p in passages)  # never mid-item


def test_token_estimate_is_close_to_the_real_count():
    text = paragraph("estimates", 30)
    assert 0.7 < estimate_tokens(text) / count_tokens(text) < 1.4


@pytest.mark.parametrize(
    "raw, shown",
    [
        ("see ![a chart](https://example.com/img/chart-2024-final.png) here", "see [image: a chart] here"),
        ("![](https://example.com/x.jpg)", "[image]"),
        ("embed ![[diagram.excalidraw.png|400]] done", "embed [file: diagram.excalidraw.png] done"),
        ("get [the slides](files/deck.pdf) now", "get [file: the slides] now"),
        ('<img src="https://x.io/a.png" alt="logo" width="20">', "[image: logo]"),
        ("a [[wiki link]] and [a page](other.md) stay", "a [[wiki link]] and [a page](other.md) stay"),
    ],
)
def test_image_and_attachment_links_collapse(raw, shown):
    assert collapse_attachments(raw) == shown


def test_headings_nest_under_the_node_heading_outside_code():
    text = "# Top\ntext\n## Sub\n```\n# comment in code\n```\n###### Deep"
    assert nest_headings(text) == "#### Top\ntext\n##### Sub\n```\n# comment in code\n```\n###### Deep"
    # The shallowest heading becomes ####, whatever its level in the note.
    assert nest_headings("## Goals\n- a\n### Detail") == "#### Goals\n- a\n##### Detail"
    assert nest_headings("#### Already deep") == "#### Already deep"


def test_the_store_keeps_passages_in_step_with_imports(tmp_path):
    from ctx.importers.engine import import_path
    from ctx.store import connect
    from ctx.store.passages import passages_of

    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "Guide.md"
    note.write_text("# Guide\n\n## Install\n" + paragraph("install", 10) + "\n\n## Use\n" + paragraph("use", 10))
    (vault / "Other.md").write_text("Short other note.")
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, vault)
    first = passages_of(conn, ["Guide", "Other"])
    assert [p.heading for p in first["Guide"]] == [("Install",), ("Use",)]
    assert len(first["Other"]) == 1
    hits = conn.execute("SELECT p.node_id FROM passages_fts f JOIN passages p ON p.id = f.rowid"
                        " WHERE passages_fts MATCH 'installed'").fetchall()
    assert {r[0] for r in hits} == {"Guide"}  # stemmed: "installed" finds "install"

    note.write_text("# Guide\n\n## Configure\n" + paragraph("configure", 10))
    import_path(conn, vault)
    again = passages_of(conn, ["Guide", "Other"])
    assert [p.heading for p in again["Guide"]] == [("Configure",)]
    assert again["Other"] == first["Other"]  # an unchanged note is not re-split
    assert conn.execute("SELECT COUNT(*) FROM passages_fts WHERE passages_fts MATCH 'install'").fetchone()[0] == 0

    note.unlink()
    import_path(conn, vault)
    assert "Guide" not in passages_of(conn, ["Guide"])
    total = conn.execute("SELECT COUNT(*) FROM passages").fetchone()[0]
    assert total == conn.execute("SELECT COUNT(*) FROM passages_fts").fetchone()[0] == 1


def test_an_outline_page_is_split_from_its_blocks(tmp_path):
    from ctx.importers.engine import import_path
    from ctx.store import connect
    from ctx.store.passages import passages_of

    pages = tmp_path / "graph" / "pages"
    pages.mkdir(parents=True)
    (tmp_path / "graph" / "logseq").mkdir()
    (tmp_path / "graph" / "logseq" / "config.edn").write_text("{}")
    blocks = "\n".join(f"- block {i}: {paragraph(f'block {i}', 2)}\n\t- detail of block {i}" for i in range(30))
    (pages / "Big Page.md").write_text(blocks)
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, tmp_path / "graph", format="logseq")
    page_id = conn.execute("SELECT id FROM nodes WHERE title = 'Big Page'").fetchone()[0]
    found = passages_of(conn, [page_id])[page_id]
    assert len(found) > 1
    joined = "\n".join(p.text for p in found)
    assert "detail of block 29" in joined and joined.index("block 3:") < joined.index("block 4:")
    # The blocks themselves have no passages of their own: their text is in their page's.
    block_ids = [r[0] for r in conn.execute("SELECT id FROM nodes WHERE type = 'block'")]
    assert block_ids and not passages_of(conn, block_ids)


def test_private_blocks_never_reach_their_public_page_s_passages(tmp_path, monkeypatch):
    from ctx.importers.engine import import_path
    from ctx.store import connect
    from ctx.store.passages import passages_of

    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    graph = tmp_path / "graph"
    (graph / "pages").mkdir(parents=True)
    (graph / "logseq").mkdir()
    (graph / "logseq" / "config.edn").write_text("{}")
    (graph / "pages" / "Diary.md").write_text(
        "- Public line about gardening\n- Private thoughts #private\n  - nested zorblax detail\n"
        "- Later musing #moody\n  - under the mood quxwell\n- Closing public line\n"
    )
    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, graph, format="logseq")
    text = "\n".join(p.text for p in passages_of(conn, ["Diary"])["Diary"])
    assert "Public line about gardening" in text and "Closing public line" in text
    assert "zorblax" not in text and "Private thoughts" not in text
    assert "quxwell" in text
    # A privacy setting that makes another block private re-splits the page without it.
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.yaml").write_text("privacy:\n  tags: [private, moody]\n  fields: []\n")
    import_path(conn, graph, format="logseq")
    text = "\n".join(p.text for p in passages_of(conn, ["Diary"])["Diary"])
    assert "quxwell" not in text and "Later musing" not in text
    assert "Closing public line" in text
    hits = conn.execute("SELECT COUNT(*) FROM passages_fts WHERE passages_fts MATCH 'quxwell OR zorblax'").fetchone()
    assert hits[0] == 0
