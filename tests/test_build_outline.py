"""Pages as outlines in ``ctx build`` (issue 4): outliner pages show their blocks indented under
their fields, blocks show their breadcrumb, blocks of one page group under it, the budget holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, corpus_path

GARDEN = FIXTURES / "outline-logseq"


def _tokens(text: str) -> int:
    from ctx.tokens import get_encoding

    return len(get_encoding("cl100k_base").encode_ordinary(text))


@pytest.fixture
def garden(run_cli):
    assert run_cli("import", str(GARDEN), "--format", "logseq").exit_code == 0
    return run_cli


def test_page_shows_fields_and_indented_outline(garden):
    out = garden("build", "Garden Plan", "--max-tokens", "2000")
    assert out.exit_code == 0
    assert _tokens(out.stdout) <= 2000
    assert "- status: active" in out.stdout and "- season: spring" in out.stdout
    outline = (
        "- Beds\n"
        "  - North bed gets tomatoes and basil\n"
        "    - Stake the tomatoes early\n"
        "  - South bed rests under clover\n"
        "- Watering\n"
        "  - Drip line on a timer at dawn\n"
    )
    assert outline in out.stdout
    # Each block is printed once: inside the page's outline, not again as its own entry.
    assert out.stdout.count("Stake the tomatoes early") == 1
    assert "### Beds" not in out.stdout


def test_outline_blocks_are_counted_once_in_json(garden):
    doc = json.loads(garden("build", "Garden Plan", "--format", "json", "--max-tokens", "3000").stdout)
    page = doc["nodes"][0]
    assert page["id"] == "Garden Plan" and page["outline_truncated"] is False
    assert [e["depth"] for e in page["outline"][:3]] == [1, 2, 3]
    assert page["outline"][2]["text"] == "Stake the tomatoes early"
    shown = {n["id"] for n in doc["nodes"]}
    assert not shown & {e["id"] for e in page["outline"]}
    reasons = {o["id"]: o["reason"] for o in doc["omitted"]}
    assert reasons.get("Garden Plan#0.0") == "shown within the outline of Garden Plan"


def test_outline_is_cut_to_fit_a_small_budget(garden):
    full = garden("build", "Garden Plan", "--max-tokens", "2000").stdout
    for budget in (120, 200, 260, 320):
        out = garden("build", "Garden Plan", "--max-tokens", str(budget))
        assert _tokens(out.stdout) <= budget
    small = garden("build", "Garden Plan", "--max-tokens", "260", "--lens", "writing").stdout
    assert _tokens(small) <= 260 and len(small) < len(full)
    # An output.outline_max_nodes lens option bounds it whatever the budget.
    doc = json.loads(garden("build", "Garden Plan", "--format", "json", "--max-tokens", "3000").stdout)
    assert len(doc["nodes"][0]["outline"]) == 9


def test_outline_max_nodes_option(garden, tmp_path: Path):
    lens = tmp_path / "short.yaml"
    lens.write_text(
        "name: short\nedges:\n  child: {direction: both}\n  link: {direction: both}\n"
        "sections:\n  - {name: Topic, select: {seed: true}}\n  - {name: Related, select: rest}\n"
        "output:\n  outline_max_nodes: 3\n"
    )
    out = garden("build", "Garden Plan", "--lens", str(lens), "--max-tokens", "2000")
    assert out.exit_code == 0, out.stderr
    assert "    - Stake the tomatoes early\n- …" in out.stdout
    # The blocks past the cut are not lost: they are candidates of their own.
    assert "### South bed rests under clover" in out.stdout


def test_block_seed_shows_its_breadcrumb(garden):
    out = garden("build", "cccc0003-0000-4000-8000-000000000003", "--max-tokens", "600")
    assert "### Drip line on a timer at dawn" in out.stdout
    assert "· in: Garden Plan > Watering" in out.stdout
    doc = json.loads(garden("build", "cccc0003-0000-4000-8000-000000000003", "--format", "json").stdout)
    assert doc["nodes"][0]["breadcrumb"] == ["Garden Plan", "Watering"]


def test_blocks_of_one_page_are_grouped_under_it(garden):
    # Three blocks link to Compost: two in Garden Plan (under Soil), one in Kitchen Scraps.
    out = garden("build", "Compost", "--max-tokens", "2000")
    assert out.exit_code == 0 and _tokens(out.stdout) <= 2000
    soil = out.stdout.index("### Soil")
    kitchen = out.stdout.index("### Kitchen Scraps")
    section = out.stdout[soil:kitchen]
    assert "- Mix [[Compost]] into the north bed before planting\n" in section
    assert "- Top up the south bed with [[Compost]] in autumn" in section
    assert "- Coffee grounds and peels go to the [[Compost]] bin" in out.stdout[kitchen:]
    assert out.stdout.count("Top up the south bed") == 1


def test_blocks_shown_apart_sit_next_to_each_other(garden, tmp_path: Path):
    # Outlines off: each block is its own entry, and blocks of one page still read together.
    lens = tmp_path / "flat.yaml"
    lens.write_text(
        "name: flat\nedges:\n  link: {direction: both}\n"
        "sections:\n  - {name: Topic, select: {seed: true}}\n  - {name: Related, select: rest}\n"
        "output:\n  outline_max_nodes: 0\n"
    )
    doc = json.loads(garden("build", "Compost", "--lens", str(lens), "--format", "json").stdout)
    pages = [n.get("breadcrumb", [None])[0] for n in doc["nodes"][1:]]
    assert pages == ["Garden Plan", "Garden Plan", "Kitchen Scraps"]


def _page_with_most_blocks(db: Path) -> tuple[str, str, int]:
    """The node of the graph with the most direct blocks of its own file (computed, not assumed)."""
    conn = sqlite3.connect(db)
    row = conn.execute(
        """
        SELECT p.id, p.title, COUNT(*) AS n FROM edges e
        JOIN nodes p ON p.id = e.src JOIN nodes c ON c.id = e.dst
        WHERE e.type = 'child' AND p.file != '' AND p.file = c.file AND p.private = 0 AND c.private = 0
        GROUP BY p.id ORDER BY n DESC, p.id LIMIT 1
        """
    ).fetchone()
    first = conn.execute(
        "SELECT n.body, n.title FROM edges e JOIN nodes n ON n.id = e.dst WHERE e.src = ? AND e.type = 'child'"
        " ORDER BY e.position IS NULL, e.position, n.position IS NULL, n.position, n.id LIMIT 1",
        (row[0],),
    ).fetchone()
    conn.close()
    text = (first[0] or first[1]).strip().splitlines()[0]
    return row[0], text, row[2]


@pytest.mark.parametrize("corpus", ["logseq-docs", "tana-books", "roam-fixtures", "notion-export"])
def test_real_outliner_page_builds_as_an_outline(corpus, run_cli, db_path):
    source = corpus_path(corpus)
    if corpus == "roam-fixtures":
        for export in sorted(source.glob("*.json")):
            assert run_cli("import", str(export)).exit_code == 0
    else:
        assert run_cli("import", str(source)).exit_code == 0
    page_id, first_block, count = _page_with_most_blocks(db_path)
    assert count >= 2
    for budget in (300, 1500):
        out = run_cli("build", page_id, "--max-tokens", str(budget))
        assert out.exit_code == 0
        assert _tokens(out.stdout) <= budget
    doc = json.loads(run_cli("build", page_id, "--format", "json", "--max-tokens", "4000").stdout)
    assert _tokens(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n") <= 4000
    seed = doc["nodes"][0]
    assert seed["id"] == page_id and seed["outline"]
    assert seed["outline"][0]["text"].splitlines()[0] == first_block
    md = run_cli("build", page_id, "--max-tokens", "4000").stdout
    assert f"- {first_block}" in md
