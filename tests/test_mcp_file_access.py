"""No MCP tool argument can make the server read a file outside the lens search path.

An agent chooses `context(lens=...)` and `lenses(name=...)`; before, any path was accepted and the
lens error quoted the file's text, so a server started without --include-private returned a
private note's full text (and /etc/passwd). Here every tool gets every hostile string in every
argument (absolute paths to a private note's file and to a temp file holding a secret, relative
paths, traversal, Windows forms, NUL, URL forms), and:

* the secret appears in no block of any reply (text, warnings, extra blocks);
* Python's audit hook sees no open() of either file (nothing read them, not even to fail);
* "not found" and "invalid" do not tell an existing path from a missing one.

The CLI keeps `--lens FILE` (the user's own shell), but its errors do not dump the file either:
a problem line names the file, the key path and the kind of value, never a value or a line.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import imported_graph

SECRET = "WOMBATLANTERN5821"
PRIVATE_SECRET = "CAPYBARAFERN3317"

_opened: list[str] | None = None  # paths opened while a probe is recording


def _audit(event: str, args: tuple) -> None:
    if _opened is not None and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; this one records only inside `recording`


class recording:
    def __enter__(self) -> list[str]:
        global _opened
        _opened = []
        return _opened

    def __exit__(self, *exc: object) -> None:
        global _opened
        _opened = None


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("mcp-files")
    vault = root / "vault"
    vault.mkdir()
    (vault / "Public.md").write_text("# Public\n\nThe launch plan for Apollo.\n", encoding="utf-8")
    private_note = vault / "Secret.md"
    private_note.write_text(
        f"---\ntags: [private]\n---\n# Secret\n\nThe acquisition target is {PRIVATE_SECRET}.\n", encoding="utf-8"
    )
    outside = root / "outside"
    outside.mkdir()
    yaml_secret = outside / "secret.yaml"
    # A lens-shaped file whose values would be quoted if it were ever loaded as a lens. (Problem
    # lines name keys, which locate a problem, and never values; the secret sits in values.)
    yaml_secret.write_text(
        f"depth: {SECRET}\ndescription: {SECRET}\nedges: {{link: {{direction: {SECRET}}}}}\n"
        f"sections: [{SECRET}]\nunknown_key: {SECRET}\n",
        encoding="utf-8",
    )
    text_secret = outside / "notes.txt"
    text_secret.write_text(f"password = {SECRET}\nline two {SECRET}\n", encoding="utf-8")
    broken_secret = outside / "broken.yaml"
    broken_secret.write_text(f"name: x\nedges: [{SECRET}: {{\n", encoding="utf-8")
    db = imported_graph(tmp_path_factory, vault)
    return {
        "db": db,
        "root": root,
        "private_note": private_note,
        "yaml": yaml_secret,
        "text": text_secret,
        "broken": broken_secret,
    }


def hostile_strings(s: dict[str, Path], cwd: Path) -> list[str]:
    out: list[str] = []
    for key in ("private_note", "yaml", "text", "broken"):
        path = s[key]
        relative = os.path.relpath(path, cwd)
        out += [
            str(path),
            str(path.with_suffix("")),  # a path without its suffix
            relative,
            "./" + relative,
            relative.replace("/", "\\"),
            "../" * 12 + str(path).lstrip("/"),
            "lenses/../../../../../../../../" + str(path).lstrip("/"),
            "file://" + str(path),
            str(path) + "\x00",
            "\x00" + str(path),
            path.stem,  # a bare name that happens to be a file's stem outside the lens folders
        ]
    out += [
        "/etc/passwd", "../../../../../../etc/passwd", "..", ".", "~", "~/secret", "C:\\Windows\\win.ini",
        "C:secret", "\\\\server\\share\\x.yaml", "general/../general", "general.yaml", "general\x00",
        ".hidden", "a" * 5000, "gen\neral", " general",
    ]
    return out


def all_text(reply: object) -> str:
    return reply.text + "".join(reply.warnings) + "".join(reply.extra)  # type: ignore[attr-defined]


def test_no_tool_argument_reads_a_file_outside_the_lens_search_path(secrets, tmp_path, monkeypatch):
    pytest.importorskip("mcp")
    from ctx.mcp_server import CtxTools

    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))  # no user lenses
    monkeypatch.chdir(secrets["root"])  # relative paths would resolve to the secrets
    tools = CtxTools(secrets["db"])
    forbidden = {str(secrets[k]) for k in ("private_note", "yaml", "text", "broken")}
    replies = []
    with recording() as opened:
        for value in hostile_strings(secrets, secrets["root"]):
            replies += [
                tools.context("Public", lens=value),
                tools.context("Public", lens=value, format="json", explain=True),
                tools.context(value),
                tools.context("Public", encoding=value),
                tools.context("Public", format=value),
                tools.lenses(name=value),
                tools.search(value),
                tools.search(value, format="json"),
                tools.search("launch", format=value),
                tools.show(value),
                tools.show("Public", format=value),
            ]
    touched = {os.path.realpath(p) for p in opened} & {os.path.realpath(p) for p in forbidden}
    assert not touched, f"a tool call opened {touched}"
    for reply in replies:
        text = all_text(reply)
        assert SECRET not in text and PRIVATE_SECRET not in text, text[:300]
        assert "internal error" not in text and "Traceback" not in text, text[:300]
    # Path-like lens arguments are refused as such, by what they are, never by what exists.
    refused = tools.context("Public", lens=str(secrets["yaml"]))
    assert refused.is_error and "not a lens name" in refused.text
    # The probes can fail: a valid lens name still works and the public note is there.
    ok = tools.context("Public", lens="general")
    assert not ok.is_error and "launch plan" in ok.text


def test_not_found_and_invalid_do_not_reveal_which_paths_exist(secrets, tmp_path, monkeypatch):
    pytest.importorskip("mcp")
    from ctx.mcp_server import CtxTools

    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    tools = CtxTools(secrets["db"])
    existing = str(secrets["yaml"])
    missing = str(secrets["yaml"].with_name("no-such-file.yaml"))
    for call in (lambda v: tools.context("Public", lens=v), lambda v: tools.lenses(name=v)):
        a, b = call(existing), call(missing)
        assert a.is_error and b.is_error
        assert a.text.replace(existing, "<arg>") == b.text.replace(missing, "<arg>")
    # Bare names: an existing file's stem outside the lens folders reads like any unknown name.
    a = tools.lenses(name=secrets["yaml"].stem)
    b = tools.lenses(name="no-such-lens-at-all")
    assert a.text.replace(secrets["yaml"].stem, "<arg>") == b.text.replace("no-such-lens-at-all", "<arg>")


def test_lens_names_resolve_only_inside_the_lens_folders(tmp_path, monkeypatch, secrets):
    pytest.importorskip("mcp")
    from ctx.mcp_server import CtxTools

    home = tmp_path / "home"
    (home / "lenses").mkdir(parents=True)
    (home / "lenses" / "mine.yaml").write_text("description: my own lens\ndepth: 1\n", encoding="utf-8")
    monkeypatch.setenv("CTX_HOME", str(home))
    tools = CtxTools(secrets["db"])
    assert not tools.context("Public", lens="mine").is_error
    shown = tools.lenses(name="mine")
    assert not shown.is_error and "my own lens" in shown.text
    # The same file by path is refused, as is a traversal that would land on it.
    assert tools.lenses(name=str(home / "lenses" / "mine.yaml")).is_error
    assert tools.lenses(name="../lenses/mine").is_error


def test_cli_lens_file_errors_never_dump_the_file(secrets, run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("CTX_HOME", str(tmp_path / "home"))
    for key in ("yaml", "text", "broken", "private_note"):
        for argv in (
            ["build", "Public", "--lens", str(secrets[key])],
            ["lens", "validate", str(secrets[key])],
            ["lens", "show", str(secrets[key])],
        ):
            result = run_cli(*argv, db=secrets["db"])
            assert result.exit_code == 2, (argv, result.stdout, result.stderr)
            assert SECRET not in result.stderr and PRIVATE_SECRET not in result.stderr, result.stderr
            assert result.stderr.startswith("ctx: error: "), result.stderr
    # The file is named and the problem located, so the user can still fix a real lens.
    result = run_cli("lens", "validate", str(secrets["broken"]))
    assert f"{secrets['broken']}: line 3: invalid YAML" in result.stderr
