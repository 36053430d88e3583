"""The console script's dataclass code cache: every dataclass ctx defines gets the very same
methods with it as without it (compiled fresh or loaded from the cache), and a damaged or
unwritable cache only costs speed."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

# Prints a fingerprint of every method dataclasses generated for every ctx class loaded by the
# build path and the import path, and how many method texts the cache did not already hold.
PROBE = r"""
import json, sys
from types import CodeType, FunctionType
hook = sys.argv[1] == "hook"
if hook:
    from ctx import dataclass_code
    dataclass_code.install()
import ctx.assemble.pipeline, ctx.commands.build_run, ctx.config, ctx.freshness, ctx.graph, ctx.tokens
import ctx.importers.engine, ctx.lenses, ctx.store, ctx.sync

def code_print(code):
    consts = [code_print(c) if isinstance(c, CodeType) else repr(c) for c in code.co_consts]
    return [code.co_name, code.co_qualname, code.co_filename, code.co_argcount, code.co_posonlyargcount,
            code.co_kwonlyargcount, code.co_flags, code.co_code.hex(), list(code.co_names),
            list(code.co_varnames), list(code.co_freevars), list(code.co_cellvars),
            code.co_linetable.hex(), code.co_exceptiontable.hex(), consts]

found = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("ctx"):
        continue
    for cls in vars(module).values():
        if not isinstance(cls, type) or "__dataclass_fields__" not in vars(cls) or cls.__module__ != name:
            continue
        for attr, value in sorted(vars(cls).items()):
            if isinstance(value, FunctionType) and value.__code__.co_filename == "<string>":
                found[f"{name}.{cls.__qualname__}.{attr}"] = [
                    code_print(value.__code__), repr(value.__annotations__), repr(value.__kwdefaults__)]
new = 0
if hook:
    new = len(dataclass_code._codes) - dataclass_code._loaded
    dataclass_code.save()
print(json.dumps({"methods": found, "new": new}))
"""


def _probe(mode: str, cache: Path) -> dict:
    env = {**os.environ, "CTX_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, check=True)
    return json.loads(proc.stdout)


def test_cached_methods_are_the_methods_dataclasses_compiles(tmp_path):
    cache = tmp_path / "cache"
    plain = _probe("plain", cache)
    cold = _probe("hook", cache)  # compiles every text, stores them
    warm = _probe("hook", cache)  # compiles nothing
    assert len(plain["methods"]) > 150  # every frozen class's __init__, __repr__, __eq__, __setattr__...
    assert cold["methods"] == plain["methods"]
    assert warm["methods"] == plain["methods"]
    assert cold["new"] > 150 and warm["new"] == 0
    assert len(list(cache.glob("dataclass-code.*"))) == 1


def test_a_damaged_cache_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    expected = _probe("plain", cache)["methods"]
    _probe("hook", cache)
    (stored,) = cache.glob("dataclass-code.*")
    for damage in (b"", b"\x00garbage", stored.read_bytes()[:1000]):
        stored.write_bytes(damage)
        rebuilt = _probe("hook", cache)
        assert rebuilt["methods"] == expected and rebuilt["new"] > 150
    assert _probe("hook", cache)["new"] == 0


def test_an_unwritable_cache_only_costs_speed(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    expected = _probe("plain", tmp_path / "unused")["methods"]
    for _ in range(2):
        run = _probe("hook", blocked)  # the cache file cannot be made below a file
        assert run["methods"] == expected and run["new"] > 150


def test_the_console_script_stores_and_uses_the_cache(tmp_path, demo_db):
    ctx = Path(sys.executable).with_name("ctx")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update({"CTX_CACHE_DIR": str(tmp_path / "cache"), "CTX_HOME": str(tmp_path / "home")})
    argv = [str(ctx), "build", "Project Apollo", "--max-tokens", "800", "--db", str(demo_db)]
    first = subprocess.run(argv, capture_output=True, env=env, check=True)
    (stored,) = (tmp_path / "cache").glob("dataclass-code.*")
    before = stored.stat().st_mtime_ns
    kept = set(marshal.loads(stored.read_bytes()))
    second = subprocess.run(argv, capture_output=True, env=env, check=True)
    assert second.stdout == first.stdout and second.stderr == first.stderr
    # Nothing new to store the second time (on a failure, the texts the second run compiled anew).
    assert stored.stat().st_mtime_ns == before, sorted(set(marshal.loads(stored.read_bytes())) - kept)
