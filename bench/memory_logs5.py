"""Daily notes: the logs of ``memory_logs.py`` as a vault of daily notes, dated by file name only.

    python bench/memory_logs5.py --seed 160 --out bench/out/memory/set160     # one generated set

Obsidian's daily notes (its core plugin's default) are files named for their day, ``2024-05-28.md``,
with no frontmatter; a meeting series is often kept as ``2024-05-28 Product sync 3.md``. A note's
only date is its name: a tool that reads the file's mtime instead shows the day the vault was
copied, and a question about when finds the paragraph without its day.

The text, the questions and their evidence are ``memory_logs.py``'s for the same seed (its
generator is run into a scratch folder): only the notes' names and frontmatter change. Each log
keeps its folder; the meeting series' notes are named by day and title, every other log's by day
alone; the frontmatter (title and ``date:``) is dropped, so nothing inside a note says its day.
The held-out range is 160-169 (``bench_memory.py``); the tests use 170 and 171.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import memory_logs  # noqa: E402

GENERATOR_VERSION = f"1 (memory_logs {memory_logs.GENERATOR_VERSION})"

_FRONTMATTER = re.compile(r"\A---\ntitle: \"?(.*?)\"?\ndate: (\d{4}-\d{2}-\d{2})\n---\n\n?", re.S)


def daily_name(folder: str, title: str, day: str) -> str:
    """The daily note's path: ``folder/day.md``, or ``folder/day title.md`` for a meeting series
    (whose titles end in ``#n``: the number kept, the ``#`` dropped)."""
    if folder.startswith("meeting"):
        return f"{folder}/{day} {title.replace('#', '').strip()}.md"
    return f"{folder}/{day}.md"


def generate(seed: int, out: Path, musique: Path | None = None) -> dict:
    """Write one set under ``out`` (notes/ and questions.jsonl); returns a summary."""
    if musique is None and memory_logs.MUSIQUE.exists():
        musique = memory_logs.MUSIQUE
    with tempfile.TemporaryDirectory() as scratch:
        summary = memory_logs.generate(seed, Path(scratch), musique)
        notes = Path(scratch) / "notes"
        renamed: dict[str, str] = {}
        files: dict[str, str] = {}
        for path in sorted(notes.rglob("*.md")):
            rel = path.relative_to(notes).as_posix()
            text = path.read_text(encoding="utf-8")
            head = _FRONTMATTER.match(text)
            if head is None:
                raise AssertionError(f"{rel}: no title and date frontmatter to turn into a name")
            new = daily_name(rel.split("/", 1)[0], head.group(1), head.group(2))
            if new in files:
                raise AssertionError(f"{rel} and another note of its log share the day {head.group(2)}")
            renamed[rel] = new
            files[new] = text[head.end():]
        questions = [json.loads(line) for line in (Path(scratch) / "questions.jsonl").read_text().splitlines() if line]
    for q in questions:
        q["files"] = [renamed[f] for f in q["files"]]
    write_set(out, files, questions, f"{GENERATOR_VERSION} {seed}")
    return summary


def write_set(out: Path, files: dict[str, str], questions: list[dict], version: str) -> None:
    """Check (``memory_logs._check``) and write a set: its notes, questions.jsonl and VERSION."""
    memory_logs._check(files, questions)
    for rel, text in sorted(files.items()):
        path = out / "notes" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    (out / "VERSION").write_text(f"{version}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=170)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    print(generate(args.seed, args.out))


if __name__ == "__main__":
    main()
