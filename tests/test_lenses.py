"""Lens files: the built-ins, lookup order, validation messages, and `ctx lens list|show|validate`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ctx.errors import EXIT_USAGE, LensError, UsageError
from ctx.lenses import builtin_lens_dir, find_lens_path, list_lenses, load_lens, load_lens_file

BUILTINS = ("general", "writing", "coding", "planning", "meeting-prep")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    """No user or project lenses from the machine running the tests."""
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(LensError) as info:
        load_lens_file(path)
    return info.value.problems


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_lens_is_valid_and_described(name):
    lens = load_lens(name)
    assert lens.name == name and lens.source == "builtin"
    assert lens.description and lens.rules and lens.sections
    assert any(s.select.seed for s in lens.sections)


def test_builtin_lenses_make_distinct_choices():
    lenses = {n: load_lens(n) for n in BUILTINS}
    signatures = {
        n: (tuple((r.pattern, r.direction, r.weight, r.max_depth) for r in lens.rules),
            tuple(sorted(lens.boosts.types.items())), tuple(s.name for s in lens.sections))
        for n, lens in lenses.items()
    }
    assert len(set(signatures.values())) == len(BUILTINS)
    planning, meeting = lenses["planning"], lenses["meeting-prep"]
    assert planning.boosts.fields["deadline"] > 1 and planning.boosts.fields["depends_on"] > 1
    assert planning.boosts.types["task"] > 1 and planning.boosts.types["goal"] > 1
    assert meeting.rules_for("field:attendees", "out", 1).weight > meeting.rules_for("link", "out", 1).weight
    assert meeting.boosts.types["person"] > 1 and meeting.boosts.keywords["action item"] > 1
    assert [s.name for s in meeting.sections][:3] == ["Topic", "People", "Action items and agenda"]
    assert lenses["coding"].fields.allows("repo") and not lenses["coding"].fields.allows("mood")


def test_builtin_dir_is_the_repo_lenses_folder_in_an_editable_install():
    assert (builtin_lens_dir() / "general.yaml").is_file()


def test_inverse_edge_names_and_both_directions():
    lens = load_lens("writing")
    backlink = lens.rules_for("link", "in", 1)
    assert backlink is not None and backlink.key == "backlink" and backlink.weight == 0.8
    assert lens.rules_for("link", "out", 1).weight == 1.0
    parent = lens.rules_for("child", "in", 1)
    assert parent is not None and parent.max_depth == 1
    assert lens.rules_for("child", "in", 2) is None


def test_globs_lose_to_exact_edge_types(tmp_path):
    path = write(tmp_path / "g.yaml", """
        edges:
          "field:*": {direction: out, weight: 0.5}
          "field:owner": {direction: out, weight: 2}
    """)
    lens = load_lens_file(path)
    assert lens.rules_for("field:owner", "out", 1).weight == 2
    assert lens.rules_for("field:status", "out", 1).weight == 0.5
    assert lens.rules_for("link", "out", 1) is None


def test_every_problem_is_one_line_with_file_key_and_reason(tmp_path):
    path = write(tmp_path / "bad.yaml", """
        name: bad
        depht: 3
        fan_out: 0
        edges:
          link: {direction: sideways, weight: -1}
          backlink: {direction: in}
        boosts:
          types: {person: lots}
        sections:
          - name: A
            select: {seed: true, hopz: 1}
            share: 0.8
          - name: B
            select: rest
            share: 0.5
            order: random
    """)
    problems = problems_of(path)
    where = str(path)
    assert f"{where}: depht: unknown key (did you mean 'depth'?)" in problems[0]
    expected = [
        "fan_out: must be >= 1, not 0",
        "edges.link.weight: must be > 0, not -1",
        "edges.link.direction: must be one of out, in, both, not a string",
        "edges.backlink.direction: 'backlink' already names a direction",
        "boosts.types.person: must be a number from 0 to 100, not a string",
        "sections[0].select.hopz: unknown key (did you mean 'hops'?)",
        "sections[1].order: must be one of rank",
        "sections: shares add up to 1.3; they must not exceed 1",
    ]
    for fragment in expected:
        assert any(p.startswith(f"{where}: ") and fragment in p for p in problems), fragment
    assert all("\n" not in p for p in problems)


def test_yaml_syntax_errors_name_the_line(tmp_path):
    path = write(tmp_path / "broken.yaml", "name: x\nedges: {link: [\n")
    problems = problems_of(path)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: line ")
    assert "invalid YAML" in problems[0]


def test_a_lens_must_be_a_mapping(tmp_path):
    assert problems_of(write(tmp_path / "list.yaml", "- a\n- b\n")) == [
        f"{tmp_path / 'list.yaml'}: (top level): a lens file must be a mapping of keys, not a list"
    ]


def test_missing_select_and_no_seed_section(tmp_path):
    problems = problems_of(write(tmp_path / "s.yaml", """
        sections:
          - name: Only
            share: 0.5
    """))
    assert any("sections[0].select: is required" in p for p in problems)


def test_defaults_fill_the_slots_other_features_use(tmp_path):
    lens = load_lens_file(write(tmp_path / "min.yaml", "description: minimal\n"))
    assert lens.depth == 2 and lens.max_depth == 5 and lens.fan_out == 50
    assert lens.packing.strategy == "score" and lens.truncation.strategy == "keep-start"
    assert lens.dedup.exact is True and lens.semantic.top_k == 0
    assert lens.privacy.tags == ("private",)
    assert lens.scoring.fallback_distance == 0.6 and lens.scoring.fallback_recency == 0.4
    assert lens.rules_for("anything", "in", 1) is not None  # no edges key: follow everything


def test_lookup_order_project_then_user_then_builtin(tmp_path):
    write(tmp_path / "home" / "lenses" / "general.yaml", "description: user general\n")
    assert load_lens("general").source == "user"
    write(tmp_path / ".ctx" / "lenses" / "general.yaml", "description: project general\n")
    lens = load_lens("general")
    assert lens.source == "project" and lens.description == "project general"
    entries = [e for e in list_lenses() if e.name == "general"]
    assert [(e.source, e.shadowed) for e in entries] == [("project", False), ("user", True), ("builtin", True)]


def test_a_path_is_loaded_directly_and_unknown_names_list_the_known(tmp_path):
    path = write(tmp_path / "mine.yaml", "description: mine\n")
    assert find_lens_path(str(path)) == ("file", path)
    assert load_lens(str(path)).name == "mine"
    with pytest.raises(UsageError, match=r"no lens named 'nope'; available: .*general.*planning"):
        load_lens("nope")
    with pytest.raises(UsageError, match="does not exist"):
        load_lens(str(tmp_path / "missing.yaml"))


def test_cli_lens_list_show_validate(tmp_path, run_cli):
    listed = run_cli("lens", "list")
    assert listed.exit_code == 0
    for name in BUILTINS:
        assert name in listed.stdout
    shown = run_cli("lens", "show", "planning")
    assert shown.exit_code == 0 and "name: planning" in shown.stdout and "(builtin)" in shown.stdout
    ok = run_cli("lens", "validate")
    assert ok.exit_code == 0 and ok.stdout.count("ok: ") >= len(BUILTINS)
    bad = write(tmp_path / "bad.yaml", "depth: deep\nedges: {link: {weight: 0}}\n")
    result = run_cli("lens", "validate", str(bad))
    assert result.exit_code == EXIT_USAGE
    lines = result.stderr.strip().splitlines()
    assert lines == [
        f"ctx: error: {bad}: depth: must be an integer, not a string",
        f"ctx: error: {bad}: edges.link.weight: must be > 0, not 0",
    ]


def test_build_with_an_invalid_lens_exits_2_with_the_problems(tmp_path, run_cli):
    run_cli("import", str(write(tmp_path / "g.jsonl", '{"id": "a", "title": "anything"}\n')))
    bad = write(tmp_path / "bad.yaml", "fan_out: many\n")
    result = run_cli("build", "anything", "--lens", str(bad))
    assert result.exit_code == EXIT_USAGE
    assert f"{bad}: fan_out: must be an integer, not a string" in result.stderr
    assert result.stdout == ""


def test_a_lens_file_is_parsed_once_per_text_and_an_edit_is_seen(tmp_path):
    """A long-lived process loads the lens on every call: the parsed lens is kept by the file's
    text (lenses are frozen), and the file is read each time, so an edit gives the new lens."""
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ndepth: 2\nedges:\n  link: {direction: out}\n")
    first = load_lens_file(path)
    assert load_lens_file(path) is first and first.depth == 2
    path.write_text("name: mine\ndepth: 3\nedges:\n  link: {direction: out}\n")
    edited = load_lens_file(path)
    assert edited is not first and edited.depth == 3
    assert load_lens_file(path, name="other").name == "mine"  # its declared name, as before
