"""Small hostile conditions around the CLI: non-finite lens numbers, strict JSON, an ASCII-only
stdout, Ctrl-C while the CLI is still loading, and queries of a whole pasted page."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("scoring: {distance: .nan}\n", "scoring.distance"),
        ("scoring: {recency_half_life_days: .inf}\n", "scoring.recency_half_life_days"),
        ("edges: {link: {weight: .nan}}\n", "edges.link.weight"),
        ("boosts: {types: {person: .inf}}\n", "boosts.types.person"),
        ("sections:\n  - {name: A, select: seed, share: .nan}\n  - {name: B, select: rest}\n", "sections[0].share"),
        ("semantic: {min_similarity: -.inf}\n", "semantic.min_similarity"),
    ],
)
def test_lens_validate_refuses_non_finite_numbers(tmp_path, run_cli, yaml_text, key):
    lens = tmp_path / "bad.yaml"
    lens.write_text(yaml_text, encoding="utf-8")
    result = run_cli("lens", "validate", str(lens))
    assert result.exit_code == 2
    assert f"{lens}: {key}: " in result.stderr and ("finite" in result.stderr or "from 0 to 100" in result.stderr)


def test_json_output_is_strict_even_for_values_stored_before_dates_were_checked(tmp_path, run_cli):
    """A graph written by an older ctx may hold a NaN or infinite date: output stays strict JSON."""
    from ctx.store import connect

    records = [{"id": "a", "title": "Alpha", "body": "links", "links": ["b"]}, {"id": "b", "title": "Beta"}]
    src = tmp_path / "g.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert run_cli("import", str(src)).exit_code == 0
    conn = connect(tmp_path / "graph.db")
    conn.execute("UPDATE nodes SET updated = ?, created = ? WHERE id = 'b'", (float("nan"), float("inf")))
    conn.close()

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    for argv in (["build", "Alpha", "--format", "json"], ["show", "b", "--format", "json"],
                 ["search", "beta", "--format", "json"], ["stats", "--format", "json"]):
        result = run_cli(*argv)
        assert result.exit_code == 0, (argv, result.stderr)
        json.loads(result.stdout, parse_constant=refuse)
    assert run_cli("show", "b").exit_code == 0
    assert run_cli("build", "Alpha").exit_code == 0


def _ctx(args: list[str], env_extra: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1", **(env_extra or {})}
    return subprocess.run([CTX, *args], capture_output=True, env=env, timeout=120, **kwargs)


def test_an_ascii_only_stdout_gets_utf8_rather_than_an_error(demo_db):
    assert CTX
    for fmt in ("markdown", "json"):
        result = _ctx(["build", "Project Apollo", "--db", str(demo_db), "--format", fmt, "--max-tokens", "600"],
                      {"PYTHONIOENCODING": "ascii"})
        assert result.returncode == 0, result.stderr.decode()
        text = result.stdout.decode("utf-8")
        if fmt == "markdown":
            assert "·" in text  # the header's separator, which an ASCII stdout cannot encode
        else:
            json.loads(text)
    search = _ctx(["search", "apollo", "--db", str(demo_db)], {"PYTHONIOENCODING": "ascii"})
    assert search.returncode == 0, search.stderr.decode()


@pytest.mark.usefixtures("devices_on")  # the quiet Ctrl-C device itself (ctx.speedups)
def test_ctrl_c_while_the_cli_loads_prints_no_traceback_from_ctx(demo_db):
    """SIGINT at every moment of start-up. Before ``ctx.entry``'s first line runs, the interpreter's
    own start-up (``site``, and the package's ``__init__``, which Python runs before any module of
    the package and which imports nothing) belong to Python: a traceback there has no frame of
    ctx's code past ``ctx/__init__.py``. From ``ctx.entry`` on, there is no traceback at all: exit 130.
    (Under load a 25 ms interrupt once landed inside ``ctx/__init__.py``'s first statement.)"""
    assert CTX
    package = str(Path(__import__("ctx").__file__).resolve().parent)
    package_init = str(Path(package) / "__init__.py")
    outcomes = []
    for delay_ms in range(0, 300, 25):
        proc = subprocess.Popen([CTX, "build", "Project Apollo", "--db", str(demo_db)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay_ms / 1000)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        text = err.decode(errors="replace")
        frames = re.findall(r'File "([^"]+)"', text)
        ours = [frame for frame in frames if frame.startswith(package) and frame != package_init]
        assert not ours, f"{delay_ms} ms:\n{text}"
        if "Traceback" not in text:
            assert proc.returncode in (0, 130, -signal.SIGINT), (delay_ms, proc.returncode, text)
        outcomes.append(proc.returncode)
    assert 130 in outcomes  # some interrupts really landed while ctx was loading or running


def test_a_pasted_page_as_a_query_is_read_up_to_its_first_words():
    from ctx.store.reads import MAX_QUERY_TERMS, fts_query

    words = [f"word{i}" for i in range(1500)]
    query = fts_query(" ".join(words), "or")
    assert query.count(" OR ") == MAX_QUERY_TERMS - 1
    assert '"word0"' in query and f'"word{MAX_QUERY_TERMS}"' not in query
    # Repeats do not use up the budget: distinct words count.
    assert fts_query("a a a a b", "and") == '"a" AND "b"'


def test_a_1500_word_query_searches_and_builds(demo_db, run_cli):
    text = (FIXTURES / "demo-vault" / "Projects" / "Project Apollo.md").read_text(encoding="utf-8")
    words = re.findall(r"[A-Za-z]+", text)
    query = " ".join((words * (1500 // len(words) + 1))[:1500])
    search = run_cli("search", query, db=demo_db)
    assert search.exit_code == 0, search.stderr
    built = run_cli("build", query, "--max-tokens", "800", db=demo_db)
    assert built.exit_code in (0, 3), built.stderr


def test_shortening_a_long_unbroken_text_is_linear(tmp_path, run_cli):
    """Extractive shortening split sentences with a pattern that re-scanned a long run without a
    sentence end from every position in it: 25 s for 20,000 characters, hours for a megabyte."""
    from ctx.assemble.extract import sentences

    for text in ("a" * 1_000_000 + ".b", "a." * 500_000, "." * 1_000_000 + "b"):
        started = time.process_time()
        parts = sentences(text)
        assert time.process_time() - started < 10
        assert "".join(parts).replace(" ", "") == text  # nothing dropped
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Long.md").write_text("# Long\n\n" + "word" * 50_000 + ".x and more\n", encoding="utf-8")
    lens = tmp_path / "extractive.yaml"
    lens.write_text("truncation: {strategy: extractive}\n", encoding="utf-8")
    assert run_cli("import", str(vault)).exit_code == 0
    started = time.process_time()
    built = run_cli("build", "Long", "--lens", str(lens), "--max-tokens", "300")
    assert built.exit_code == 0, built.stderr
    assert time.process_time() - started < 60


def test_a_build_takes_a_bounded_number_of_topics(demo_db, run_cli):
    from ctx.assemble import MAX_TOPICS

    many = [f"topic {i}" for i in range(MAX_TOPICS + 1)]
    result = run_cli("build", *many, db=demo_db)
    assert result.exit_code == 2 and f"at most {MAX_TOPICS} topics" in result.stderr
    assert run_cli("build", *many[:MAX_TOPICS], db=demo_db).exit_code in (0, 3)
