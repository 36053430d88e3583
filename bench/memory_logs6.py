"""Single-file logs: each log of ``memory_logs5.py`` (daily notes) kept in one long file.

    python bench/memory_logs6.py --seed 180 --out bench/out/memory/set180     # one generated set

Many people keep a journal, a work log or a meeting series as one growing file: a heading per
day (``## 2024-05-28``, or ``## 2024-05-28 Ops review 3``), the day's own headings a level down,
150-250 KB a file here. Such a note is hundreds of passages; a question's evidence is one
paragraph of it. The text, questions and evidence are ``memory_logs5.py``'s for the same seed
(so ``memory_logs.py``'s): only the files change, one per log, the oldest day first. Sets 180-189
are held out (``bench_memory.py``); the tests use 190 and 191.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import memory_logs5  # noqa: E402

GENERATOR_VERSION = f"1 (memory_logs5 {memory_logs5.GENERATOR_VERSION})"


def one_file(folder: str, days: dict[str, str]) -> str:
    """A log's days (file stem -> text) as one note: ``# folder``, then ``## stem`` and the day's
    text with its own headings one level down, oldest first."""
    parts = [f"# {folder}\n"]
    for stem, text in sorted(days.items()):
        body = re.sub(r"^(#{1,5}) ", r"#\1 ", text, flags=re.M)
        parts.append(f"## {stem}\n\n{body.strip()}\n")
    return "\n".join(parts)


def generate(seed: int, out: Path) -> dict:
    """Write one set under ``out`` (notes/ and questions.jsonl); returns a summary."""
    with tempfile.TemporaryDirectory() as scratch:
        summary = memory_logs5.generate(seed, Path(scratch))
        notes = Path(scratch) / "notes"
        logs: dict[str, dict[str, str]] = {}
        for path in sorted(notes.rglob("*.md")):
            folder = path.relative_to(notes).parts[0]
            logs.setdefault(folder, {})[path.stem] = path.read_text(encoding="utf-8")
        questions = [json.loads(line) for line in (Path(scratch) / "questions.jsonl").read_text().splitlines() if line]
    files = {f"{folder}.md": one_file(folder, days) for folder, days in logs.items()}
    for q in questions:
        q["files"] = [f"{f.split('/', 1)[0]}.md" for f in q["files"]]
    memory_logs5.write_set(out, files, questions, f"{GENERATOR_VERSION} {seed}")
    return {**summary, "notes": len(files), "days": summary["notes"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=190)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(generate(args.seed, args.out))


if __name__ == "__main__":
    main()
