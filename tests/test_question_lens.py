"""The built-in `question` lens: lean, whole-note context for answering a question."""

from __future__ import annotations

import json

from ctx.tokens import count_tokens


def test_question_finds_the_note_that_answers_it(demo_vault, run_cli):
    assert run_cli("import", str(demo_vault)).exit_code == 0
    result = run_cli("build", "What blocks adding more beta devices?", "--lens", "question",
                     "--max-tokens", "600")
    assert result.exit_code == 0, result.stderr
    assert count_tokens(result.stdout) <= 600
    # The answer sits in the task note; it must come first and whole, not cut.
    first = result.stdout.split("\n### ", 2)[1]
    assert first.startswith("Load test the sync service")
    assert "this now blocks adding more beta devices" in first
    # Lean output: no per-node metadata lines, a one-line header.
    assert "score:" not in result.stdout and "lens:" not in result.stdout
    assert result.stdout.splitlines()[0].endswith("/600 tokens)")


def test_question_names_a_note_by_title(demo_vault, run_cli):
    run_cli("import", str(demo_vault))
    doc = run_cli("build", "Who owns the risks listed in Apollo Risks?", "--lens", "question",
                  "--max-tokens", "1500", "--format", "json")
    ids = [n["id"] for n in json.loads(doc.stdout)["nodes"]]
    assert "Projects/Apollo Risks" in ids[:3]
