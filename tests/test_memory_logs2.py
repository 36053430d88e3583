"""The memory benchmark's second generator (bench/memory_logs2.py, the held-out sets 3 and up) is
sound: the same seed writes the same bytes, its logs differ in length as documented, every note is
dated (``date:`` or ``created:``), every evidence paragraph is in the note it names and in no other,
and a ``latest`` question's evidence is the last revision of its setting."""

from __future__ import annotations

import json
import re

from conftest import bench_module, tree_bytes

memory_logs2 = bench_module("memory_logs2")


def test_same_seed_same_bytes_other_seed_other_logs(tmp_path):
    memory_logs2.generate(5, tmp_path / "a")
    memory_logs2.generate(5, tmp_path / "b")
    memory_logs2.generate(6, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_logs_are_dated_and_evidence_is_unique(tmp_path):
    summary = memory_logs2.generate(4, tmp_path)
    notes = {p.relative_to(tmp_path / "notes").as_posix(): p.read_text() for p in (tmp_path / "notes").rglob("*.md")}
    assert summary["notes"] == len(notes)
    per_log = {}
    for rel in notes:
        per_log.setdefault(rel.split("/")[0], []).append(rel)
    assert set(per_log) == {"standup-1", "lab-2", "mail-3"}
    for style in memory_logs2.STYLES:
        (log,) = [name for name in per_log if name.startswith(style.name + "-")]
        assert style.sessions[0] <= len(per_log[log]) < style.sessions[1]
    words = {log: sum(len(notes[r].split()) for r in rels) / len(rels) for log, rels in per_log.items()}
    assert words["standup-1"] < words["mail-3"] < words["lab-2"]  # short, middling and long notes
    for rel, text in notes.items():
        assert re.search(r"^(date: \d{4}-\d{2}-\d{2}|created: \d{4}-\d{2}-\d{2}T\d{2}:\d{2})$", text, re.M), rel
    questions = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    assert {q["kind"] for q in questions} == {"single", "when", "multi", "open", "latest"}
    for q in questions:
        for text, rel, date in zip(q["evidence"], q["files"], q["dates"], strict=True):
            assert [r for r, body in notes.items() if text in body] == [rel]
            assert re.search(rf"^(date: {date}|created: {date}T\d\d:\d\d)$", notes[rel], re.M)
        if q["kind"] == "multi":
            assert len(set(q["files"])) >= 2


def test_latest_asks_for_the_last_of_several_revisions(tmp_path):
    memory_logs2.generate(4, tmp_path)
    notes = {p.relative_to(tmp_path / "notes").as_posix(): p.read_text() for p in (tmp_path / "notes").rglob("*.md")}
    latest = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    latest = [q for q in latest if q["kind"] == "latest"]
    assert latest
    for q in latest:
        setting, thing = re.match(r"What is the (.+) for (.+) now\?", q["question"]).groups()
        # The notes that set it (any of the generator's wordings), oldest first by file name.
        wordings = [
            re.escape(t[0].upper() + t[1:]).replace(r"\{setting\}", re.escape(setting))
            .replace(r"\{thing\}", re.escape(thing)).replace(r"\{option\}", ".+?").replace(r"\{person\}", r"\w+")
            for t in memory_logs2.FACTS["setting"]
        ]
        setters = sorted(rel for rel, body in notes.items() if any(re.search(w, body) for w in wordings))
        assert len(setters) >= 2
        assert q["files"] == [max(setters, key=lambda r: r.split("/")[1])]


def test_a_repeated_due_day_is_drawn_again(tmp_path):
    # Seed 24 once drew a due day already used and retried the same day until it gave up.
    summary = memory_logs2.generate(24, tmp_path)
    assert summary["questions"] == len((tmp_path / "questions.jsonl").read_text().splitlines())
