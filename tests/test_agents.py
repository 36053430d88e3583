"""Where agents and people already work: `ctx mcp --print-config`, the missing-extra hint, and the
`llm` fragment loader (through llm's own plugin machinery and CLI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CTX = shutil.which("ctx", path=str(Path(sys.executable).parent)) or shutil.which("ctx")


def _ctx(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([CTX, *argv], capture_output=True, text=True, cwd=cwd)


# -- ctx mcp --print-config ----------------------------------------------------------------------


def test_print_config_gives_absolute_paths_that_work(demo_db):
    relative = os.path.relpath(demo_db, demo_db.parent.parent)
    result = _ctx("mcp", "--print-config", "--format", "json", "--db", relative, cwd=demo_db.parent.parent)
    assert result.returncode == 0, result.stderr
    server = json.loads(result.stdout)["mcpServers"]["ctx"]
    command = Path(server["command"])
    assert command.is_absolute() and os.access(command, os.X_OK)
    assert command.samefile(CTX)
    assert server["args"] == ["mcp", "--db", str(demo_db)]
    # What the client will run is this ctx, on this graph.
    assert subprocess.run([server["command"], "stats", "--db", server["args"][2]], capture_output=True).returncode == 0


def test_print_config_text_has_the_json_and_the_command_line(demo_db):
    result = _ctx("--db", str(demo_db), "mcp", "--print-config", "--include-private")
    assert result.returncode == 0
    command = str(Path(CTX).absolute())
    assert f"claude mcp add ctx -- {command} mcp --db {demo_db} --include-private\n" in result.stdout
    body = result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1]
    assert json.loads(body)["mcpServers"]["ctx"]["args"][-1] == "--include-private"


def test_mcp_serves_without_the_sdk_installed(demo_db):
    # The SDK (and pydantic) made unimportable in this one process, as on a machine without the
    # mcp extra: the server speaks the protocol itself (ctx.mcp_wire).
    code = (
        "import sys; sys.modules['mcp'] = sys.modules['pydantic'] = None;"
        " sys.argv = ['ctx', 'mcp', '--db', sys.argv[1]]; from ctx.app import main; main()"
    )
    session = "".join(json.dumps(message) + "\n" for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": "apollo"}}},
    ))
    result = subprocess.run([sys.executable, "-c", code, str(demo_db)], input=session, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert not answers[1]["result"]["isError"] and "Apollo" in answers[1]["result"]["content"][0]["text"]


# -- the llm fragment loader ---------------------------------------------------------------------

llm = pytest.importorskip("llm", reason="the llm loader is tested with llm installed (dev extra)")


class Echo(llm.Model):
    """A model that answers with the prompt it was given, fragments included."""

    model_id = "ctx-test-echo"
    can_stream = False

    def execute(self, prompt, stream, response, conversation):
        yield prompt.prompt


class EchoPlugin:
    @llm.hookimpl
    def register_models(self, register):
        register(Echo())


@pytest.fixture
def echo_model(tmp_path, monkeypatch):
    from llm.plugins import pm

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    pm.register(EchoPlugin(), name="ctx-test-echo")
    yield "ctx-test-echo"
    pm.unregister(name="ctx-test-echo")


def test_ctx_is_registered_through_llms_entry_point():
    from llm.plugins import pm

    assert "ctx" in llm.get_fragment_loaders()
    assert any(plugin.__name__ == "ctx.llm_plugin" for plugin in pm.get_plugins() if hasattr(plugin, "__name__"))


def test_llm_f_ctx_puts_exactly_the_build_output_into_the_prompt(demo_db, echo_model):
    from click.testing import CliRunner
    from llm.cli import cli

    built = _ctx("build", "Project Apollo", "--db", str(demo_db)).stdout
    question = "What blocks the launch?"
    result = CliRunner().invoke(
        cli, ["-m", echo_model, "--no-log", "-f", f"ctx:Project Apollo?db={demo_db}", question]
    )
    assert result.exit_code == 0, result.output
    assert result.output == built + "\n" + question + "\n"


@pytest.mark.parametrize(
    ("options", "flags"),
    [
        ("lens=planning&tokens=800", ["--lens", "planning", "--max-tokens", "800"]),
        ("depth=1&format=json&tokens=600", ["--depth", "1", "--format", "json", "--max-tokens", "600"]),
    ],
)
def test_lens_budget_and_format_in_the_fragment_argument(demo_db, options, flags):
    loader = llm.get_fragment_loaders()["ctx"]
    fragment = loader(f"Project Apollo?{options}&db={demo_db}")
    assert isinstance(fragment, llm.Fragment)
    assert str(fragment) == _ctx("build", "Project Apollo", *flags, "--db", str(demo_db)).stdout
    assert fragment.source == f"ctx:Project Apollo?{options}&db={demo_db}"


def test_a_topic_may_end_in_a_question_mark(demo_db):
    from ctx.fragment import parse_fragment

    assert parse_fragment("What blocks Apollo?").topic == "What blocks Apollo?"
    parsed = parse_fragment(f"What blocks Apollo??tokens=500&db={demo_db}")
    assert (parsed.topic, parsed.max_tokens, parsed.db) == ("What blocks Apollo?", 500, demo_db)


def test_fragment_errors_reach_the_llm_user(demo_db, echo_model):
    from click.testing import CliRunner
    from llm.cli import cli

    def run(argument: str):
        return CliRunner().invoke(cli, ["-m", echo_model, "--no-log", "-f", argument, "q"])

    unknown = run(f"ctx:zzqxv wqpfk?db={demo_db}")
    assert unknown.exit_code != 0 and "no node matches 'zzqxv wqpfk'" in unknown.output
    bad = run(f"ctx:Project Apollo?budget=9&db={demo_db}")
    assert bad.exit_code != 0 and "unknown option 'budget'" in bad.output
