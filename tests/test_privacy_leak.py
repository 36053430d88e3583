"""Leak test: private content never reaches any output of any command in any format.

Private nodes of every kind are planted next to the demo vault and the claims graph, each carrying a
unique marker word: a frontmatter-tagged note, an inline #private note, a `private: true` field, a
note below a private parent (Logseq page), and a private claim supporting a public one. Some also
carry tags, a type and field names that no public node has (NAME_MARKERS): a name only private
nodes use is private too (no public tag node, not in `stats`). Then every command (`build` with
every lens, topic and format, `--explain`; `search`; `show`; `stats`; the MCP tools), with and
without embeddings, must print none of the markers, while `--include-private` shows them (the
test can fail).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import FIXTURES

MARKERS = ("QUOKKAZEBRA7731", "PANGOLINFIG4402", "OKAPIMANGO9158", "NARWHALKIWI2290", "AXOLOTLPLUM5563")
# Names only private nodes carry (tags, types, field names): private too, so never printed either.
# Compared case-insensitively: tag nodes and headers may change the case.
NAME_MARKERS = ("quasartag", "nebulatype", "nebulafield", "cometlogtag", "orbittag", "stellarfield", "pulsartype")
LENSES = ("general", "planning", "writing", "coding", "meeting-prep", "claims", "workspace", "research", "question",
          "answer", "auto")
TOPICS = (
    "Secret Acquisition",  # a private note's exact title
    "p01",  # a private claim's id
    "zorblat",  # a word only private content contains (the markers themselves would be echoed back)
    "Public Memo",  # a public note that links to the private one
    "c06",  # a public claim a private claim supports
    "Project Apollo",
    "Board salary",  # words of the inline-#private note's title
    "Vault Plans",  # a private note with a private-only tag, type and field name
)


@pytest.fixture(scope="module")
def leaky_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ctx.importers.engine import import_path
    from ctx.store import connect

    root = tmp_path_factory.mktemp("leak")
    vault = root / "vault"
    shutil.copytree(FIXTURES / "demo-vault", vault)
    (vault / "Secret Acquisition.md").write_text(
        f"---\ntags: [private]\n---\n# Secret Acquisition\n\nWe plan to buy Northwind zorblat. {MARKERS[0]}.\n"
        "See [[Project Apollo]].\n", encoding="utf-8")
    (vault / "Public Memo.md").write_text(
        "# Public Memo\n\nBackground in [[Secret Acquisition]]; launch status in [[Project Apollo]].\n",
        encoding="utf-8")
    (vault / "Board salary review.md").write_text(
        f"# Board salary review\n\n#private Salaries for 2026 zorblat. {MARKERS[1]}\n", encoding="utf-8")
    (vault / "Health note.md").write_text(
        f"---\nprivate: true\ntype: pulsartype\n---\nMy doctor's appointment about Project Apollo stress. {MARKERS[2]}\n",
        encoding="utf-8")
    (vault / "Vault Plans.md").write_text(
        "---\ntags: [private, quasartag]\ntype: nebulatype\nnebulafield: \"[[Project Apollo]]\"\n---\n"
        "# Vault Plans\n\nHow Project Apollo moves to the new vault. #quasartag\n", encoding="utf-8")
    claims = root / "claims.jsonl"
    lines = (FIXTURES / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    lines.append(json.dumps({"id": "p01", "content": f"Leaked budget memo says the city will cut trees. {MARKERS[3]}",
                             "type": "reference", "tags": ["private", "orbittag"], "supports": ["c06"],
                             "fields": {"stellarfield": "yes"},
                             "updated": "2026-04-06T10:00:00Z"}))
    claims.write_text("\n".join(lines) + "\n", encoding="utf-8")
    logseq = root / "logseq" / "pages"
    logseq.mkdir(parents=True)
    (logseq / "Diary.md").write_text(
        f"- Public thoughts about Project Apollo\n- Private thoughts #private\n  - nested detail {MARKERS[4]} #cometlogtag\n",
        encoding="utf-8")
    db = root / "g.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    import_path(conn, claims)
    import_path(conn, root / "logseq", format="logseq")
    assert conn.execute("SELECT COUNT(*) FROM nodes WHERE private = 1").fetchone()[0] >= 5
    conn.close()
    return db


def assert_clean(text: str, where: str) -> None:
    for marker in MARKERS:
        assert marker not in text, f"{marker} leaked in {where}"
    lowered = text.lower()
    for name in NAME_MARKERS:
        assert name not in lowered, f"the private-only name {name!r} leaked in {where}"


@pytest.mark.parametrize("lens", LENSES)
def test_build_never_shows_private_content(run_cli, leaky_db, lens):
    for topic in TOPICS:
        for fmt in ("markdown", "json"):
            for budget in ("300", "4000"):
                result = run_cli("build", topic, "--lens", lens, "--format", fmt, "--max-tokens", budget,
                                 "--explain", db=leaky_db)
                assert result.exit_code in (0, 3), result.stderr
                assert_clean(result.stdout + result.stderr, f"build {topic!r} --lens {lens} {fmt} {budget}")


def test_search_show_stats_never_show_private_content(run_cli, leaky_db):
    for fmt in ("text", "json"):
        for query in ("zorblat", "Secret Acquisition", "Board salary", "budget memo", "private thoughts", "nested detail"):
            result = run_cli("search", query, "--format", fmt, db=leaky_db)
            assert_clean(result.stdout + result.stderr, f"search {query!r} {fmt}")
        for node in ("Secret Acquisition", "p01", "Board salary review", "Health note", "Public Memo", "c06",
                     "Project Apollo", "Vault Plans"):
            result = run_cli("show", node, "--format", fmt, db=leaky_db)
            assert_clean(result.stdout + result.stderr, f"show {node!r} {fmt}")
        result = run_cli("stats", "--format", fmt, db=leaky_db)
        assert_clean(result.stdout + result.stderr, f"stats {fmt}")


def test_mcp_tools_never_show_private_content(leaky_db):
    pytest.importorskip("mcp")
    from ctx.mcp_server import CtxTools

    tools = CtxTools(leaky_db)
    replies = []
    for topic in TOPICS:
        for lens in ("general", "claims", "research"):
            for fmt in ("markdown", "json"):
                replies.append(tools.context(topic, lens=lens, format=fmt, explain=True))
    for query in ("zorblat", "Secret Acquisition", "nested detail"):
        replies += [tools.search(query), tools.search(query, format="json")]
    for node in ("Secret Acquisition", "p01", "Health note"):
        replies += [tools.show(node), tools.show(node, format="json")]
    for reply in replies:
        assert_clean(reply.text + "".join(reply.warnings) + "".join(getattr(reply, "extra", []) or []), "mcp")


def test_names_only_private_nodes_carry_are_not_found_either(run_cli, leaky_db):
    """Asked for by name (the reply echoes the name, so look at what is found, not at the text)."""
    for name in NAME_MARKERS:
        found = json.loads(run_cli("search", name, "--format", "json", db=leaky_db).stdout)
        assert found["count"] == 0, (name, found["results"])
        for node in (name, f"#{name}", f"tag:{name}"):
            assert run_cli("show", node, db=leaky_db).exit_code == 3, node
        built = run_cli("build", f"#{name}", "--format", "json", db=leaky_db)
        assert built.exit_code == 3, (name, built.stdout[:300])
    stats = json.loads(run_cli("stats", "--format", "json", db=leaky_db).stdout)
    assert stats["private_edges"] > 0 and sum(stats["edges"].values()) + stats["private_edges"] == stats["edges_total"]
    assert sum(stats["nodes_by_type"].values()) + stats["private_nodes"] == stats["nodes"]
    # The names are really in the graph: --include-private finds them (so this test can fail).
    shown = run_cli("show", "tag:quasartag", "--include-private", db=leaky_db)
    assert shown.exit_code == 0 and "Vault Plans" in shown.stdout
    everything = run_cli("stats", "--include-private", db=leaky_db).stdout
    assert all(name in everything for name in ("nebulatype", "pulsartype", "field:nebulafield"))


def test_nothing_says_how_many_private_nodes_a_topic_touched(run_cli, leaky_db):
    # A count of the private nodes a topic matches or touches is a function of private text
    # (issue 24, H1); tests/test_privacy_oracle.py checks the whole property.
    for argv in (("build", "Public Memo"), ("build", "Public Memo", "--max-tokens", "250"),
                 ("build", "c06", "--lens", "claims", "--format", "json"), ("build", "zorblat", "--format", "json")):
        out = run_cli(*argv, db=leaky_db)
        assert "withheld" not in out.stdout and "private" not in out.stderr
    doc = json.loads(run_cli("build", "c06", "--lens", "claims", "--format", "json", db=leaky_db).stdout)
    assert "p01" not in doc["nodes"][0]["neighbours"].get("supported_by", [])


def test_include_private_shows_them_so_this_test_can_fail(run_cli, leaky_db):
    out = run_cli("build", "Secret Acquisition", "--include-private", db=leaky_db).stdout
    assert MARKERS[0] in out
    out = run_cli("build", "c06", "--lens", "claims", "--include-private", "--max-tokens", "8000", db=leaky_db).stdout
    assert MARKERS[3] in out
    assert "Secret Acquisition" in run_cli("search", "zorblat", "--include-private", db=leaky_db).stdout


def test_similarity_never_brings_private_nodes_back(run_cli, leaky_db, tmp_path):
    """Private nodes get exactly the topic's vector (similarity 1.0): the first semantic extras if
    anything let them through. Fake vectors, no model: id topics use the seeds' stored vectors."""
    import numpy as np

    from ctx.store import vectors
    from ctx.store import connect

    from conftest import copy_graph

    db = copy_graph(leaky_db, tmp_path / "vectors.db")
    conn = connect(db)
    rng = np.random.default_rng(11)
    rows, topic_vectors = [], {}
    for node_id, content_hash in conn.execute("SELECT id, content_hash FROM nodes ORDER BY id"):
        v = rng.standard_normal(16).astype(np.float32)
        rows.append([node_id, content_hash, v / np.linalg.norm(v)])
        topic_vectors[node_id] = rows[-1][2]
    private = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE private = 1")}
    # Tag nodes of private-only tags too, whether or not the graph flags them.
    private |= {f"tag:{name}" for name in NAME_MARKERS}
    for row in rows:
        if row[0] in private:
            row[2] = topic_vectors["c06"]
    with conn:
        vectors.write_vectors(conn, "fake", [tuple(r) for r in rows])
        vectors.set_active_model(conn, "fake")
    conn.close()
    for lens in ("claims", "workspace", "general"):
        for fmt in ("markdown", "json"):
            result = run_cli("build", "c06", "--lens", lens, "--format", fmt, "--max-tokens", "6000", db=db)
            assert result.exit_code == 0, result.stderr
            assert_clean(result.stdout + result.stderr, f"build c06 --lens {lens} {fmt} with vectors")
    doc = json.loads(run_cli("build", "c06", "--lens", "claims", "--format", "json", "--max-tokens", "6000",
                             "--include-private", db=db).stdout)
    assert any(n["section"] == "Semantic context" for n in doc["nodes"])  # similarity is really on
