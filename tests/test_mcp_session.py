"""The MCP session budget: `context_map` then `expand`, under one budget per connection, through
the MCP SDK's own stdio client against `ctx mcp` (as an agent runs it). Every answer is charged
at its exact token count, states the account, never exceeds what is left, and no passage is sent
twice in a session; a new connection is a new session; the same calls give the same bytes."""

from __future__ import annotations

import re
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from ctx.tokens import count_tokens

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp", reason="the MCP SDK is the mcp extra")

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")
ACCOUNT = re.compile(r"^session: (\d+)/(\d+) tokens used, (\d+) left$")
APOLLO = "Projects/Project Apollo"


def _env(tmp_path: Path) -> dict[str, str]:
    """The server's environment: a clean home; PYTHONPATH kept, so that a checkout run without
    installing it serves its own code."""
    import os

    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path), "CTX_HOME": str(tmp_path / "ctx")}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _sessions(db: Path, tmp_path: Path, *sessions: list[tuple[str, dict[str, Any]]]) -> list[list[Any]]:
    """Each list of calls on a connection of its own, one after the other."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = _env(tmp_path)
    params = StdioServerParameters(command=CTX or "ctx", args=["mcp", "--db", str(db)], env=env)
    out: list[list[Any]] = []

    async def main() -> None:
        for calls in sessions:
            results = []
            async with Client(params, read_timeout_seconds=120) as client:
                for name, arguments in calls:
                    results.append(await client.call_tool(name, arguments))
            out.append(results)

    anyio.run(main)
    return out


def _account(text: str) -> tuple[int, int, int]:
    found = ACCOUNT.match(text.rstrip("\n").splitlines()[-1])
    assert found, text[-300:]
    used, budget, left = (int(g) for g in found.groups())
    assert used + left == budget
    return used, budget, left


def _passages(db: Path, node: str) -> list[tuple[int, str]]:
    conn = sqlite3.connect(db)
    try:
        return [(r[0], r[1]) for r in conn.execute(
            "SELECT ord, heading FROM passages WHERE node_id = ? ORDER BY ord", (node,))]
    finally:
        conn.close()


def test_a_session_is_charged_exactly_never_resends_and_never_overruns(demo_db: Path, tmp_path: Path) -> None:
    budget = 1500
    calls = [
        ("context_map", {"topic": "Project Apollo", "session_budget": budget}),
        ("expand", {"ids": [f"{APOLLO}#0", "People/Maya Chen"]}),
        ("expand", {"ids": [APOLLO]}),  # #0 again: named, not sent
        ("context_map", {"topic": "Project Apollo", "session_budget": 2000}),  # a budget is set once
        ("expand", {"ids": ["no/such note", f"{APOLLO}#99"]}),
        ("expand", {"ids": ["Projects/Apollo Launch Plan", "Projects/Apollo Risks", "Projects/Project Hermes",
                            "Meetings/2026-04-21 Beta Go-No-Go", "Specs/Apollo Sync API Spec",
                            "Specs/Offline Mode Spec", "Reference/Glossary"]}),
        ("expand", {"ids": ["Reference/Sync Protocol Notes", "Decisions/ADR-002 Operation Log for Sync"]}),
        ("context_map", {"topic": "Project Apollo", "max_tokens": 2000}),
    ]
    [results] = _sessions(demo_db, tmp_path, calls)
    texts = [r.content[0].text for r in results]
    charged = 0
    for result, text in zip(results, texts, strict=True):
        if result.is_error:
            assert len(text.splitlines()) == 1 and text.startswith("ctx: error: "), text
            continue
        used, total, _ = _account(text)
        charged += count_tokens(text)
        assert (used, total) == (charged, budget)  # every answer, exactly, and nothing else
        assert used <= budget
    # The map: ranked candidates with their passages and costs.
    first = texts[0]
    assert first.startswith("# Map: Project Apollo\n")
    assert f"1. Project Apollo (id: {APOLLO}) · project · 2025-12-04 · the topic · " in first  # its created:
    assert len(first.splitlines()) > 6 and count_tokens(first) <= 600
    # The first expand: the passage asked and the whole of Maya Chen's note.
    assert "Apollo is a mobile app" in texts[1] and "### Maya Chen (id: People/Maya Chen)" in texts[1]
    assert "#### Scope" not in texts[1]
    # The second: the rest of the note, never #0 again.
    assert "Apollo is a mobile app" not in texts[2] and "#### Scope" in texts[2]
    assert f"already sent in this session (not sent again): {APOLLO}#0" in texts[2]
    ords = [o for o, _ in _passages(demo_db, APOLLO)]
    assert len(ords) >= 2
    # Changing the budget is refused, for nothing.
    assert results[3].is_error and texts[3].startswith("ctx: error: session_budget is set once per session (1500,")
    assert results[4].is_error and "no such node or passage: no/such note, Projects/Project Apollo#99" in texts[4]
    # Asked for more than is left: as much as fits, the rest named with its cost.
    assert "no room left in the session for: " in texts[5] or "no room left in the session for: " in texts[6]
    last_used = _account([t for r, t in zip(results, texts, strict=True) if not r.is_error][-1])[0]
    assert budget - last_used < 300  # the session was used up, to within a passage or a map


def test_a_new_connection_is_a_new_session_and_the_same_calls_give_the_same_bytes(demo_db: Path, tmp_path: Path) -> None:
    calls = [
        ("context_map", {"topic": "offline sync conflicts", "session_budget": 2500, "max_tokens": 400}),
        ("expand", {"ids": [f"{APOLLO}#0", "Specs/Offline Mode Spec"]}),
        ("expand", {"ids": ["Specs/Offline Mode Spec"]}),
    ]
    one, two = _sessions(demo_db, tmp_path, calls, calls)
    assert [r.content[0].text for r in one] == [r.content[0].text for r in two]
    assert not any(r.is_error for r in one)
    texts = [r.content[0].text for r in one]
    assert count_tokens(texts[0]) <= 400
    assert re.search(r"#\d+[^()]*\(\d+, (1|\.\d\d)\)", texts[0])  # matched passages carry their relevance
    assert "already sent in this session (not sent again): Specs/Offline Mode Spec" in texts[2]
    assert _account(texts[2])[0] == sum(count_tokens(t) for t in texts)


def test_the_session_tools_without_a_budget_take_the_configured_one(demo_db: Path, tmp_path: Path) -> None:
    (tmp_path / "ctx").mkdir()
    (tmp_path / "ctx" / "config.yaml").write_text("build:\n  max_tokens: 700\n", encoding="utf-8")
    [results] = _sessions(demo_db, tmp_path, [
        ("expand", {"ids": [APOLLO]}),
        ("context_map", {"topic": "Project Apollo", "bogus": 1}),
    ])
    used, budget, _ = _account(results[0].content[0].text)
    assert budget == 700 and used == count_tokens(results[0].content[0].text)
    assert results[1].is_error and results[1].content[0].text.startswith("ctx: error: context_map: unknown argument 'bogus'")


def test_the_worked_session_in_docs_agents_is_what_the_server_says(demo_db: Path, tmp_path: Path) -> None:
    import json

    page = (Path(__file__).resolve().parent.parent / "docs" / "agents.md").read_text(encoding="utf-8")
    block = page.split("A worked session on the demo vault", 1)[1].split("```text\n", 1)[1].split("\n```", 1)[0]
    steps = [step.split("\n", 1) for step in block.split(">>> ")[1:]]
    calls = [(head.split(" ", 1)[0], json.loads(head.split(" ", 1)[1])) for head, _ in steps]
    [results] = _sessions(demo_db, tmp_path, calls)
    for (_, shown), result in zip(steps, results, strict=True):
        assert result.content[0].text == shown.rstrip("\n") + "\n"


def test_context_since_in_a_warm_server_is_never_an_old_answer(tmp_path: Path) -> None:
    """The server keeps answers warm under the graph's state; a diff depends on the manifests
    recorded since, so `context` with `since` is worked out each time: after an edit the first
    call gives the change, the next one (same arguments, same graph) says nothing changed."""
    import shutil as sh
    import subprocess

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from conftest import FIXTURES

    vault = tmp_path / "vault"
    sh.copytree(FIXTURES / "demo-vault", vault)
    db = tmp_path / "g.db"
    env = _env(tmp_path)
    subprocess.run([CTX or "ctx", "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
    params = StdioServerParameters(command=CTX or "ctx", args=["mcp", "--db", str(db)], env=env)
    texts: list[str] = []
    args = {"topic": "Project Apollo", "max_tokens": 3000}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            texts.append((await client.call_tool("context", args)).content[0].text)
            note = vault / "Projects" / "Project Apollo.md"
            note.write_text(note.read_text(encoding="utf-8").replace(
                "the admin web view.", "the admin web view, and a KESTREL-7 kiosk."), encoding="utf-8")
            subprocess.run([CTX or "ctx", "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
            for _ in range(3):
                texts.append((await client.call_tool("context", {**args, "since": "last"})).content[0].text)

    anyio.run(main)
    assert texts[0].startswith("# Context: Project Apollo")
    assert "KESTREL-7" in texts[1] and "1 changed" in texts[1]
    assert texts[2].startswith("# Context diff: Project Apollo: unchanged since c-") and texts[3] == texts[2]


def test_the_map_and_expand_date_every_node_as_context_does(tmp_path: Path) -> None:
    """Dates anchor answers (issue 23): `context` heads each note with its date, and an agent that
    reads by `context_map` then `expand` must get them too. At 1fdd446 neither tool showed one, so
    'last week' in an expanded passage could not be placed in time. The dates here are the
    notes' own `date:` fields, and the modified time of the note without one."""
    import datetime as dt
    import os
    import subprocess

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "standup-a.md").write_text(
        "---\ndate: 2026-02-11\n---\n\n# Standup\n\nThe pump in the greenhouse failed; Tom ordered a new valve.\n\n"
        "Billing moves to the new database next quarter.\n", encoding="utf-8")
    (vault / "standup-b.md").write_text(
        "---\ndate: 2026-03-12\n---\n\n# Standup\n\nThe greenhouse pump valve arrived and was fitted.\n",
        encoding="utf-8")
    undated = vault / "pump-notes.md"
    undated.write_text("# Pump notes\n\nThe greenhouse pump is a 0.5 kW model with a brass valve.\n", encoding="utf-8")
    stamp = dt.datetime(2025, 7, 4, 12, 0, tzinfo=dt.timezone.utc).timestamp()
    os.utime(undated, (stamp, stamp))
    days = {"standup-a": "2026-02-11", "standup-b": "2026-03-12", "pump-notes": "2025-07-04"}
    # A daily note, dated by its name: its title is its day, shown once (not "2026-03-13 · 2026-03-13").
    (vault / "2026-03-13.md").write_text("The greenhouse pump valve leaked again.\n", encoding="utf-8")
    db = tmp_path / "g.db"
    env = _env(tmp_path)
    subprocess.run([CTX or "ctx", "import", str(vault), "--db", str(db), "--quiet"], check=True, env=env)
    [results] = _sessions(db, tmp_path, [
        ("context_map", {"topic": "greenhouse pump valve", "session_budget": 3000, "max_tokens": 1000}),
        ("expand", {"ids": ["standup-a#0", "standup-b", "pump-notes", "2026-03-13"]}),
    ])
    assert not any(r.is_error for r in results)
    listed, expanded = (r.content[0].text for r in results)
    for node, day in days.items():
        assert re.search(rf"^\d+\. .* \(id: {node}\) · note · {day} · ", listed, re.M), listed
        assert f"(id: {node}) · {day}\n" in expanded, expanded
    assert re.search(r"^\d+\. 2026-03-13 \(id: 2026-03-13\) · note · (?!2026-03-13)", listed, re.M), listed
    assert "### 2026-03-13 (id: 2026-03-13)\n" in expanded, expanded


def test_a_map_asked_smaller_than_its_smallest_answer_says_so_not_that_the_session_is_spent(
    demo_db: Path, tmp_path: Path,
) -> None:
    """At 1fdd446 `max_tokens: 50` on a fresh session was refused as 'the session budget is spent
    (0/1500 used, 1500 left ...)': the budget was untouched, the map's own size was too small."""
    [results] = _sessions(demo_db, tmp_path, [
        ("context_map", {"topic": "Project Apollo", "session_budget": 1500, "max_tokens": 50}),
        ("context_map", {"topic": "Project Apollo", "max_tokens": 600}),
    ])
    refused, listed = results
    text = refused.content[0].text
    assert refused.is_error and len(text.splitlines()) == 1
    assert text.startswith("ctx: error: context_map: max_tokens 50 is below the smallest map (") and "spent" not in text
    assert "the session has 1500 left" in text
    assert not listed.is_error and _account(listed.content[0].text)[0] == count_tokens(listed.content[0].text)


def test_a_session_budget_below_the_smallest_map_says_so_not_that_it_is_spent(demo_db: Path, tmp_path: Path) -> None:
    """At dc7f3bd a fresh session whose `session_budget` (50, the least allowed) is below the
    smallest map was refused as "the session budget is spent (0/50 used, 50 left ...)"."""
    [results] = _sessions(demo_db, tmp_path, [
        ("context_map", {"topic": "Project Apollo", "session_budget": 50}),
        ("context_map", {"topic": "Project Apollo", "session_budget": 1500}),
    ])
    refused, retried = results
    text = refused.content[0].text
    assert refused.is_error and len(text.splitlines()) == 1 and "spent" not in text
    assert re.fullmatch(r"ctx: error: context_map: the session's budget, 50, is below the smallest answer \(\d+ tokens\);"
                        r" call again with a larger session_budget", text.strip()), text
    # As the message says: nothing was answered, so the larger budget is the session's.
    assert not retried.is_error and _account(retried.content[0].text)[1] == 1500, retried.content[0].text


def test_a_refused_first_call_does_not_set_the_session_budget(demo_db: Path, tmp_path: Path) -> None:
    """At 733ae3a a session's first call set its budget even when it was refused, though such a
    call "costs nothing": an `expand` of an unknown id fixed the default (4000), a map of an unknown
    topic its `session_budget`, and every later call asking the budget it wanted was refused
    ("session_budget is set once per session (4000, 0 used); not 1500") for the connection's life.
    Once a call is answered, the budget is set."""
    [results] = _sessions(demo_db, tmp_path, [
        ("expand", {"ids": ["no such note"]}),
        ("context_map", {"topic": "no such topic zzqx", "session_budget": 3000}),
        ("context_map", {"topic": "Project Apollo", "session_budget": 1500}),
        ("context_map", {"topic": "Maya Chen", "session_budget": 2000}),
        ("context_map", {"topic": "Maya Chen"}),
    ])
    unknown_id, unknown_topic, mapped, changed, again = results
    assert unknown_id.is_error and unknown_topic.is_error
    assert not mapped.is_error and _account(mapped.content[0].text)[1] == 1500, mapped.content[0].text
    assert changed.is_error and changed.content[0].text.startswith(
        "ctx: error: session_budget is set once per session (1500, ")
    assert not again.is_error and _account(again.content[0].text)[1] == 1500


def test_a_map_of_an_unknown_topic_costs_nothing(demo_db: Path, tmp_path: Path) -> None:
    """At 733ae3a a `context_map` whose topic names nothing was refused ("no node matches") but its
    empty map was charged to the session all the same (~60 tokens each), though the agent never
    received it: a session that first mistyped a topic twice paid for two maps it never saw."""
    calls = [("context_map", {"topic": "Project Apollo", "session_budget": 3000})]
    clean, after_misses = _sessions(demo_db, tmp_path, calls, [
        ("context_map", {"topic": "zzqx no such topic", "session_budget": 3000}),
        ("context_map", {"topic": "zzqx no such topic"}),
        *calls,
    ])
    assert all(r.is_error for r in after_misses[:2])
    assert after_misses[0].content[0].text == "ctx: error: no node matches 'zzqx no such topic' (use search to find it)"
    assert after_misses[2].content[0].text == clean[0].content[0].text  # the same map, the same account


def test_a_map_of_one_candidate_says_candidate(demo_db: Path, tmp_path: Path) -> None:
    """At 733ae3a a map of one node read "1 candidates, best first, 1 listed"."""
    [results] = _sessions(demo_db, tmp_path, [
        ("context_map", {"topic": "Project Apollo", "lens": "general", "depth": 0}),
        ("context_map", {"topic": "Project Apollo", "lens": "general", "max_tokens": 120}),
    ])
    alone, cut = (r.content[0].text.splitlines() for r in results)
    assert alone[1].startswith("lens: general · 1 candidate, best first, 1 listed · "), alone
    assert re.fullmatch(r"… \d+ more candidates not listed", cut[-2]), cut


def test_an_expanded_passage_opening_on_a_heading_has_a_blank_line_before_it(demo_db: Path, tmp_path: Path) -> None:
    """At dc7f3bd `expand` of a note's first passage that opens on its own heading printed
    `### Apollo Launch Plan (id: …)` and `#### Milestones` on adjacent lines, where every other
    heading of its answer has a blank line before it; a passage opening on prose (or a `#tag`)
    still follows its node's line directly."""
    node = "Projects/Apollo Launch Plan"
    heading = _passages(demo_db, node)[0][1]
    assert heading  # the note's first passage is under a heading of its own
    [results] = _sessions(demo_db, tmp_path, [
        ("context_map", {"topic": "Project Apollo", "session_budget": 4000, "max_tokens": 800}),
        ("expand", {"ids": [f"{node}#0", f"{APOLLO}#0"]}),
    ])
    assert not any(r.is_error for r in results)
    text = results[1].content[0].text
    assert re.search(rf"^### Apollo Launch Plan \(id: {node}\) · [0-9-]+\n\n#### {heading}\n", text, re.M), text
    assert re.search(rf"^### Project Apollo \(id: {APOLLO}\) · [0-9-]+\nApollo is", text, re.M), text


def test_a_map_asked_for_more_than_the_session_has_left_says_it_was_capped(demo_db: Path, tmp_path: Path) -> None:
    """At 07d9e5b `max_tokens: 100000` on a 1500-token session silently took 1498 tokens for the
    map: the agent learnt only from the account that nothing was left to expand."""
    [results] = _sessions(demo_db, tmp_path, [
        ("context_map", {"topic": "Project Apollo", "session_budget": 1500, "max_tokens": 400}),
        ("context_map", {"topic": "what blocks the Apollo launch?", "max_tokens": 100000}),
    ])
    small, big = (r.content[0].text for r in results)
    assert not any(r.is_error for r in results)
    assert "capped" not in small and count_tokens(small) <= 400
    left = 1500 - count_tokens(small)
    assert big.splitlines()[2] == f"max_tokens 100000 capped to {left}: all this session has left"
    assert count_tokens(big) <= left and _account(big)[0] == count_tokens(small) + count_tokens(big)


def test_session_calls_sent_without_waiting_are_answered_in_the_order_they_arrived(demo_db: Path, tmp_path: Path) -> None:
    """At 07d9e5b each call ran on a thread of its own: a map sent with `session_budget` and an
    expand sent before its answer could be served the other way round (the expand opened the
    session at the default 4000, and the map was refused for asking 800)."""
    import json
    import subprocess

    calls = [
        ("context_map", {"topic": "what blocks the Apollo launch?", "session_budget": 800, "max_tokens": 300}),
        ("expand", {"ids": [f"{APOLLO}#0"]}),
        ("expand", {"ids": [f"{APOLLO}#0", "People/Maya Chen"]}),
    ]
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
              for n, (name, arguments) in enumerate(calls, start=1)]
    sent = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([CTX or "ctx", "mcp", "--db", str(demo_db)], input=sent, capture_output=True, text=True,
                          env=_env(tmp_path), timeout=120, check=False)
    answers = {m["id"]: m["result"] for m in map(json.loads, done.stdout.splitlines())}
    texts = [answers[n]["content"][0]["text"] for n in range(1, len(calls) + 1)]
    assert not any(answers[n].get("isError") for n in range(1, len(calls) + 1)), texts
    charged = 0
    for text in texts:
        charged += count_tokens(text)
        assert _account(text)[:2] == (charged, 800)
    assert f"already sent in this session (not sent again): {APOLLO}#0" in texts[2]
