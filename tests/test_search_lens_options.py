"""Lens options for search-driven builds: title mentions as seeds, protected seeds, fused search
relevance with name feedback, and the header ceiling. Real SQLite graphs; fake vectors (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ctx.assemble import BuildRequest, build_context
import ctx.assemble.relevance as relevance
from ctx.assemble.relevance import feedback_query, names_in
from ctx.importers.engine import import_path
from ctx.lenses import LensError, parse_lens
from ctx.store import vectors
from ctx.store import connect
from ctx.store.reads import find_mentions
from ctx.store.view import GraphView
from ctx.tokens import get_encoding

LONG = " ".join(["The chain opened another store in a new town that year."] * 40)

NOTES = {
    "Hello Love (song).md": "Hello Love is a country song recorded by Hank Snow in 1974.\n",
    "Publix.md": f"Publix is an employee-owned supermarket chain. {LONG}\n",
    "Supermarket stores.md": "Supermarket stores counted by state: a table of stores per state.\n",
    "Who.md": "A British rock band; a note whose title is a function word.\n",
    "Secret Plan.md": "---\ntags: [private]\n---\nNothing to see.\n",
    "Brand (play).md": "Brand is a verse play by the Norwegian dramatist Henrik Ibsen, written in 1865.\n",
    "Henrik Ibsen.md": "Henrik Ibsen was a playwright and theatre director, the father of modern drama.\n",
    "Verse drama.md": "Verse drama is any drama written as poetry to be spoken.\n",
    "Poetry.md": "Poetry is literature that uses aesthetic qualities of language.\n",
}

QUESTION = "How many supermarket stores of Publix are in the state where Hello Love's performer died?"


@pytest.fixture
def graph(tmp_path: Path):
    vault = tmp_path / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    db = tmp_path / "graph.db"
    conn = connect(db, create=True)
    import_path(conn, vault)
    return conn


def _lens(tmp_path: Path, **sections) -> str:
    data = {
        "name": "search-test",
        "depth": 0,
        "sections": [{"name": "Sources", "select": "rest"}],
        "scoring": {"distance": 1.0, "similarity": 0.0, "recency": 0.0, "fallback": {"distance": 1.0, "recency": 0.0}},
        "output": {"metadata": False, "show_scores": False, "also_related": False, "summary_below": 0},
    }
    for key, value in sections.items():
        data.setdefault(key, {})
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    path = tmp_path / "search-test.yaml"
    import yaml

    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


def _build(conn, lens: str, topic: str, max_tokens: int = 4000, fmt: str = "json"):
    request = BuildRequest(topics=(topic,), lens=lens, max_tokens=max_tokens, format=fmt, include_fields=False)
    return build_context(conn, request)


def _nodes(result) -> dict[str, dict]:
    return {n["id"]: n for n in json.loads(result.text)["nodes"]}


def test_mentions_are_titles_named_in_the_text(graph):
    # A trailing disambiguator is optional and a possessive is not part of the name; a title made of
    # function words names nothing; private notes are never found; longest name first.
    assert find_mentions(graph, QUESTION) == ["Supermarket stores", "Hello Love (song)", "Publix"]
    assert find_mentions(graph, "who wrote it, and what is the secret plan?") == []
    assert find_mentions(graph, "the secret plan", include_private=True) == ["Secret Plan"]
    assert find_mentions(graph, "Publixes and lovers") == []  # word-bounded


def test_seeds_mentions_adds_the_named_notes_as_seeds(graph, tmp_path):
    without = json.loads(_build(graph, _lens(tmp_path, seeds={"max": 1}), QUESTION).text)
    with_mentions = json.loads(_build(graph, _lens(tmp_path, seeds={"max": 1, "mentions": True}), QUESTION).text)
    seeds_before = [r["ids"] for r in without["meta"]["resolved"]][0]
    seeds_after = [r["ids"] for r in with_mentions["meta"]["resolved"]][0]
    assert len(seeds_before) == 1
    assert seeds_after[:1] == seeds_before
    assert set(seeds_after) == set(seeds_before) | {"Supermarket stores", "Hello Love (song)", "Publix"}
    # An exact-title topic stays one seed: mentions only widen free-text topics.
    exact = json.loads(_build(graph, _lens(tmp_path, seeds={"mentions": True}), "Hello Love (song)").text)
    assert exact["meta"]["resolved"][0]["ids"] == ["Hello Love (song)"]


def test_seeds_protect_drops_an_unprotected_seed_instead_of_shortening_it(graph, tmp_path):
    topic = "Hello Love (song) and Publix"
    lens_all = _lens(tmp_path, seeds={"max": 1, "mentions": True})
    every = {r["id"]: r["decision"] for r in _build(graph, lens_all, topic, max_tokens=150).candidates}
    assert every["Publix"] == "shortened"  # every seed is kept, cut to fit
    lens_one = _lens(tmp_path, seeds={"max": 1, "mentions": True, "protect": 1})
    result = _build(graph, lens_one, topic, max_tokens=150)
    decisions = {r["id"]: r["decision"] for r in result.candidates}
    first = result.meta["resolved"][0]["ids"][0]
    assert first != "Publix" and decisions[first] in ("full", "shortened")
    assert decisions["Publix"] == "dropped"  # too long to fit whole, and not protected: left out
    assert decisions["Hello Love (song)"] == "full"
    assert result.meta["tokens"]["used"] <= 150


def _fake_vectors(conn) -> None:
    """Brand's nearest vectors are the drama notes; Henrik Ibsen's vector is far from it."""
    axes = {"Brand (play)": 0, "Verse drama": 0, "Poetry": 0, "Henrik Ibsen": 3}
    lean = {"Verse drama": (1, 0.3), "Poetry": (2, 0.6)}
    rows = []
    for node_id, content_hash in conn.execute("SELECT id, content_hash FROM nodes ORDER BY id"):
        v = np.zeros(8, dtype=np.float32)
        v[axes.get(node_id, 5)] = 1.0
        if node_id in lean:
            axis, amount = lean[node_id]
            v[axis] = amount
        rows.append((node_id, content_hash, v / np.linalg.norm(v)))
    vectors.write_vectors(conn, "fake", rows)
    vectors.set_active_model(conn, "fake")


def test_names_feedback_widens_the_full_text_query(graph):
    assert names_in("# Brand\n\nBrand is a play by Henrik Ibsen. The end.", {"brand"}) == ["Henrik", "Ibsen"]
    view = GraphView(graph)
    assert feedback_query(view, "Brand (play)", ["Brand (play)"], 0) == "Brand (play)"
    assert feedback_query(view, "Brand (play)", ["Brand (play)"], 1) == "Brand (play) Norwegian Henrik Ibsen"


def test_feedback_leaves_out_names_found_in_many_notes(graph, monkeypatch):
    """A name is worth widening the search by only while it picks out a few notes: "Henrik" is in
    two notes here and "Norwegian" in one, so a limit of one note keeps only "Norwegian"."""
    view = GraphView(graph)
    assert view.notes_matching("Henrik", at_most=100) == 2
    assert view.notes_matching("Norwegian", at_most=100) == 1
    assert view.notes_matching("Henrik", at_most=1) == 1  # counted no further than asked
    assert view.notes_matching("Plan", at_most=100) == 0  # only in a private note: not counted
    monkeypatch.setattr(relevance, "FEEDBACK_MAX_NOTES", 1)
    assert feedback_query(view, "Brand (play)", ["Brand (play)"], 1) == "Brand (play) Norwegian"


def test_fused_rank_with_feedback_finds_the_note_sharing_a_name_with_the_seed(graph, tmp_path):
    _fake_vectors(graph)
    fused = {"top_k": 1, "min_similarity": 0.0, "rank": "fused", "rrf_k": 5}
    scoring = {"distance": 0.4, "similarity": 0.0, "recency": 0.0, "relevance": 1.0}
    plain = _nodes(_build(graph, _lens(tmp_path, semantic=fused, scoring=scoring), "Brand (play)"))
    assert set(plain) == {"Brand (play)", "Verse drama"}  # nearest vector, no shared words
    widened = _build(graph, _lens(tmp_path, semantic={**fused, "feedback": 1}, scoring=scoring), "Brand (play)")
    nodes = _nodes(widened)
    assert set(nodes) == {"Brand (play)", "Henrik Ibsen"}
    # Relevance is a share of the best fused hit: the seed, first in both rankings.
    assert nodes["Brand (play)"]["score_parts"]["relevance"] == 1.0
    assert 0 < nodes["Henrik Ibsen"]["score_parts"]["relevance"] < 1
    meta = json.loads(widened.text)["meta"]
    assert meta["scoring"]["weights"]["relevance"] == 1.0
    # Lenses that do not weigh relevance keep their score parts and weights as they were.
    default = json.loads(_build(graph, _lens(tmp_path), "Brand (play)").text)
    assert "relevance" not in default["meta"]["scoring"]["weights"]
    assert all("relevance" not in n["score_parts"] for n in default["nodes"])


def test_output_header_minimal_is_one_short_line(graph, tmp_path):
    full = _build(graph, _lens(tmp_path), "Brand (play)", fmt="markdown").text
    minimal = _build(graph, _lens(tmp_path, output={"header": "minimal"}), "Brand (play)", fmt="markdown").text
    assert full.startswith("# Context: Brand (play)\nlens: search-test")
    first = minimal.splitlines()[0]
    assert first.startswith("# Brand (play) (") and first.endswith("/4000 tokens)")
    enc = get_encoding("cl100k_base")
    assert len(enc.encode(minimal)) < len(enc.encode(full))
    assert f"({len(enc.encode(minimal))}/4000 tokens)" in first  # the count is still exact


@pytest.mark.parametrize(
    "section, value, message",
    [
        ("seeds", {"protect": 0}, "seeds.protect"),
        ("seeds", {"mentions": "yes"}, "seeds.mentions"),
        ("semantic", {"rank": "cosine"}, "semantic.rank"),
        ("semantic", {"rrf_k": 0}, "semantic.rrf_k"),
        ("semantic", {"feedback": -1}, "semantic.feedback"),
        ("scoring", {"relevance": 2}, "scoring.relevance"),
        ("output", {"header": "tiny"}, "output.header"),
    ],
)
def test_invalid_values_are_rejected(section, value, message):
    with pytest.raises(LensError) as err:
        parse_lens({section: value}, where="test", name="bad", source="file")
    assert message in str(err.value)


def test_defaults_leave_existing_lenses_unchanged():
    lens = parse_lens({}, where="test", name="plain", source="file")
    assert (lens.seeds.mentions, lens.seeds.protect) == (False, None)
    assert (lens.semantic.rank, lens.semantic.rrf_k, lens.semantic.feedback) == ("similarity", 60, 0)
    assert lens.scoring.relevance == 0.0
    assert lens.output.header == "full"
