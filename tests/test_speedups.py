"""CTX_PLAIN=1 turns every start-up device of ctx.speedups off, and the plain path prints the very
same bytes as the fast one. The devices themselves are held by the tests ctx.speedups names."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

import ctx.speedups

PROBE = r"""
import json, sys, signal
sys.argv = ["ctx", *sys.argv[1:]]
import ctx.entry
handler = signal.getsignal(signal.SIGINT)
left = []

def leave(code):  # record how the process would end, then end with SystemExit to look around
    left.append("os._exit")
    raise SystemExit(code)

ctx.entry._leave = leave if not ctx.entry._PLAIN else ctx.entry._leave
try:
    ctx.entry.main()
except SystemExit as exc:
    code = exc.code
import dataclasses
from ctx import dataclass_code, tokens
watched = ("typer", "click", "tiktoken", "yaml")
sys.stdout.flush()
sys.stderr.write("\n" + json.dumps({
    "code": code,
    "loaded": [m for m in watched if m in sys.modules],
    "quiet_ctrl_c": handler is ctx.entry._interrupted_while_loading,
    "exit": left[0] if left else "sys.exit",
    "dataclass_code": getattr(dataclasses, "exec", None) is dataclass_code._exec,
    "gc": __import__("gc").isenabled(),
    "tiktoken_core": [type(enc._core).__name__ for enc in [tokens.get_encoding()]][0] if "ctx.tokens" in sys.modules else None,
}) + "\n")
"""


def _probe(args: list[str], tmp_path: Path, *, plain: bool) -> tuple[str, dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_HOME": str(tmp_path / "home"), "CTX_CACHE_DIR": str(tmp_path / "cache")})
    if plain:
        env["CTX_PLAIN"] = "1"
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=120)
    return proc.stdout, json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("topic", ["Project Apollo", "what blocks the launch?"])
def test_plain_builds_print_the_same_bytes_with_every_device_off(topic, demo_db, tmp_path):
    args = ["build", topic, "--db", str(demo_db), "--max-tokens", "900"]
    _probe(args, tmp_path, plain=False)  # fill the caches
    fast_out, fast = _probe(args, tmp_path, plain=False)
    plain_out, plain = _probe(args, tmp_path, plain=True)
    assert fast["code"] == plain["code"] == 0
    assert plain_out == fast_out and len(fast_out) > 500
    # Fast: no Typer, no tiktoken package or PyYAML (caches), quiet Ctrl-C, exit without teardown,
    # cached dataclass code.
    assert fast["loaded"] == [] and fast["quiet_ctrl_c"] and fast["exit"] == "os._exit"
    assert fast["gc"] is False and plain["gc"] is True  # the cyclic collector off for the build
    from ctx.tokens import _fast_core

    # tiktoken's core loaded by itself, or rs-bpe's tokenizer where that is installed.
    assert fast["dataclass_code"] and fast["tiktoken_core"] == ("CoreBPE" if _fast_core("cl100k_base") is None else "_FastCore")
    # Plain: every one of them off.
    assert {"typer", "tiktoken", "yaml"} <= set(plain["loaded"])
    assert not plain["quiet_ctrl_c"] and plain["exit"] == "sys.exit"
    assert not plain["dataclass_code"] and plain["tiktoken_core"] == "Encoding"


def test_plain_search_goes_through_typer_with_the_same_output(demo_db, tmp_path):
    args = ["search", "launch", "--db", str(demo_db), "--format", "json"]
    fast_out, fast = _probe(args, tmp_path, plain=False)
    plain_out, plain = _probe(args, tmp_path, plain=True)
    assert plain_out == fast_out and fast["code"] == plain["code"] == 0
    assert "typer" not in fast["loaded"] and "typer" in plain["loaded"]
    assert fast["gc"] is False and plain["gc"] is True


def test_commands_other_than_build_and_search_keep_the_garbage_collector(demo_db, tmp_path):
    _, stats = _probe(["stats", "--db", str(demo_db)], tmp_path, plain=False)
    assert stats["code"] == 0 and stats["gc"] is True


def test_plain_yaml_and_frontmatter_take_pyyaml(tmp_path, monkeypatch):
    from ctx import yaml_cache
    from ctx.importers.markdown import _simple_frontmatter

    monkeypatch.setenv("CTX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CTX_PLAIN", "1")
    assert yaml_cache.load("a: 1\nb: [x, y]\n") == {"a": 1, "b": ["x", "y"]}
    assert not (tmp_path / "cache").exists()  # nothing stored
    assert _simple_frontmatter("title: A note\ntags: [a, b]") is None
    monkeypatch.setenv("CTX_PLAIN", "0")
    assert _simple_frontmatter("title: A note\ntags: [a, b]") == {"title": "A note", "tags": ["a", "b"]}


def test_every_device_names_modules_and_tests_that_exist():
    table = [line for line in ctx.speedups.__doc__.splitlines() if line.startswith("| ") and "``" in line]
    assert len(table) == 8
    for row in table:
        device, where, relies_on, held_by = [cell.strip() for cell in row.strip("|").split("|")]
        for test in re.findall(r"tests/\S+\.py", held_by):
            assert (REPO / test).is_file(), test
        for module in re.findall(r"``(ctx\.[a-z_.]+)``", where):
            __import__(module)
        for path in re.findall(r"``([a-z_/]+\.py)``", where):
            assert (REPO / "cli" / "ctx" / path).is_file(), path
