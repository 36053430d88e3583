"""Each option is declared once, on its request type (ctx.options); the Typer command, the fast-path
reader and the MCP tool schema are derived from it. These tests read each face as its framework
publishes it (Click's parameters, the MCP server's tools/list) and compare it with what the
declarations say, so a face that drifts — or an option added to one face only — fails here."""

from __future__ import annotations

import dataclasses

import pytest

from ctx.assemble import BuildRequest
from ctx.commands.build_argv import parse_build, spellings
from ctx.options import Option, SearchRequest, option, options_of

# The device under test stays on in CI's CTX_PLAIN=1 run (conftest.devices_on).
pytestmark = pytest.mark.usefixtures("devices_on")

GRAPH_OPTIONS = {"db", "plain", "include_private"}  # the graph handle's, not the request's
JSON_TYPES = {int: "integer", str: "string", bool: "boolean"}


def _typer_command(name: str):
    import typer.main

    from ctx.app import app

    return typer.main.get_command(app).commands[name]


def _mcp_tools(tmp_path) -> dict[str, dict]:
    from ctx.mcp_server import CtxApplication, CtxTools

    app = CtxApplication(CtxTools(tmp_path / "absent.db"))
    return {tool["name"]: tool["inputSchema"] for tool in app.tool_list()}


def _bounds(param) -> tuple[int | None, int | None]:
    descriptor = getattr(param, "type_descriptor", None)  # Typer >= 0.29 keeps them here
    if descriptor is not None:
        return descriptor.parameter_info.min, descriptor.parameter_info.max
    return getattr(param.type, "min", None), getattr(param.type, "max", None)


@pytest.mark.parametrize("command, request_type", [("build", BuildRequest), ("search", SearchRequest)])
def test_the_typer_command_is_the_declarations(command, request_type):
    params = {p.name: p for p in _typer_command(command).params}
    declared = {opt.name: opt for opt in options_of(request_type)}
    assert set(params) == set(declared) | GRAPH_OPTIONS
    for name, opt in declared.items():
        param = params[name]
        if opt.spec.argument:
            assert param.param_type_name == "argument" and param.required == opt.required
            assert (param.nargs == -1) == opt.spec.many
            continue
        assert param.help == opt.help, name
        assert param.default == opt.face_default, name
        if opt.spec.kind is bool:
            assert param.is_flag and [*param.opts, *param.secondary_opts] == list(opt.spec.flags), name
        else:
            assert list(param.opts) == list(opt.spec.flags), name
            assert _bounds(param) == (opt.spec.minimum, opt.spec.maximum), name


@pytest.mark.parametrize("tool, request_type", [("context", BuildRequest), ("search", SearchRequest)])
def test_the_mcp_tool_schema_is_the_declarations(tool, request_type, tmp_path):
    schema = _mcp_tools(tmp_path)[tool]
    declared = [opt for opt in options_of(request_type) if opt.mcp_name is not None]
    assert list(schema["properties"]) == [opt.mcp_name for opt in declared]
    assert schema["required"] == [opt.mcp_name for opt in declared if opt.required]
    for opt in declared:
        prop = schema["properties"][opt.mcp_name]
        assert prop["description"] == opt.mcp_help, opt.name
        kind = JSON_TYPES[opt.spec.kind]
        types = [branch.get("type") for branch in prop.get("anyOf", [prop])]
        expected = [kind, "array"] if opt.spec.many else [kind]
        if not opt.required and opt.face_default is None:
            expected.append("null")
        assert types == expected, opt.name
        if not opt.required:
            assert prop["default"] == opt.face_default, opt.name
        assert prop.get("minimum") == opt.spec.minimum, opt.name
        assert prop.get("maximum") == opt.spec.maximum, opt.name
        assert prop.get("enum") == (list(opt.spec.choices) or None), opt.name


def test_the_fast_path_reads_every_declared_option_as_typer_does():
    spelled = spellings(BuildRequest)
    for opt in options_of(BuildRequest):
        if opt.spec.argument:
            continue
        for flag in opt.spec.flags:
            assert flag in spelled.values or flag in spelled.flags, flag
    assert set(parse_build(["build", "x"])) == {p.name for p in _typer_command("build").params}


def test_the_request_carries_no_visibility():
    names = {f.name for f in dataclasses.fields(BuildRequest)}
    assert "include_private" not in names
    with pytest.raises(TypeError):
        BuildRequest(("x",), include_private=True)  # type: ignore[call-arg]


# Request fields that are not options: set by the CLI from how an option was given.
NOT_OPTIONS = {"lens_why", "freshness"}


def test_every_request_field_is_a_declared_option():
    for request_type in (BuildRequest, SearchRequest):
        fields = [f.name for f in dataclasses.fields(request_type) if f.name not in NOT_OPTIONS]
        assert fields == [o.name for o in options_of(request_type)]


def test_an_option_added_to_a_request_reaches_every_face():
    """The two edits of a new option: its declaration (here) and the code that reads it."""
    from ctx.commands.declared import typer_parameter
    from ctx.mcp_server import request_params

    @dataclasses.dataclass(frozen=True)
    class Extended(SearchRequest):
        since: str | None = option(None, kind=str, flags=("--since",), help="Only what changed since then.")
        rounds: int = option(3, flags=("--rounds", "-r"), minimum=1, maximum=9, help="How many.")

    added = {opt.name: opt for opt in options_of(Extended)}
    assert isinstance(added["since"], Option)
    spelled = spellings(Extended)
    assert spelled.values["--since"] == "since" and spelled.values["-r"] == "rounds"
    assert spelled.bounds["rounds"] == (1, 9)
    assert {p.name for p in request_params(Extended)} >= {"since", "rounds"}
    assert typer_parameter(added["rounds"]).default == 3
