"""`ctx embed`: incremental by content hash, model switches, orphan pruning, the no-extra error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from semantic_vault import write_vault

from ctx.importers.engine import import_path
from ctx.store import vectors
from ctx.semantic.embedding import embed_graph
from ctx.semantic.models import DEFAULT_MODEL, ModelRef, resolve_model
from ctx.store import connect

pytest.importorskip("sentence_transformers", reason="needs the embed extra")


@pytest.fixture(scope="module")
def embedded_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A vault imported and embedded once with the real model; tests work on copies."""
    root = tmp_path_factory.mktemp("semantic")
    vault = write_vault(root / "vault")
    db = root / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    report = embed_graph(conn, resolve_model(None))
    assert report.embedded > 0 and report.dim == 384
    conn.close()
    return vault, db


@pytest.fixture
def graph_copy(embedded_db: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """The vault imported afresh (sources are keyed by absolute path), with the module's node and
    passage vectors."""
    _, embedded = embedded_db
    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    conn.execute("ATTACH DATABASE ? AS done", (str(embedded),))
    conn.execute(
        "INSERT INTO embeddings (node_id, model, dim, content_hash, vector)"
        " SELECT node_id, model, dim, content_hash, vector FROM done.embeddings"
    )
    conn.execute("INSERT INTO passage_vectors SELECT * FROM done.passage_vectors")
    vectors.set_active_model(conn, DEFAULT_MODEL)
    conn.execute("DETACH DATABASE done")
    conn.close()
    return vault, db


class CountingEncoder:
    """A deterministic fake that records what it was asked to embed (tests of bookkeeping only)."""

    calls: list[str] = []

    def __init__(self, model: ModelRef) -> None:
        self.dim = 8

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        CountingEncoder.calls.extend(texts)
        out = np.array([[len(t) % 7 + 1.0, *([1.0] * 7)] for t in texts], dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_every_node_gets_a_fresh_vector(embedded_db):
    _, db = embedded_db
    conn = connect(db)
    state = vectors.status(conn)
    assert state.model == DEFAULT_MODEL
    assert state.fresh == state.nodes > 0
    dims = {r[0] for r in conn.execute("SELECT dim FROM embeddings")}
    assert dims == {384}
    norms = [np.linalg.norm(vectors.from_blob(r[0])) for r in conn.execute("SELECT vector FROM embeddings")]
    assert np.allclose(norms, 1.0, atol=1e-4)


def test_second_run_embeds_nothing_and_loads_no_model(graph_copy):
    _, db = graph_copy
    conn = connect(db)

    def must_not_load(model: ModelRef) -> object:
        raise AssertionError("an up-to-date graph must not load the model")

    report = embed_graph(conn, resolve_model(None), encoder_factory=must_not_load)
    assert report.embedded == 0
    assert report.unchanged == vectors.status(conn).nodes


def test_editing_one_note_embeds_exactly_that_note(graph_copy):
    vault, db = graph_copy
    conn = connect(db)
    note = vault / "Telescope.md"
    note.write_text(note.read_text() + "\nA refractor uses lenses instead.\n", encoding="utf-8")
    os.utime(note, (time.time() + 5, time.time() + 5))
    import_path(conn, vault)
    assert vectors.pending_node_ids(conn, DEFAULT_MODEL) == ["Telescope"]
    report = embed_graph(conn, resolve_model(None))
    assert report.embedded == 1
    assert vectors.status(conn).missing == 0


def test_a_node_whose_passages_are_embedded_is_embedded_alone(graph_copy):
    """Only a node's own vector missing (its passages' texts already have theirs): the real
    encoder is asked for nodes alone, with no passage batch before them."""
    _, db = graph_copy
    conn = connect(db)
    conn.execute("DELETE FROM embeddings WHERE node_id = 'Telescope'")
    conn.commit()
    assert vectors.pending_passages(conn, DEFAULT_MODEL) == []
    report = embed_graph(conn, resolve_model(None))
    assert (report.embedded, report.passages) == (1, 0)
    assert vectors.status(conn).missing == 0


def test_switching_models_re_embeds_everything(graph_copy):
    _, db = graph_copy
    conn = connect(db)
    CountingEncoder.calls = []
    total = vectors.status(conn).nodes
    passages = conn.execute("SELECT COUNT(DISTINCT hash) FROM passages").fetchone()[0]
    report = embed_graph(conn, ModelRef("fake-model", None), encoder_factory=CountingEncoder)
    assert report.embedded == total and report.switched_from == DEFAULT_MODEL
    assert report.passages == passages > 0
    assert len(CountingEncoder.calls) == total + passages  # every node and every passage text, once
    assert vectors.active_model(conn) == "fake-model"
    assert {r[0] for r in conn.execute("SELECT model FROM embeddings")} == {"fake-model"}


def _vectors_by_model(db: Path) -> tuple[str | None, list[tuple[str, str, int]]]:
    conn = connect(db)
    try:
        rows = [(table, *r) for table in ("embeddings", "passage_vectors")
                for r in conn.execute(f"SELECT model, COUNT(*) FROM {table} GROUP BY model ORDER BY model")]
        return vectors.active_model(conn), rows
    finally:
        conn.close()


def _stored_vectors(db: Path) -> tuple[str | None, set[tuple]]:
    conn = connect(db)
    try:
        rows = {("node", *r) for r in conn.execute("SELECT node_id, model, content_hash, vector FROM embeddings")}
        rows |= {("passage", *r) for r in conn.execute("SELECT model, hash, vector FROM passage_vectors")}
        return vectors.active_model(conn), rows
    finally:
        conn.close()


def test_a_model_that_cannot_be_loaded_changes_nothing(graph_copy, run_cli):
    """A mistyped ``--model`` (a name sentence-transformers does not have offline, a folder that
    is not there) is a one-line error and leaves the graph as it was: at 037d967 the graph was
    switched to it first, every passage vector of its own model dropped, and ``ctx sync`` failed
    from then on (it embeds with the graph's model, now one that is not there)."""
    vault, db = graph_copy
    before = _vectors_by_model(db)
    assert before[0] == DEFAULT_MODEL and ("passage_vectors", DEFAULT_MODEL, before[1][-1][2]) in before[1]
    for missing in ("no-such-model-anywhere", str(vault / "no-such-folder")):
        result = run_cli("embed", "--model", missing, "--quiet", db=db)
        assert result.exit_code == 1
        assert "not available offline" in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert _vectors_by_model(db) == before
    synced = run_cli("sync", "--output", "json", db=db)
    assert synced.exit_code == 0, synced.stderr
    assert json.loads(synced.stdout)["embed_model"] == DEFAULT_MODEL


def test_a_model_folder_with_broken_weights_changes_nothing(graph_copy, run_cli, tmp_path):
    """A folder that looks like the bundled model (its tokenizer and configs) but whose weights
    file is damaged: ``ctx embed --model`` and ``--fast --model`` fail in one line and leave the
    graph as it was. At 962de9d the model's loading was skipped for a model with a first stage,
    so the switch dropped every vector first and then died reading the weights (MemoryError: the
    damaged header said a header of exabytes)."""
    vault, db = graph_copy
    bundled = resolve_model(None).path
    assert bundled is not None
    broken = tmp_path / "broken-model"
    broken.mkdir()
    for entry in bundled.iterdir():
        if entry.name != "model.safetensors":
            (broken / entry.name).symlink_to(entry)
    (broken / "model.safetensors").write_bytes(b"\xff" * 4096)
    before = _vectors_by_model(db)
    for flags in (("--model", str(broken)), ("--fast", "--model", str(broken))):
        result = run_cli("embed", *flags, "--quiet", db=db)
        assert result.exit_code == 1, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "internal error" not in result.stderr
        assert _vectors_by_model(db) == before


def test_a_graph_embedded_with_a_model_this_machine_lacks_still_syncs(graph_copy, run_cli):
    """A graph copied from a machine whose model is not here: ``ctx sync`` imports the edit and
    says in one line why vectors were not updated (exit 0, ``embed_skipped`` in JSON), touching no
    vector; ``ctx watch`` uses the same step, so it no longer retries every 2 s. Before, the sync
    exited 1 after importing and the watch warned forever, advising a ``--model`` it does not take."""
    from ctx.sync import embed_pending

    vault, db = graph_copy
    elsewhere = "elsewhere/a-model-not-on-this-machine"
    conn = connect(db)
    for table in ("embeddings", "passage_vectors"):
        conn.execute(f"UPDATE {table} SET model = ? WHERE model = ?", (elsewhere, DEFAULT_MODEL))
    conn.execute("DELETE FROM passage_vectors WHERE model != ?", (elsewhere,))  # no first stage there
    vectors.set_active_model(conn, elsewhere)
    conn.commit()
    conn.close()
    before = _stored_vectors(db)
    (vault / "Tomatoes.md").write_text("Tomato plants want a trellis of twine this year.\n", encoding="utf-8")
    synced = run_cli("sync", "--output", "json", db=db)
    assert synced.exit_code == 0, synced.stderr
    skipped = json.loads(synced.stdout)["embed_skipped"]
    assert skipped.startswith("vectors not updated:") and elsewhere in skipped and "ctx embed --model" in skipped
    said = run_cli("sync", db=db)  # the edited note's vector is still stale: tried, said again
    assert said.exit_code == 0, said.stderr
    assert [line for line in said.stderr.splitlines() if "vectors not updated" in line] == [f"ctx: warning: {skipped}"]
    after = _stored_vectors(db)
    assert after[0] == before[0] and after[1] <= before[1]  # nothing encoded; only the edit's old passage gone
    conn = connect(db)
    body = conn.execute("SELECT body FROM nodes WHERE id = 'Tomatoes'").fetchone()[0]
    assert "trellis of twine" in body  # the import stands
    assert embed_pending(conn).embed_skipped == skipped  # what ctx watch runs after each sync
    conn.close()


def test_vectors_of_deleted_notes_are_pruned(graph_copy):
    vault, db = graph_copy
    conn = connect(db)
    (vault / "Tomatoes.md").unlink()
    import_path(conn, vault)
    report = embed_graph(conn, resolve_model(None))
    assert report.pruned >= 1
    assert conn.execute("SELECT 1 FROM embeddings WHERE node_id = 'Tomatoes'").fetchone() is None


def test_embedded_text_is_title_then_body_without_a_repeated_heading():
    from ctx.semantic.node_text import MAX_CHARS, node_text

    assert node_text("Apollo", "# Apollo\n\nLaunch in May.") == "Apollo\n\nLaunch in May."
    assert node_text("Apollo", "") == "Apollo"
    assert len(node_text("Big", "x" * 100_000)) == MAX_CHARS


def test_cli_json_summary(graph_copy, run_cli):
    _, db = graph_copy
    result = run_cli("embed", "--output", "json", db=db)
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["embedded"] == 0 and summary["model"] == DEFAULT_MODEL and summary["dim"] == 384


# Hides sentence-transformers as if the extra were not installed, then runs the real CLI.
_WITHOUT_EXTRA = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('sentence_transformers', 'torch'):
            raise ImportError(f'No module named {name!r}')
sys.meta_path.insert(0, Hide())
sys.argv = ['ctx'] + sys.argv[1:]
from ctx.app import main
main()
"""


def test_without_the_extra_the_error_says_how_to_install(tmp_path):
    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "graph.db"
    import_path(connect(db, create=True), vault)
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA, "embed", "--db", str(db)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "pip install 'ctx-graph[embed]'" in lines[0]
    assert "Traceback" not in result.stderr


def test_a_model_path_that_is_no_folder_is_one_line_from_the_real_cli(tmp_path):
    """In a real process (not under pytest's log capture) sentence-transformers logged "Could not
    resolve the revision of 'sentence-transformers/bge small' (...). Loading without pinning to a
    single commit." on stderr before ctx's own one-line error (at 733ae3a; so did '/nonexistent'):
    two lines for one mistake."""
    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "graph.db"
    import_path(connect(db, create=True), vault)
    missing = "bge small"  # a typo: no folder, and no model name the hub would take either
    result = subprocess.run(
        [sys.executable, "-c", "from ctx.entry import main; main()", "embed", "--model", missing, "--db", str(db)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"ctx: error: embedding model {missing!r} is not available offline (")
    assert result.stderr.count("\n") == 1, result.stderr


def _named_model(db: Path, name: str) -> None:
    """The graph's vectors relabelled as ``name``'s, as a graph embedded with that model stores them."""
    conn = connect(db)
    for table in ("embeddings", "passage_vectors"):
        conn.execute(f"UPDATE {table} SET model = ? WHERE model = ?", (name, DEFAULT_MODEL))
    vectors.set_active_model(conn, name)
    conn.commit()
    conn.close()


def _model_folder(at: Path) -> Path:
    """A loadable model folder: the bundled model's files, linked."""
    bundled = resolve_model(None).path
    assert bundled is not None
    at.mkdir(parents=True)
    for entry in bundled.iterdir():
        (at / entry.name).symlink_to(entry)
    return at


def _semantic(result) -> str:
    assert result.exit_code == 0, result.stderr
    return json.dumps(json.loads(result.stdout), sort_keys=True)


def test_a_copied_graph_never_loads_the_model_folder_it_names(graph_copy, run_cli, tmp_path):
    """A graph that came with a clone or a download names the model folder its vectors are from: a
    build must not load weights and code a file it cannot vouch for chose (issue 24's rule for
    sources, now for models). At eec7e4f the build embedded the question with that folder's model;
    now similarity is left out, saying why and how to allow it, until the user trusts the file."""
    vault, db = graph_copy
    folder = _model_folder(tmp_path / "shipped-model")
    _named_model(db, str(folder))
    here = run_cli("build", "how do I grow tomatoes", "--format", "json", db=db)
    assert "shipped-model" not in here.stderr and "similarity left out" not in _semantic(here)
    downloaded = tmp_path / "downloaded" / "graph.db"
    downloaded.parent.mkdir()
    downloaded.write_bytes(db.read_bytes())  # a new file: not born here
    copied = run_cli("build", "how do I grow tomatoes", "--format", "json", db=downloaded)
    said = _semantic(copied) + copied.stderr
    assert "names a model folder" in said and "ctx trust --db" in said
    assert run_cli("trust", db=downloaded).exit_code == 0
    trusted = run_cli("build", "how do I grow tomatoes", "--format", "json", db=downloaded)
    assert "names a model folder" not in _semantic(trusted) + trusted.stderr


def test_a_model_name_is_never_read_from_the_current_folder(graph_copy, run_cli, tmp_path, monkeypatch):
    """Run from inside a clone, a graph's model name must not resolve to a folder of the clone: the
    default's name (at eec7e4f a folder called all-MiniLM-L6-v2 in the current folder was loaded
    in place of the bundled model) nor any other stored name that is no absolute path."""
    vault, db = graph_copy
    elsewhere = run_cli("build", "how do I grow tomatoes", "--format", "json", db=db)
    clone = tmp_path / "clone"
    clone.mkdir()
    decoy = clone / DEFAULT_MODEL
    decoy.mkdir()
    (decoy / "config.json").write_text("{not json", encoding="utf-8")
    monkeypatch.chdir(clone)
    assert resolve_model(DEFAULT_MODEL).path == resolve_model(None).path != decoy.resolve()
    inside = run_cli("build", "how do I grow tomatoes", "--format", "json", db=db)
    assert _semantic(inside) == _semantic(elsewhere)
    _model_folder(clone / "org" / "model")
    _named_model(db, "org/model")
    relative = run_cli("build", "how do I grow tomatoes", "--format", "json", db=db)
    assert "never read from the current folder" in _semantic(relative) + relative.stderr
