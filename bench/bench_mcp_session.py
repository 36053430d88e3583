"""An agent's MCP session (`context_map` then `expand`, one session budget) beside the same
questions asked through plain `context` calls: total tokens received, and fact recall.

    python bench/bench_mcp_session.py [--corpus foam-docs] [--context-tokens 2000] [--map-tokens 400]

The questions are bench/facts/questions.yaml's for one corpus (real notes, ../shared/corpora),
asked one after the other on ONE connection to `ctx mcp` (the MCP SDK's stdio client, as an agent
runs it), on the graph bench_facts.py builds (no embeddings). Two ways:

* plain: `context` with `max_tokens` = --context-tokens for each question;
* session: for each question `context_map` (`max_tokens` = --map-tokens), then `expand` of what
  a scripted agent (the same for every question) chooses from the map's figures: the passages not
  sent yet, most relevant to the question first, as long as the question's calls stay within
  --context-tokens (what the plain call spends); all under one session budget large enough not
  to run out (--session-budget).

Printed: the tokens each way (every answer's first text block, counted in cl100k_base), and fact
recall two ways: of what this question's calls returned, and of everything the session had
received by then (what an agent holding its conversation has). The load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_facts import OFFLINE, OUT, ctx_command, prepare_graph  # noqa: E402
from factcheck import CORPORA, load_questions, normalise  # noqa: E402

from ctx.tokens import count_tokens  # noqa: E402

NODE_LINE = re.compile(r"^\d+\. .* \(id: (.+?)\) · ")
PASSAGE = re.compile(r"#(\d+)[^()]*\((\d+)(?:, (1|\.\d\d))?( sent)?\)")


def chosen_ids(map_text: str, allowance: int) -> list[str]:
    """The scripted agent's choice, planned with the map's figures: the passages not sent yet,
    most relevant first (the map's order breaks ties), while their tokens (and ~12 per node for
    its heading line) stay within ``allowance``; one that does not fit is skipped, the next
    tried. A node whose passages the topic did not match is taken after the matched passages,
    whole, in map order."""
    lines = map_text.splitlines()
    pieces: list[tuple[float, int, str, str, int]] = []  # (-relevance, order, node, id, tokens)
    for i, line in enumerate(lines):
        found = NODE_LINE.match(line)
        if not found or line.endswith(" · sent"):
            continue
        node = found.group(1)
        row = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].startswith("   #") else ""
        for m in PASSAGE.finditer(row):
            if not m.group(4):
                relevance = float(m.group(3)) if m.group(3) else 0.0
                pieces.append((-relevance, len(pieces), node, f"{node}#{m.group(1)}", int(m.group(2))))
        if not row:
            total = int(re.search(r" · (\d+) tokens", line).group(1))  # type: ignore[union-attr]
            pieces.append((0.0, len(pieces), node, node, total))
    ids: list[str] = []
    nodes: set[str] = set()
    spent = 0
    for _, _, node, piece, cost in sorted(pieces):
        extra = cost + (0 if node in nodes else 12)
        if spent + extra <= allowance:
            ids.append(piece)
            nodes.add(node)
            spent += extra
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="foam-docs")
    parser.add_argument("--context-tokens", type=int, default=2000)
    parser.add_argument("--map-tokens", type=int, default=400)
    parser.add_argument("--session-budget", type=int, default=200_000)
    args = parser.parse_args()
    if not (CORPORA / args.corpus).is_dir():
        print(f"no corpus at {CORPORA / args.corpus}: this benchmark needs ../shared", file=sys.stderr)
        return 1

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    questions = [q for q in load_questions() if q.corpus == args.corpus]
    ctx = ctx_command()
    env = dict(os.environ, **OFFLINE, CTX_HOME=str(OUT / "ctx-home"))
    db = prepare_graph(ctx, args.corpus, False, False, env)
    load_before = os.getloadavg()
    params = StdioServerParameters(command=ctx, args=["mcp", "--db", str(db)], env=env)
    plain: list[str] = []
    session: list[list[str]] = []
    transcript: list[dict[str, object]] = []

    async def ask() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            for q in questions:
                answer = await client.call_tool("context", {"topic": q.question, "max_tokens": args.context_tokens})
                plain.append(answer.content[0].text)
        async with Client(params, read_timeout_seconds=300) as client:
            for n, q in enumerate(questions):
                arguments: dict[str, object] = {"topic": q.question, "max_tokens": args.map_tokens}
                if n == 0:
                    arguments["session_budget"] = args.session_budget
                mapped = await client.call_tool("context_map", arguments)
                texts = [mapped.content[0].text]
                transcript.append({"call": "context_map", "arguments": arguments, "error": mapped.is_error})
                allowance = args.context_tokens - count_tokens(texts[0]) - 40  # 40: expand's own lines
                ids = chosen_ids(texts[0], allowance) if not mapped.is_error else []
                if ids:
                    expanded = await client.call_tool("expand", {"ids": ids})
                    texts.append(expanded.content[0].text)
                    transcript.append({"call": "expand", "ids": ids, "error": expanded.is_error})
                session.append(texts)

    anyio.run(ask)

    def recall(contexts: list[str]) -> tuple[float, float]:
        own, held = [], []
        seen = ""
        for q, text in zip(questions, contexts, strict=True):
            seen += "\n" + text
            own.append(len(q.facts_in(normalise(text))) / len(q.facts))
            held.append(len(q.facts_in(normalise(seen))) / len(q.facts))
        return sum(own) / len(own), sum(held) / len(held)

    plain_tokens = sum(count_tokens(t) for t in plain)
    session_texts = ["\n".join(ts) for ts in session]
    session_tokens = sum(count_tokens(t) for ts in session for t in ts)
    account = session[-1][-1].rstrip("\n").splitlines()[-1]
    p_own, p_held = recall(plain)
    s_own, s_held = recall(session_texts)
    print(f"# bench_mcp_session: {len(questions)} questions over {args.corpus}, one MCP connection each way")
    print(f"load average before {' '.join(f'{x:.2f}' for x in load_before)},"
          f" after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"plain `context` at {args.context_tokens}: {plain_tokens} tokens"
          f" ({plain_tokens / len(questions):.0f} per question); fact recall {p_own:.3f} per question,"
          f" {p_held:.3f} with everything received so far")
    print(f"session (map {args.map_tokens}, then expand as the map's costs allow within {args.context_tokens}):"
          f" {session_tokens} tokens ({session_tokens / len(questions):.0f} per question; the server's"
          f" account: {account}); fact recall {s_own:.3f} per question, {s_held:.3f} with everything so far")
    print(f"session / plain tokens: {session_tokens / plain_tokens:.2f}")
    out = OUT / f"mcp-session-{args.corpus}.json"
    out.write_text(json.dumps({"transcript": transcript, "plain_tokens": plain_tokens,
                               "session_tokens": session_tokens}, indent=1), encoding="utf-8")
    print(f"calls made: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
