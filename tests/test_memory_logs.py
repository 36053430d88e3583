"""The memory benchmark's generator (bench/memory_logs.py) is sound: the same seed writes the same
bytes, every note is a dated session, and every question's evidence paragraph is in the note it
names and in no other, so a miss in bench/bench_memory.py is always the context's fault."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SHARED, bench_module, tree_bytes

memory_logs = bench_module("memory_logs")


def test_same_seed_same_bytes_other_seed_other_logs(tmp_path):
    memory_logs.generate(7, tmp_path / "a")
    memory_logs.generate(7, tmp_path / "b")
    memory_logs.generate(8, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_sessions_are_dated_and_evidence_is_unique(tmp_path):
    summary = memory_logs.generate(3, tmp_path)
    notes = {p.relative_to(tmp_path / "notes").as_posix(): p.read_text() for p in (tmp_path / "notes").rglob("*.md")}
    assert summary["notes"] == len(notes)
    logs = {rel.split("/")[0] for rel in notes}
    assert logs == {"meeting-1", "chat-1", "journal-1"}
    for rel, text in notes.items():
        date = re.search(r"^date: (\d{4}-\d{2}-\d{2})$", text, re.M)
        assert date, rel
        title = re.search(r"^title: (.*)$", text, re.M).group(1)
        assert date.group(1) not in title  # the date is in the frontmatter only
    for log in logs:
        assert 20 <= sum(1 for rel in notes if rel.startswith(log + "/")) <= 30
    questions = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    assert {q["kind"] for q in questions} == {"single", "when", "multi", "open"}
    for q in questions:
        for text, rel, date in zip(q["evidence"], q["files"], q["dates"], strict=True):
            assert [r for r, body in notes.items() if text in body] == [rel]
            assert f"date: {date}\n" in notes[rel]
        if q["kind"] == "multi":
            assert len(set(q["files"])) >= 2


def test_the_reading_log_comes_from_musique_when_it_is_there(tmp_path):
    musique = SHARED / "eval" / "musique"
    if not musique.exists():
        pytest.skip(f"MuSiQue not available ({musique} is absent in this checkout)")
    summary = memory_logs.generate(1, tmp_path, musique)
    questions = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    reading = [q for q in questions if q["log"] == "reading-1"]
    assert reading and summary["questions"] == len(questions)
    assert {q["kind"] for q in reading} <= {"single", "multi", "open"}
