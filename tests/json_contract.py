"""The JSON contract in tests: docs/context.schema.json and the smallest document it allows."""

from __future__ import annotations

import json
import sqlite3

from conftest import REPO
from jsonschema import Draft202012Validator

SCHEMA = json.loads((REPO / "docs" / "context.schema.json").read_text(encoding="utf-8"))


def validator(kind: str) -> Draft202012Validator:
    """A validator for one output kind: build, search, show or stats."""
    return Draft202012Validator({"$ref": f"#/$defs/{kind}", "$defs": SCHEMA["$defs"]})


BUILD = validator("build")


def assert_valid_build(document: dict) -> None:
    errors = sorted(BUILD.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "; ".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5])


def smallest_build_json(conn: sqlite3.Connection, topic: str, lens: str, budget: int) -> str:
    """The smallest build output the schema allows that shows node ``topic``: the required keys,
    with an empty title and content (the research lens adds its citation contract). When even this
    is over the budget, a context cannot show the topic without dropping keys. Its score is written
    as long as a score can be (six decimals): a seed's score is not always 1.0 (a tag seed's was
    0.3575, one token more, and a 66-token budget that fitted a 1.0 could not hold it)."""
    node_type, source_path = conn.execute("SELECT type, source_path FROM nodes WHERE id = ?", (topic,)).fetchone()
    node = {"id": topic, "title": "", "type": node_type, "distance": 0, "score": 0.123457, "tokens": budget,
            "truncated": True, "source_path": source_path, "content": ""}
    document: dict = {"meta": {"schema": 1, "lens": lens, "tokens": {"used": budget, "budget": budget}}, "nodes": [node]}
    if lens == "research":
        node["citation"] = 1
        document.update(citations={"1": {"id": topic}}, truncated=True, total_tokens=budget)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
