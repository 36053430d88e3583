"""Fuzzing every importer with generated hostile sources (strategies in tests/fuzz_sources.py).

A fixed seed and a small budget by default keep the suite fast and repeatable; set
CTX_FUZZ_EXAMPLES=500 (or run bench/bench_hostile.py) for a longer hunt. Each example must import
without an internal error, keep both good notes, name every file or record it could not use in a
warning, and leave a graph that build, show and search answer in strict JSON.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

import fuzz_sources

EXAMPLES = int(os.environ.get("CTX_FUZZ_EXAMPLES", "8"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a loaded CI machine must not turn slowness into failures here
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def _fuzz(fmt: str):
    @seed(11)
    @FUZZ_SETTINGS
    @given(files=fuzz_sources.hostile_files(fmt))
    def run(files: dict[str, str]) -> None:
        with tempfile.TemporaryDirectory() as workdir:
            fuzz_sources.check_example(Path(workdir), fmt, files)

    return run


@pytest.mark.slow
@pytest.mark.parametrize("fmt", fuzz_sources.FORMATS)
def test_fuzzed_sources_import_without_internal_errors(fmt, monkeypatch, tmp_path):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))  # no user config or lenses
    _fuzz(fmt)()
