"""What the memory-log generators (memory_logs2.py, memory_logs3.py, memory_logs4.py) share: values
drawn until one is new, and a generated set checked and written out the same way."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path


class Distinct:
    """Values drawn until one not drawn before: every fact's value is told apart by its text."""

    def __init__(self, tries: int):
        self.tries = tries
        self.used: set[str] = set()

    def __call__(self, make: Callable[[], str]) -> str:
        for _ in range(self.tries):
            value = make()
            if value not in self.used:
                self.used.add(value)
                return value
        raise RuntimeError("ran out of distinct values")


def write_set(seed: int, out: Path, files: dict[str, str], questions: list[dict]) -> dict:
    """Number the questions, check that every evidence text is in the file it names and in no
    other, write ``out``/notes and ``out``/questions.jsonl; the summary (notes: the ``.md`` files)."""
    for i, q in enumerate(questions):
        q["id"] = f"s{seed}-{i:03d}"
    for q in questions:
        for text, rel in zip(q["evidence"], q["files"], strict=True):
            holders = [name for name, body in files.items() if text in body]
            if holders != [rel]:
                raise AssertionError(f"evidence of {q['id']} is in {holders}, expected {rel}: {text[:80]!r}")
    notes = out / "notes"
    for rel, text in sorted(files.items()):
        path = notes / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    kinds: dict[str, int] = {}
    for q in questions:
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    return {"notes": sum(1 for rel in files if rel.endswith(".md")), "questions": len(questions), "kinds": kinds}
