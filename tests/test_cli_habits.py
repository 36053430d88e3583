"""Command-line habits: --db before the subcommand, shell completion, --plain on a terminal,
honest progress phases, embedding coverage in `ctx stats`."""

from __future__ import annotations

import json
import math
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.store import connect

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


def _invoke(argv: list[str], env: dict[str, str] | None = None):
    from typer.testing import CliRunner

    from ctx.app import app

    return CliRunner(env=env).invoke(app, argv, catch_exceptions=False)


# -- --db before the subcommand ------------------------------------------------------------------


def test_db_is_accepted_before_the_subcommand(demo_db, tmp_path):
    after = _invoke(["stats", "--format", "json", "--db", str(demo_db)])
    before = _invoke(["--db", str(demo_db), "stats", "--format", "json"])
    assert before.exit_code == 0 and before.stdout == after.stdout
    # A flag wins over $CTX_DB wherever it stands; the subcommand's own flag wins over the root's.
    elsewhere = tmp_path / "missing.db"
    assert _invoke(["--db", str(demo_db), "stats"], env={"CTX_DB": str(elsewhere)}).exit_code == 0
    mixed = _invoke(["--db", str(demo_db), "stats", "--db", str(elsewhere)])
    assert mixed.exit_code == 1 and str(elsewhere) in mixed.stderr
    # Groups too: `ctx --db g.db sources remove PATH`.
    listed = _invoke(["--db", str(demo_db), "sources", "--format", "json"])
    assert json.loads(listed.stdout)["sources"][0]["format"] == "obsidian"


# -- completion ----------------------------------------------------------------------------------


def test_shell_completion_script_and_answers():
    # Typer finds the shell by walking up the process tree (shellingham), so the script is asked
    # for from inside bash, as a user would: a test runner started without a shell parent would
    # otherwise get "Shell not supported". (`; exit $?` keeps bash from exec-ing ctx in its place.)
    script = subprocess.run(
        ["bash", "-c", '"$0" --show-completion; exit $?', CTX], capture_output=True, text=True
    )
    assert script.returncode == 0 and "_CTX_COMPLETE" in script.stdout
    env = dict(os.environ, _CTX_COMPLETE="complete_bash", COMP_WORDS="ctx so", COMP_CWORD="1")
    answer = subprocess.run([CTX], capture_output=True, text=True, env=env)
    assert answer.returncode == 0 and answer.stdout.split() == ["sources"]
    assert "--install-completion" in subprocess.run([CTX, "--help"], capture_output=True, text=True).stdout


# -- --plain on a terminal -----------------------------------------------------------------------


def _through_a_terminal(argv: list[str], stream: str, timeout: float) -> tuple[int, bytes]:
    """(exit code, what ``ctx argv`` wrote to ``stream``, "stdout" or "stderr") when that stream
    is a terminal (a pseudo-terminal of our own); the other stream is discarded."""
    leader, follower = pty.openpty()
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: follower}
    process = subprocess.Popen([CTX, *argv], **streams, env=dict(os.environ, COLUMNS="100"))
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    code = process.wait(timeout=timeout)
    os.close(leader)
    return code, b"".join(chunks)


def _on_a_terminal(argv: list[str]) -> str:
    """stdout of ``ctx argv`` when stdout is a terminal."""
    return _through_a_terminal(argv, "stdout", 60)[1].decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_plain_prints_exactly_the_piped_text_on_a_terminal(demo_db, fmt):
    argv = ["build", "Project Apollo", "--max-tokens", "600", "--format", fmt, "--db", str(demo_db)]
    piped = subprocess.run([CTX, *argv], capture_output=True, text=True).stdout
    assert _on_a_terminal([*argv, "--plain"]) == piped
    assert _on_a_terminal(["--plain", *argv]) == piped
    assert _on_a_terminal(argv) != piped  # rendered for a person without it


def test_plain_json_of_stats_on_a_terminal(demo_db):
    argv = ["stats", "--format", "json", "--db", str(demo_db)]
    piped = subprocess.run([CTX, *argv], capture_output=True, text=True).stdout
    assert _on_a_terminal([*argv, "--plain"]) == piped


# -- progress ------------------------------------------------------------------------------------


def test_import_progress_names_each_phase_in_order(tmp_path):
    calls: list[tuple[str, int, int]] = []
    conn = connect(tmp_path / "g.db", create=True)
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    import_path(conn, vault, progress=lambda *call: calls.append(call))
    # A first import: every file is new, counted and written as it is read.
    # The last phase names each step it waits for (issue 20): "saving: <step>", then "saving" done.
    phases = list(dict.fromkeys(phase.partition(":")[0] for phase, _, _ in calls))
    assert phases == ["reading files", "saving"]
    notes = sorted(vault.rglob("*.md"))
    reading = [c for c in calls if c[0] == "reading files"]
    assert reading == [("reading files", n, len(notes)) for n in range(1, len(notes) + 1)]
    assert calls[-1] == ("saving", 1, 1)  # the bar ends when the commit is done, not before

    # Changed files are read first, then their nodes counted.
    for note in notes[:3]:
        note.write_text(note.read_text() + "\nOne more line.\n")
    calls.clear()
    import_path(conn, vault, progress=lambda *call: calls.append(call))
    assert list(dict.fromkeys(phase.partition(":")[0] for phase, _, _ in calls)) == ["reading files", "counting tokens", "saving"]
    assert [c for c in calls if c[0] == "reading files"][-1] == ("reading files", 3, 3)
    counting = [c for c in calls if c[0] == "counting tokens"]
    assert counting[-1][1] == counting[-1][2] >= 3
    assert calls[-1] == ("saving", 1, 1)


def test_embed_progress_moves_after_every_batch(tmp_path):
    import numpy as np

    from ctx.semantic.models import ModelRef

    class Encoder:
        def __init__(self, model):
            self.dim = 4

        def encode(self, texts, batch_size=32):
            assert len(texts) <= batch_size
            return np.tile(np.array([[0.5, 0.5, 0.5, 0.5]], dtype=np.float32), (len(texts), 1))

    conn = connect(tmp_path / "g.db", create=True)
    import_path(conn, FIXTURES / "demo-vault")
    # The model sees every distinct passage text, then every node.
    passages = conn.execute("SELECT COUNT(DISTINCT hash) FROM passages").fetchone()[0]
    nodes = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    work = passages + nodes
    calls: list[tuple[str, int, int]] = []
    embed_graph(conn, ModelRef("fake", None), batch_size=4, progress=lambda *c: calls.append(c), encoder_factory=Encoder)
    assert calls[0] == ("loading model", 0, 1)
    embedding = [c for c in calls if c[0] == "embedding"]
    assert embedding[0] == ("embedding", 0, work)
    assert len(embedding) == 1 + math.ceil(passages / 4) + math.ceil(nodes / 4)
    assert all(0 < b[1] - a[1] <= 4 for a, b in zip(embedding, embedding[1:]))
    assert embedding[-1] == ("embedding", work, work)


# -- ctx stats: embeddings -----------------------------------------------------------------------


def test_stats_reports_embedding_coverage_model_and_staleness(tmp_path, run_cli, db_path):
    from fake_encoder import FAKE_MODEL, HashEncoder

    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    conn = connect(db_path, create=True)
    import_path(conn, vault)
    assert json.loads(run_cli("stats", "--format", "json").stdout)["embeddings"]["model"] is None
    assert "embeddings: none" in run_cli("stats").stdout
    embed_graph(conn, FAKE_MODEL, encoder_factory=HashEncoder)
    (vault / "Home.md").write_text("# Home\n\nChanged.\n", encoding="utf-8")
    (vault / "Brand new.md").write_text("# Brand new\n", encoding="utf-8")
    import_path(conn, vault)
    nodes = conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
    coverage = json.loads(run_cli("stats", "--format", "json").stdout)["embeddings"]
    # No note of the vault is a dated log: no paragraph vectors (``ctx.assemble.paragraph_vectors``).
    assert coverage == {"model": FAKE_MODEL.name, "nodes": nodes, "fresh": nodes - 2, "stale": 1, "missing": 1,
                        "paragraph_vectors": 0, "first_stage": None}
    assert f"embeddings: {nodes - 2}/{nodes} nodes fresh ({FAKE_MODEL.name}); 1 stale, 1 missing" in run_cli("stats").stdout


def _stderr_on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of ``ctx argv`` with stderr on a pseudo-terminal: progress bars on."""
    code, written = _through_a_terminal(argv, "stderr", 300)
    return code, written.decode("utf-8", errors="replace")


def test_progress_bars_name_their_phases_on_a_terminal(tmp_path):
    from conftest import corpus_path

    vault = tmp_path / "vault"
    shutil.copytree(corpus_path("obsidian-dwarves-brain"), vault)  # enough files for a bar
    db = tmp_path / "g.db"
    code, err = _stderr_on_a_terminal(["import", str(vault), "--db", str(db)])
    assert code == 0, err
    assert "reading files" in err and "saving" in err
    for note in vault.rglob("*.md"):
        os.utime(note, (note.stat().st_atime, note.stat().st_mtime + 10))
    code, err = _stderr_on_a_terminal(["sync", "--db", str(db)])
    assert code == 0, err
    assert "vault: reading files" in err and "synced: 1 sources" in err
