"""``scoring.diversity``: maximal marginal relevance over word overlap. A near-duplicate of a node
ranked above it gives way to a node about something else; 0 leaves the ranking alone. Real SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from semantic_vault import write_vault

from ctx.assemble import BuildRequest, build_context
from ctx.assemble.score import overlap, word_set
from ctx.importers.engine import import_path
from ctx.lenses import LensError, load_lens, parse_lens
from ctx.store import connect

PULSAR = "A pulsar is a rotating neutron star that emits beams of electromagnetic radiation from its poles."

NOTES = {
    "Hub.md": "Objects of the sky: [[A Pulsar]], [[B Pulsar beams]] and [[C Volcano]].\n",
    "A Pulsar.md": f"{PULSAR}\n",
    "B Pulsar beams.md": f"{PULSAR} The beams sweep past Earth like a lighthouse.\n",
    "C Volcano.md": "Olympus Mons on Mars is the tallest volcano known, built by lava flows over ages.\n",
    "D Secret.md": "---\ntags: [private]\n---\n[[Hub]] A rotating neutron star note, kept private.\n",
}


@pytest.fixture
def graph(tmp_path: Path):
    conn = connect(tmp_path / "graph.db", create=True)
    import_path(conn, write_vault(tmp_path / "vault", NOTES))
    return conn


def _lens(tmp_path: Path, diversity: float) -> str:
    data = {
        "name": f"diversity-{diversity}",
        "depth": 1,
        "edges": {"link": {"direction": "both", "weight": 1.0}},
        "sections": [{"name": "Sources", "select": "rest"}],
        "scoring": {
            "distance": 1.0, "similarity": 0.0, "recency": 0.0, "diversity": diversity,
            "fallback": {"distance": 1.0, "recency": 0.0},
        },
        "output": {"metadata": False, "show_scores": False, "also_related": False, "summary_below": 0},
    }
    path = tmp_path / f"diversity-{diversity}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _order(conn, lens: str) -> list[str]:
    request = BuildRequest(topics=("Hub",), lens=lens, max_tokens=4000, include_fields=False)
    rows = build_context(conn, request).candidates
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    return [r["id"] for r in rows]


def test_word_overlap_is_a_cosine_of_word_sets():
    a = word_set("A Pulsar", PULSAR)
    assert overlap(a, a) == pytest.approx(1.0)
    assert overlap(a, word_set("C Volcano", NOTES["C Volcano.md"])) == 0.0
    assert overlap(a, frozenset()) == 0.0
    assert {"pulsar", "its"} <= a and "is" not in a  # words of three letters or more, lower-cased


def test_diversity_demotes_a_near_duplicate_below_a_distinct_node(graph, tmp_path):
    # Equal scores (all one hop from the seed): without diversity, ties break by id.
    assert _order(graph, _lens(tmp_path, 0.0)) == ["Hub", "A Pulsar", "B Pulsar beams", "C Volcano"]
    lens = _lens(tmp_path, 0.2)
    assert _order(graph, lens) == ["Hub", "A Pulsar", "C Volcano", "B Pulsar beams"]
    request = BuildRequest(topics=("Hub",), lens=lens, max_tokens=4000, format="json", include_fields=False)
    parts = {n["id"]: n["score_parts"] for n in json.loads(build_context(graph, request).text)["nodes"]}
    assert parts["C Volcano"]["redundancy"] < parts["B Pulsar beams"]["redundancy"]


def test_diversity_is_deterministic_and_never_involves_private_nodes(graph, tmp_path):
    lens = _lens(tmp_path, 0.2)
    first = build_context(graph, BuildRequest(topics=("Hub",), lens=lens, max_tokens=4000, include_fields=False))
    again = build_context(graph, BuildRequest(topics=("Hub",), lens=lens, max_tokens=4000, include_fields=False))
    assert first.text == again.text
    assert "D Secret" not in [r["id"] for r in first.candidates] and "neutron star note" not in first.text


def test_lens_validation_rejects_out_of_range_diversity():
    for value in (-0.1, 1.5, "high"):
        with pytest.raises(LensError) as err:
            parse_lens({"scoring": {"diversity": value}}, where="test", name="bad", source="file")
        assert "scoring.diversity" in str(err.value)
    assert parse_lens({}, where="test", name="plain", source="file").scoring.diversity == 0.0


def test_only_the_question_lens_turns_it_on():
    builtin = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "lenses").glob("*.yaml"))
    assert "question" in builtin and len(builtin) > 1
    for name in builtin:
        assert load_lens(name).scoring.diversity == (0.2 if name == "question" else 0.0), name
