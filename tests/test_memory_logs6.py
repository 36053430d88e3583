"""The memory benchmark's sixth generator (bench/memory_logs6.py, single-file logs: sets 180 up) is
sound: the same seed writes the same bytes, each log is one file holding every day of
``memory_logs5.py``'s set under a ``## day`` heading, oldest first, and every evidence paragraph is
in its log's file once and in no other."""

from __future__ import annotations

import json
import re

from conftest import bench_module, tree_bytes

memory_logs5 = bench_module("memory_logs5")
memory_logs6 = bench_module("memory_logs6")


def test_same_seed_same_bytes_other_seed_other_logs(tmp_path):
    memory_logs6.generate(190, tmp_path / "a")
    memory_logs6.generate(190, tmp_path / "b")
    memory_logs6.generate(191, tmp_path / "c")
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert tree_bytes(tmp_path / "a") != tree_bytes(tmp_path / "c")


def test_each_log_is_one_file_of_its_days_and_evidence_is_unique(tmp_path):
    summary = memory_logs6.generate(190, tmp_path / "one")
    memory_logs5.generate(190, tmp_path / "daily")
    daily_root = tmp_path / "daily" / "notes"
    days: dict[str, list[str]] = {}
    for path in daily_root.rglob("*.md"):
        days.setdefault(path.parent.name, []).append(path.stem)
    files = {p.name: p.read_text() for p in (tmp_path / "one" / "notes").glob("*.md")}
    assert sorted(files) == sorted(f"{folder}.md" for folder in days)
    assert summary["notes"] == len(files) and summary["days"] == sum(map(len, days.values()))
    for folder, stems in days.items():
        assert re.findall(r"^## (.+)$", files[f"{folder}.md"], re.M) == sorted(stems)
    questions = [json.loads(line) for line in (tmp_path / "one" / "questions.jsonl").read_text().splitlines()]
    assert summary["questions"] == len(questions)
    for q in questions:
        for text, rel, day in zip(q["evidence"], q["files"], q["dates"], strict=True):
            body = files[rel]
            assert body.count(text) == 1 and [r for r, b in files.items() if text in b] == [rel]
            heading = body[:body.index(text)].rsplit("\n## ", 1)[1]
            assert heading.startswith(day)  # under its own day
