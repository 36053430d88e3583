"""Seed 004 (CFS-021): packing strategies, document grouping, determinism and duplicate removal.

The packing vectors run through the real packer (``plan.plan_sections`` on a ``Packer``) with blocks
whose rendered cost is made exactly the seed's numbers; dedup is tested as a function and end to end
through the CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES
from ctx.assemble.packer import Packer
from ctx.assemble.packing_order import packing_order
from ctx.assemble.plan import plan_sections
from ctx.assemble.counter import TokenCounter
from ctx.assemble.candidate import Candidate
from ctx.assemble.dedup import find_duplicates, overlap
from ctx.assemble.document import FULL, Document, Item, SectionOut
from ctx.lenses import parse_lens


def candidate(node_id: str, doc: str, score: float, rank: int, body: str = "", position: int = 0) -> Candidate:
    return Candidate(
        id=node_id, title=node_id, type="note", tags=[], fields={}, source_path=doc, parent_id=None,
        position=position, created=None, updated=None, store_tokens=len(body.split()), hops=1, cost=1.0,
        path=(), seed=False, body=body, score=score, rank=rank, section="Chunks",
    )


def lens_for(strategy: str):
    return parse_lens(
        {
            "sections": [{"name": "Chunks", "select": "rest", "share": 1.0}],
            "packing": {"strategy": strategy},
            # No shortening and no one-line summaries: the vectors are about whole chunks.
            "output": {"also_related": False, "min_shortened_tokens": 100000},
        },
        where="test", name="seed004", source="file",
    )


def packer_for(cands: list[Candidate], strategy: str) -> Packer:
    doc = Document(label="q", topics=("q",), lens="seed004", budget=100000, fmt="markdown", found=True,
                   sections=[SectionOut("Chunks", "rank", "none")])
    packer = Packer(doc, cands, lens_for(strategy), TokenCounter("cl100k_base"), set())
    packer.has_body = {c.id for c in cands}
    return packer


def sized(packer: Packer, c: Candidate, target: int) -> None:
    """Give ``c`` a body so that its rendered block costs exactly ``target`` tokens."""
    c.body = ""
    words = max(target - packer.cost(Item(c, FULL, "")), 0)
    for _ in range(50):
        c.body = " ".join(["word"] * words)
        cost = packer.cost(Item(c, FULL, c.body))
        if cost == target:
            return
        words += target - cost
    raise AssertionError(f"cannot size {c.id} to {target} tokens")


# -- seed 004 test vectors ------------------------------------------------------------------------


def test_packing_vector_skips_what_does_not_fit_and_keeps_going():
    """A 50, B 100, C 30, D 80 tokens (+10 per-document marker each), budget 150 -> A and C."""
    cands = [candidate(n, f"{n}.md", s, r) for r, (n, s) in enumerate(
        [("A", 0.9), ("B", 0.85), ("C", 0.8), ("D", 0.75)], start=1)]
    packer = packer_for(cands, "score")
    for c, content in zip(cands, (50, 100, 30, 80)):
        sized(packer, c, content + 10)  # the block's heading lines are its document marker
    plan_sections(packer, cands, avail=150 + packer.heading_cost("Chunks"))
    assert list(packer.placed) == ["A", "C"]
    assert sum(packer.cost(i) for i in packer.placed.values()) - 2 * 10 == 80  # content tokens
    assert all(i.variant == FULL for i in packer.placed.values())  # nothing cut: not truncated


GROUPING = [("a.md", 1, 0.9), ("b.md", 1, 0.88), ("a.md", 2, 0.85), ("b.md", 2, 0.82)]


def grouping_candidates() -> list[Candidate]:
    return [candidate(f"{doc[0]}{seq}", doc, score, rank, f"Chunk {seq}", seq)
            for rank, (doc, seq, score) in enumerate(GROUPING, start=1)]


def test_grouping_vector_greedy_packs_whole_documents_best_document_first():
    assert [c.id for c in packing_order(grouping_candidates(), "greedy")] == ["a1", "a2", "b1", "b2"]


def test_interleaved_alternates_documents_and_score_is_strictly_by_score():
    assert [c.id for c in packing_order(grouping_candidates(), "interleaved")] == ["a1", "b1", "a2", "b2"]
    assert [c.id for c in packing_order(grouping_candidates(), "score")] == ["a1", "b1", "a2", "b2"]


def test_grouped_render_order_reads_each_document_in_sequence():
    from ctx.assemble.document import order_items

    items = [Item(c, FULL, c.body or "") for c in reversed(grouping_candidates())]
    assert [i.cand.id for i in order_items(items, "grouped")] == ["a1", "a2", "b1", "b2"]


def test_packer_places_in_strategy_order_within_the_budget():
    cands = grouping_candidates()
    packer = packer_for(cands, "greedy")
    for c in cands:
        sized(packer, c, 40)
    plan_sections(packer, cands, avail=3 * 40 + packer.heading_cost("Chunks"))
    assert list(packer.placed) == ["a1", "a2", "b1"]  # greedy: all of a.md before b.md
    packer = packer_for(grouping_candidates(), "interleaved")
    for c in packer.ranked:
        sized(packer, c, 40)
    plan_sections(packer, packer.ranked, avail=3 * 40 + packer.heading_cost("Chunks"))
    assert list(packer.placed) == ["a1", "b1", "a2"]


def _research_build(db: Path, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [str(Path(sys.executable).parent / "ctx"), "build", "sync operation log", "--lens", "research",
         "--max-tokens", "1500", "--db", str(db)],
        capture_output=True, text=True, env=env, check=True,
    )
    return out.stdout


def test_determinism_vector_byte_identical_across_processes(run_cli, tmp_path):
    db = tmp_path / "demo.db"
    assert run_cli("import", str(FIXTURES / "demo-vault"), db=db).exit_code == 0
    runs = {hashlib.blake2b(_research_build(db, seed).encode()).hexdigest() for seed in ("1", "2", "3")}
    assert len(runs) == 1


# -- duplicate removal ----------------------------------------------------------------------------

TEXT = (
    "The sync service keeps an operation log per report. Each operation carries a hybrid logical "
    "clock so that two inspectors editing the same report offline merge without losing findings. "
    "Logs older than ninety days are compacted into a snapshot."
)


def test_exact_duplicates_ignore_case_and_whitespace():
    found = find_duplicates([("a", TEXT), ("b", "  " + TEXT.upper().replace(" ", "\n ")), ("c", "other")])
    assert set(found) == {"b"} and found["b"].of == "a" and found["b"].kind == "exact"
    assert found["b"].reason == "duplicate of a"


def test_near_duplicates_at_80_percent_overlap_and_not_below():
    edited = TEXT.replace("ninety", "sixty")
    assert overlap(edited, TEXT) >= 0.8
    found = find_duplicates([("a", TEXT), ("b", edited)], near=True)
    assert found["b"].kind == "near" and found["b"].of == "a"
    half = " ".join(TEXT.split()[:20]) + " Entirely different words follow here about lunch menus and bicycles in the rain."
    assert overlap(half, TEXT) < 0.8
    assert find_duplicates([("a", TEXT), ("b", half)], near=True) == {}
    assert find_duplicates([("a", TEXT), ("b", edited)], near=False) == {}  # near is opt-in


def test_overlap_is_what_the_later_text_adds():
    short = " ".join(TEXT.split()[:25])
    assert "b" in find_duplicates([("a", TEXT), ("b", short)], near=True)  # the long one covers it
    assert find_duplicates([("a", short), ("b", TEXT)], near=True) == {}  # the long one adds text


def test_short_texts_empty_texts_and_seeds_are_never_near_duplicates():
    assert find_duplicates([("a", "Meeting notes"), ("b", "meeting notes, again")], near=True) == {}
    assert find_duplicates([("a", ""), ("b", "")]) == {}
    assert find_duplicates([("a", TEXT), ("s", TEXT)], protected=frozenset({"s"})) == {}


def test_duplicates_removed_before_packing_end_to_end(run_cli, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Hub.md").write_text("Links: [[Original]], [[Copy]], [[Near copy]], [[Other]].\n", encoding="utf-8")
    (vault / "Original.md").write_text(TEXT + "\n", encoding="utf-8")
    (vault / "Copy.md").write_text(TEXT + "\n", encoding="utf-8")
    (vault / "Near copy.md").write_text(TEXT.replace("ninety", "sixty") + "\n", encoding="utf-8")
    (vault / "Other.md").write_text("The beta starts in May with two pilot customers.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    assert run_cli("import", str(vault), db=db).exit_code == 0
    lens = tmp_path / "dedup.yaml"
    lens.write_text("name: dedup\ndedup: {exact: true, near: true}\n", encoding="utf-8")
    result = run_cli("build", "Hub", "--lens", str(lens), "--format", "json", "--explain", db=db)
    doc = json.loads(result.stdout)
    shown = {n["id"] for n in doc["nodes"]}
    # Two identical notes tie on score; the better ranked (by id) stays, the other is its duplicate.
    assert "Copy" in shown and "Other" in shown
    assert "Original" not in shown and "Near copy" not in shown
    assert "duplicate of Copy" in result.stderr
    omitted = {o["id"]: o["reason"] for o in doc["omitted"]}
    assert omitted.get("Original") == "duplicate of Copy"
    assert omitted.get("Near copy", "").startswith("duplicate of Copy (")
