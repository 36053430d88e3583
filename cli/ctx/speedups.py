"""The start-up devices, in one place: what each does, the private internal it leans on, and the
test that holds it. ``CTX_PLAIN=1`` turns every one of them off, so that the plain path -- public
APIs only, the way any Python program would do it -- can be run and compared at any time (CI runs
the tests that exercise them once more with it set: `.ci/run`).

Each device exists because a cold `ctx build` pays for it on every call (figures in
docs/scale.md, "Cold start"); each must give the very same output as the plain path. When an
upgrade of the library under a device changes the internal it relies on, the device's test fails
and ``CTX_PLAIN=1`` is the way to a working `ctx` until it is fixed.

| device | where | relies on (not a public API) | held by |
|---|---|---|---|
| Typer bypass for `ctx build` / `ctx search` / `ctx mcp` with plain arguments | ``ctx.entry``, ``commands/build_argv.py``, ``commands/search_argv.py``, ``commands/mcp_argv.py`` | Click's parsing rules, reproduced for the options declared in ``ctx.options`` (spellings, ``--opt=value``, ``--``, root ``--db``/``--plain``, ``$CTX_DB``, completion variables) | tests/test_fast_build.py, tests/test_fast_build_cli.py, tests/test_fast_search.py, tests/test_options.py, tests/test_mcp_protocol.py |
| quiet Ctrl-C while loading, exit without finalising | ``ctx.entry`` (``_interrupted_while_loading``, ``_leave``) | the C module ``_signal``; ``atexit._run_exitfuncs`` and ``os._exit`` (no interpreter teardown) | tests/test_fast_build_cli.py, tests/test_cli_robustness.py |
| no cyclic garbage collector in a `ctx build` / `ctx search` process with plain arguments | ``ctx.entry`` (``gc.disable``; on again for every other command) | nothing private | tests/test_speedups.py |
| compiled dataclass methods from the cache | ``ctx.dataclass_code`` | ``dataclasses`` calling the module-level name ``exec`` on its generated source | tests/test_dataclass_code.py |
| tiktoken's core without the package | ``ctx.tokens`` (``_from_cache``, ``_core_module``) | ``tiktoken._tiktoken.CoreBPE``, ``Encoding._mergeable_ranks``, ``_pat_str``, ``_special_tokens``, ``_core_bpe`` | tests/test_tokens.py, tests/test_cold_imports.py |
| rs-bpe's tokenizer for ``cl100k_base`` when the optional package is installed (the ``fast`` extra) | ``ctx.tokens`` (``_fast_core``, ``_FastCore``) | ``rs_bpe.bpe`` loaded from its file; its ``openai.cl100k_base()`` giving tiktoken's tokens (checked on a probe text at every load); its ``count_till_limit`` (the count while within a limit, else None) for the counts packing asks as "does it fit" | tests/test_tokens.py, tests/test_speedups.py, tests/test_bounded_counts.py |
| parsed YAML (lenses, config) from the cache | ``ctx.yaml_cache`` | nothing private: ``marshal`` of the parsed data, keyed by the exact text | tests/test_yaml_cache.py |
| frontmatter read without PyYAML's composer | ``importers/markdown.py`` (``_simple_frontmatter``) | PyYAML's ``Resolver.resolve`` and ``SafeConstructor`` methods called on hand-made scalar nodes | tests/test_frontmatter_fast_path.py |

``CTX_NO_FAST_PATH=1`` turns off the Typer bypass alone (what bench/bench_build.py --typer measures).
"""

from __future__ import annotations

import os

PLAIN_VARIABLE = "CTX_PLAIN"


def plain() -> bool:
    """True when ``CTX_PLAIN`` is set to anything but empty or 0: every device stays off."""
    return os.environ.get(PLAIN_VARIABLE, "") not in ("", "0")
