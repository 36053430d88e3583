"""Stored paragraph vectors (issue 23): ``ctx embed`` gives each paragraph of a log note's
multi-paragraph passage a vector of its own (``ctx.assemble.paragraph_vectors``), keyed by the
passage's text hash and the paragraph's; builds lend a passage the rank of its nearest paragraphs
(``passage_rank._by_paragraphs``).

A real vault on disk, imported and embedded with the default model (offline). The lab notebook
below is a log (timed session headings) of short sessions, which the splitter joins into
passages of one or two sessions; its paragraphs are separated by blank lines. The page about
pipettes is not a log: none of its paragraphs get a vector.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import bench_module, memory_set
from ctx.assemble import BuildRequest, build_context
from ctx.tokens import count_tokens

FILLER = [
    "Restocked gloves and tips; we are low on the small ones again and the order goes out on Friday with the rest of the consumables for the teaching lab.",
    "Cleaned the water bath and changed the water; it had started to smell, so the thermostat was checked too and it reads two degrees under the dial.",
    "The centrifuge rotor came back from service with a new lid seal, and the technician left a note about balancing tubes by weight rather than by volume.",
    "Seminar on field methods in the afternoon; good questions about replication and about how many plots are enough for a survey of this size.",
    "Ordered a replacement stir bar set because the old ones lost their coating, and threw out the cracked beakers from the bottom shelf of the cupboard.",
    "Read two papers on sampling bias over lunch; one of them is useful for the methods section and the other repeats what we already knew.",
    "Ran the weekly backup of the analysis folder to the network drive, which took longer than usual because of the new microscope images from Tuesday.",
    "Tidied the freezer rack and labelled the boxes by project; sixteen unlabelled tubes went into the waste after asking around the group.",
]
# Session i holds these paragraphs of FILLER (the last session: one paragraph only).
SESSIONS = [(0, 1, 2), (3, 4), (5, 6, 7), (2, 5), (1,)]


def _notebook(sessions=SESSIONS, filler=FILLER) -> str:
    parts = ['---\ntitle: "Bench book, entry 1"\n---\n']
    for i, paras in enumerate(sessions):
        parts.append(f"### {9 + i}:{10 + i}\n\n" + "\n\n".join(filler[j] for j in paras) + "\n")
    return "\n".join(parts)


PIPETTES = """# Pipettes

## Calibrating pipettes

Pipettes are calibrated every six months by weighing water on the balance in room two, ten times at each volume, and the mean and spread are written in the pipette's log.

A pipette that fails calibration is labelled with red tape and sent out for service; the spare set in the drawer under the balance is used until it comes back.

## Choosing pipettes

Pipettes for viscous liquids are positive displacement pipettes, kept in the cold room cabinet with their own tips, because air displacement pipettes draw too little of a viscous liquid.

Pipettes with filter tips keep aerosols out of the shaft, and the filter tips are used for everything that goes near the PCR bench, without exception, all year.
"""


def _passage_paragraphs(db) -> list[list[str]]:
    """The notebook's passages as the graph holds them, each as its paragraphs (blank-line
    separated, headings left out), read with a plain split rather than ctx's own."""
    conn = sqlite3.connect(db)
    try:
        texts = [r[0] for r in conn.execute("SELECT text FROM passage_texts WHERE node_id = 'entry' ORDER BY id")]
    finally:
        conn.close()
    return [[p.strip() for p in t.split("\n\n") if p.strip() and not p.lstrip().startswith("#")] for t in texts]


def _expected(db) -> tuple[set[str], int]:
    """The distinct paragraphs of the notebook's passages holding two or more, and the rows
    stored for them (one per passage and paragraph)."""
    multi = [paras for paras in _passage_paragraphs(db) if len(paras) >= 2]
    return {p for paras in multi for p in paras}, sum(len(paras) for paras in multi)


def _count(db) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM paragraph_vectors").fetchone()[0]
    finally:
        conn.close()


def _embed(db):
    from ctx.assemble.paragraph_vectors import pending
    from ctx.semantic.embedding import embed_graph
    from ctx.semantic.models import resolve_model
    from ctx.store import connect

    conn = connect(db)
    try:
        return embed_graph(conn, resolve_model(None), paragraphs=pending)
    finally:
        conn.close()


def _import(db, notes):
    from ctx.importers.engine import import_path
    from ctx.store import connect

    conn = connect(db, create=True)
    try:
        import_path(conn, notes)
    finally:
        conn.close()


@pytest.fixture
def vault(tmp_path):
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "entry.md").write_text(_notebook())
    (notes / "pipettes.md").write_text(PIPETTES)
    db = tmp_path / "graph.db"
    _import(db, notes)
    return notes, db


def test_embed_writes_a_vector_for_each_paragraph_of_a_log_s_multi_paragraph_passages(vault):
    notes, db = vault
    report = _embed(db)
    distinct, rows = _expected(db)
    # Every FILLER paragraph is in some session of two or more; 2 and 5 occur twice, 1 twice
    # once the last session (1,) joins the one before it in a passage.
    assert distinct == set(FILLER)
    assert report.paragraphs == len(distinct)  # each text embedded once
    assert _count(db) == rows > len(distinct)  # and stored for every passage holding it
    # Nothing left to do: a second run embeds nothing.
    again = _embed(db)
    assert again.paragraphs == 0 and _count(db) == rows


def test_editing_one_paragraph_re_embeds_only_it(vault):
    notes, db = vault
    _embed(db)
    edited = list(FILLER)
    edited[3] = "Seminar on field methods moved to Thursday; the speaker asked for a projector that takes the new cable and a pointer."
    (notes / "entry.md").write_text(_notebook(filler=edited))
    _import(db, notes)
    report = _embed(db)
    assert report.paragraphs == 1  # paragraph 3's new text; its passage's others are copied
    assert report.passages == 1  # the session's passage
    assert _count(db) == _expected(db)[1]  # the old passage's rows pruned


def test_a_stale_paragraph_vector_is_never_read(vault):
    """Edited but not embedded again: the passage's hash moved, so none of its old paragraph
    vectors is read for it (the unchanged sessions keep theirs)."""
    from ctx.semantic.models import resolve_model
    from ctx.store import connect

    notes, db = vault
    _embed(db)
    stored = _expected(db)[1]
    edited = list(FILLER)
    edited[6] = "Ran the backup by hand: the network drive was full and the job had failed silently since Monday."
    (notes / "entry.md").write_text(_notebook(filler=edited))
    _import(db, notes)
    conn = connect(db)
    try:
        owners, _, _, matrix = conn_reader(conn).paragraph_vectors(resolve_model(None).name)
        texts = {r[0]: r[1] for r in conn.execute("SELECT id, text FROM passage_texts")}
    finally:
        conn.close()
    # The passage holding paragraph 6 is left out with all its paragraphs.
    moved = [paras for paras in _passage_paragraphs(db) if edited[6] in paras]
    assert len(moved) == 1
    assert matrix.shape[0] == len(owners) == stored - len(moved[0])
    assert not any("backup" in texts[pid] for pid in owners)


def conn_reader(conn):
    from ctx.store import as_store

    return as_store(conn).reader(include_private=True)


def _dated_notes(date: str | None) -> str:
    """The notebook dated by a ``date`` field (``date`` None: no field) under headings that say
    no time, so the field alone makes it a log worth paragraph vectors."""
    text = _notebook().replace('---\ntitle:', f"---\ndate: {date}\ntitle:" if date else "---\ntitle:", 1)
    for i in range(len(SESSIONS)):
        text = text.replace(f"### {9 + i}:{10 + i}\n", f"### Part {'ABCDE'[i]}\n")
    return text


def test_a_note_no_longer_a_log_loses_its_paragraph_vectors(tmp_path):
    """The ``date`` field taken out of a dated log: its passages' texts (and hashes) are the same,
    but it is no longer a log, so ``ctx embed`` drops their paragraph vectors and builds never
    lend by them (at 27552df they stayed, were counted and ranked with)."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    from ctx.semantic.models import resolve_model
    from ctx.store import connect

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "entry.md").write_text(_dated_notes("2026-03-02"))
    db = tmp_path / "graph.db"
    _import(db, notes)
    _embed(db)
    dated = _expected(db)[1]
    assert dated > 0 and _count(db) == dated
    (notes / "entry.md").write_text(_dated_notes(None))
    _import(db, notes)
    assert _expected(db)[1] == dated  # the same passages, hashes and all
    report = _embed(db)
    assert report.paragraphs == 0
    assert _count(db) == 0
    conn = connect(db)
    try:
        assert conn_reader(conn).paragraph_vectors(resolve_model(None).name)[0] == []
    finally:
        conn.close()
    # Dated again: its paragraphs are embedded again.
    (notes / "entry.md").write_text(_dated_notes("2026-03-03"))
    _import(db, notes)
    assert _embed(db).paragraphs == len(FILLER) and _count(db) == dated


def _copies(root, private_log: bool):
    """The pipettes page and a public copy of the notebook with no ``date`` (not a log); with
    ``private_log``, also a private copy dated by its field, under another folder. The two copies
    share their title and text, so their passages share their hashes: the key of the paragraph
    vectors only the dated copy should have."""
    notes = root / ("with" if private_log else "without")
    (notes / "public").mkdir(parents=True)
    (notes / "pipettes.md").write_text(PIPETTES)
    (notes / "public" / "entry.md").write_text(_dated_notes(None))
    if private_log:
        (notes / "mine").mkdir()
        (notes / "mine" / "entry.md").write_text(_dated_notes("2026-03-02").replace("---\n", "---\nprivate: true\n", 1))
    db = root / f"{notes.name}.db"
    _import(db, notes)
    _embed(db)
    return db


def test_a_private_log_lends_nothing_to_a_public_copy_of_its_text(tmp_path, monkeypatch):
    """A private dated log and a public copy of it that is not a log (no date): the paragraph
    vectors stored for the log's passages (keyed by passage text) must not rank the copy, nor be
    counted by ``ctx stats``: without --include-private every output is the graph's without its
    private notes (docs/configuration.md). At 27552df the copy's passages took the log's
    paragraph ranks (its build changed) and ctx stats counted the private log's paragraphs."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    from ctx.graph import Graph
    from ctx.inspection import stats_report

    # float32: vectors that do not depend on which other texts shared their batch.
    monkeypatch.setenv("CTX_EMBED_PRECISION", "fp32")
    with_log, without = _copies(tmp_path, True), _copies(tmp_path, False)
    assert _count(with_log) > 0 and _count(without) == 0
    seen = {}
    for db in (with_log, without):
        graph = Graph.open(db)
        try:
            stats = json.loads(stats_report(graph, fmt="json").text)["embeddings"]["paragraph_vectors"]
            texts = tuple(graph.build(q, max_tokens=t).text for q in ("stir bar coating", "freezer rack labels", "sampling bias papers")
                          for t in (150, 300))
            seen[db] = (texts, stats)
        finally:
            graph.close()
    assert seen[with_log][0] == seen[without][0]  # every build
    assert seen[with_log][1] == seen[without][1] == 0  # ctx stats


def test_stats_count_the_paragraph_vectors(vault):
    from ctx.graph import Graph
    from ctx.inspection import stats_report

    _, db = vault
    _embed(db)
    graph = Graph.open(db)
    try:
        data = json.loads(stats_report(graph, fmt="json").text)
    finally:
        graph.close()
    assert data["embeddings"]["paragraph_vectors"] == _expected(db)[1]


def test_stats_count_no_private_log_s_paragraphs_unless_asked(tmp_path):
    """A private log's paragraph count is its shape; ``ctx stats`` without --include-private says
    nothing of it, as it says nothing of the private notes' vectors."""
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    from ctx.graph import Graph
    from ctx.inspection import stats_report

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "entry.md").write_text(_notebook().replace("---\ntitle:", "---\nprivate: true\ntitle:", 1))
    db = tmp_path / "graph.db"
    _import(db, notes)
    _embed(db)
    stored = _expected(db)[1]
    assert stored > 0 and _count(db) == stored
    counted = {}
    for include_private in (False, True):
        graph = Graph.open(db, include_private=include_private)
        try:
            counted[include_private] = json.loads(stats_report(graph, fmt="json").text)["embeddings"]["paragraph_vectors"]
        finally:
            graph.close()
    assert counted == {False: 0, True: stored}


def test_a_graph_from_before_paragraph_vectors_is_migrated(vault):
    """A graph at schema 18 (no paragraph vectors table) opens migrated, builds as before, and
    ``ctx embed`` gives it paragraph vectors."""
    from ctx.store import connect
    from ctx.store.migrations import MIGRATIONS

    notes, db = vault
    _embed(db)
    conn = sqlite3.connect(db)
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'paragraph_vectors'"
    ).fetchall():
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE paragraph_vectors")
    conn.execute("PRAGMA user_version = 18")
    conn.commit()
    conn.close()
    graph = connect(db)
    try:
        assert graph.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) >= 19
        assert graph.execute("SELECT COUNT(*) FROM paragraph_vectors").fetchone()[0] == 0
        text = build_context(graph, BuildRequest(("stir bar coating",), max_tokens=1000)).text
        assert "stir bar" in text
    finally:
        graph.close()
    assert _embed(db).paragraphs == len(FILLER) and _count(db) == _expected(db)[1]


# -- a question answered by one paragraph of a long log passage ------------------------------------

factcheck = bench_module("factcheck")

SEED = 21
QUESTION_ID = "s21-089"


@pytest.fixture(scope="module")
def lab_notes(tmp_path_factory):
    questions, (conn,) = memory_set(tmp_path_factory, "memory_logs2", SEED, True)
    return questions[QUESTION_ID], conn


def test_the_paragraph_that_answers_finds_its_passage_at_a_small_budget(lab_notes):
    """Memory set 21 (memory_logs2: a stand-up log, a lab notebook and a mail digest, one note per
    session; the set test_embedded_log_standing reads too, so the suite embeds it once). "On which
    day did Ilse find the cause of the trouble with the hedge planting?": its answer is one
    paragraph of a digest message whose passage's one vector speaks for several; with that
    paragraph's own vector it is in a 1,000-token context, and without (main 49156e8, or today's
    graph with its paragraph vectors deleted) it was not. (Set 50's s50-003, the rate limiter's
    cause, showed the same until the suite moved here.)"""
    question, conn = lab_notes
    assert conn.execute("SELECT COUNT(*) FROM paragraph_vectors").fetchone()[0] > 0
    text = build_context(conn, BuildRequest((question["question"],), max_tokens=1000)).text
    assert count_tokens(text) <= 1000
    context = factcheck.normalise(text)
    assert all(factcheck.normalise(e) in context for e in question["evidence"])


def test_a_vector_of_the_wrong_size_is_one_clear_error_and_ctx_embed_repairs_it(tmp_path_factory, run_cli):
    """A damaged file's vector of the wrong size (one node, one passage -- the model's and the first
    stage's -- and one paragraph vector of set 21's embedded graph, cut to one float): at 1fdd446 every free-text build failed with
    'internal error: ValueError: cannot reshape', and `ctx embed` -- the repair `ctx doctor`
    names -- called every vector unchanged and rewrote none, so the graph stayed broken. Now the
    build says what is wrong and what to do in one line, and `ctx embed` embeds exactly those four
    again: the build is then byte for byte the undamaged graph's."""
    from ctx.errors import CtxError

    questions, (conn, sound) = memory_set(tmp_path_factory, "memory_logs2", SEED, True, True)
    request = BuildRequest((questions[QUESTION_ID]["question"],), max_tokens=1000)
    expected = build_context(sound, request).text
    path = conn.execute("PRAGMA database_list").fetchone()[2]
    model = conn.execute("SELECT model FROM embeddings LIMIT 1").fetchone()[0]
    for table, of in (("embeddings", model), ("passage_vectors", model), ("passage_vectors", f"{model}@static1"),
                      ("paragraph_vectors", model)):
        conn.execute(f"UPDATE {table} SET vector = x'0000803f'"
                     f" WHERE rowid = (SELECT MIN(rowid) FROM {table} WHERE model = ?)", (of,))
    with pytest.raises(CtxError, match=r"vectors of the wrong size .*`ctx doctor` lists them; `ctx embed` embeds them"):
        build_context(conn, request)
    conn.close()
    assert run_cli("doctor", "--db", path).exit_code == 1
    embedded = run_cli("embed", "--db", path, "--quiet", "--output", "json")
    assert embedded.exit_code == 0, embedded.stderr
    summary = json.loads(embedded.stdout)
    assert (summary["embedded"], summary["passages_embedded"], summary["paragraphs_embedded"]) == (1, 1, 1)
    assert summary["static_passages"] == 1  # the first stage's vector too
    assert run_cli("doctor", "--db", path).exit_code == 0
    from ctx.store import connect

    repaired = connect(path)
    try:
        assert build_context(repaired, request).text == expected
    finally:
        repaired.close()
