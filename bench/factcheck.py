"""The fact-recall question set: loading, text normalisation and fact matching.

Shared by bench/bench_facts.py (which scores contexts) and tests/test_facts_questions.py (which
checks the question file against the corpora). No ctx imports: the benchmark judges ctx, it does not
borrow its parsing.

A fact counts as present in a context when its normalised form is a substring of the normalised
context. Normalisation removes what rendering may legitimately change and nothing else: case, runs of
whitespace, markdown emphasis (`*`, `_`, backticks), list markers, heading and quote markers at the
start of a line, and link syntax (reduced to its text). Facts are chosen as plain prose, so this
never makes an absent fact look present.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUESTIONS_FILE = HERE / "facts" / "questions.yaml"
SHARED = Path(os.environ.get("CTX_SHARED_DIR", HERE.parent.parent / "shared"))
CORPORA = SHARED / "corpora"
SPLITS = ("dev", "holdout")

_FRONTMATTER = re.compile(r"\A\ufeff?---\n.*?\n---[ \t]*\n", re.S)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_WIKILINK = re.compile(r"!?\[\[([^\]|]*)(?:\|([^\]]*))?\]\]")
# Markers a renderer may add, drop or re-indent at the start of a line: list bullets and numbers,
# headings, block quotes (possibly nested, e.g. "> - item").
_LINE_MARKERS = re.compile(r"^[ \t]*(?:(?:[-*+]|\d+[.)]|#{1,6}|>)[ \t]+)+", re.M)
_EMPHASIS = re.compile(r"[*_`]")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _LINE_MARKERS.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _SPACE.sub(" ", text).strip().casefold()


def note_text(path: Path) -> str:
    """A note's text as a user wrote it, without its YAML frontmatter."""
    return _FRONTMATTER.sub("", path.read_text(encoding="utf-8"), count=1)


@dataclass(frozen=True)
class Question:
    id: str
    corpus: str
    split: str
    question: str
    notes: tuple[str, ...]
    facts: tuple[str, ...]

    def facts_in(self, normalised_context: str) -> list[str]:
        return [fact for fact in self.facts if normalise(fact) in normalised_context]


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    questions = []
    for corpus, items in data.items():
        for item in items:
            questions.append(
                Question(
                    id=item["id"],
                    corpus=corpus,
                    split=item["split"],
                    question=item["question"],
                    notes=tuple(item["notes"]),
                    facts=tuple(item["facts"]),
                )
            )
    return questions


def problems(questions: list[Question], corpora: Path = CORPORA) -> list[str]:
    """Everything wrong with the question set, one line each (empty: the set is sound)."""
    found = []
    ids = [q.id for q in questions]
    for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
        found.append(f"{duplicate}: id used more than once")
    for q in questions:
        if q.split not in SPLITS:
            found.append(f"{q.id}: split {q.split!r} is not one of {SPLITS}")
        if not 2 <= len(q.facts) <= 4:
            found.append(f"{q.id}: {len(q.facts)} facts (2-4 expected)")
        texts = []
        for rel in q.notes:
            note = corpora / q.corpus / rel
            if not note.is_file():
                found.append(f"{q.id}: answer note {q.corpus}/{rel} does not exist")
                continue
            texts.append(normalise(note_text(note)))
        for fact in q.facts:
            words = len(fact.split())
            if not 2 <= words <= 30:
                found.append(f"{q.id}: fact of {words} words: {fact!r}")
            if texts and not any(normalise(fact) in text for text in texts):
                found.append(f"{q.id}: fact not in its answer notes: {fact!r}")
    return found
