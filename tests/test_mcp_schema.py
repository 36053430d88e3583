"""The MCP tools' input schemas and argument checks are ctx's own (ctx.mcp_server), written so the
server starts without pydantic or the MCP SDK. Before that, the SDK derived both from the tool
functions' signatures with pydantic; these tests hold the two equal, so an agent sees the same
schema and the same accepted values: the schema against pydantic's for the same signature, and
every check against pydantic's lax validation of the same type over a table of values."""

from __future__ import annotations

from typing import Any

import pytest

pydantic = pytest.importorskip("pydantic")

from ctx.mcp_server import (  # noqa: E402 - after the skip
    ArgumentError,
    CtxApplication,
    CtxTools,
    Param,
    ToolSpec,
    check_arguments,
    input_schema,
    tool_specs,
)


def _annotation(param: Param) -> Any:
    kind: Any = param.kind | list[param.kind] if param.many else param.kind  # type: ignore[name-defined]
    return kind | None if param.default is None else kind


def pydantic_schema(spec: ToolSpec) -> dict[str, Any]:
    """What the SDK published for the same signature: a pydantic model of the arguments."""
    fields: dict[str, Any] = {}
    for param in spec.params:
        extra: dict[str, Any] = {}
        if param.minimum is not None:
            extra["minimum"] = param.minimum
        if param.maximum is not None:
            extra["maximum"] = param.maximum
        if param.choices:
            extra["enum"] = list(param.choices)
        default = ... if param.required else param.default
        info = pydantic.Field(default, description=param.description, json_schema_extra=extra or None)
        fields[param.name] = (_annotation(param), info)
    model = pydantic.create_model(f"{spec.name}Arguments", **fields)
    return model.model_json_schema(by_alias=True)


@pytest.mark.parametrize("spec", tool_specs(), ids=lambda spec: spec.name)
def test_each_schema_is_the_one_pydantic_gives_the_same_signature(spec: ToolSpec) -> None:
    assert input_schema(spec) == pydantic_schema(spec)


def test_the_listing_has_the_six_tools_read_only(tmp_path) -> None:
    listing = CtxApplication(CtxTools(tmp_path / "absent.db")).tool_list()
    assert [tool["name"] for tool in listing] == ["context", "search", "show", "lenses", "context_map", "expand"]
    for tool in listing:
        # The session tools change the session's account: a repeated call is not the same call.
        idempotent = tool["name"] not in ("context_map", "expand")
        assert tool["annotations"] == {"readOnlyHint": True, "idempotentHint": idempotent, "openWorldHint": False}
        assert tool["inputSchema"]["type"] == "object"


VALUES: list[Any] = [
    5, 5.0, 5.5, -3, 0, 1, 2, 0.0, 1.0, 10**30, True, False, None,
    "5", " 5 ", "5.0", "1_000", "1e3", "", "abc", "true", "TRUE", "yes", "on", "t", "y", "1", "0", "off", "no", "f", "n",
    [], ["a"], ["a", "b"], ["a", 5], [None], {}, {"a": 1},
]
PARAMS = [
    Param("n", int, "an integer", default=1),
    Param("n", int, "an integer or null", default=None),
    Param("b", bool, "a flag", default=False),
    Param("s", str, "a string", default="x"),
    Param("s", str, "a string or null", default=None),
    Param("s", str, "required text"),
    Param("topic", str, "one or several", many=True),
]


@pytest.mark.parametrize("param", PARAMS, ids=lambda p: f"{p.name}:{p.description}")
def test_arguments_are_taken_and_refused_as_pydantic_took_them(param: Param) -> None:
    spec = ToolSpec("tool", "Tool", "", (param,), None)
    adapter = pydantic.TypeAdapter(_annotation(param))
    for value in VALUES:
        try:
            expected = adapter.validate_python(value)
        except pydantic.ValidationError:
            expected = ArgumentError
        try:
            got = check_arguments(spec, {param.name: value})[param.name]
        except ArgumentError as exc:
            got = ArgumentError
            message = str(exc)
            assert message.startswith(f"{param.name} must be ") and "\n" not in message
            assert repr(value) not in message or value in ([], {}, None)  # the value's type, never the value
        assert got == expected and type(got) is type(expected), (param, value)


def test_the_messages_name_each_argument_once() -> None:
    spec = next(spec for spec in tool_specs() if spec.name == "context")
    with pytest.raises(ArgumentError) as missing:
        check_arguments(spec, {})
    assert str(missing.value) == "context needs 'topic'"
    with pytest.raises(ArgumentError) as several:
        check_arguments(spec, {"topic": 5, "depth": "deep", "explain": "maybe"})
    assert str(several.value) == (
        "topic must be a string or a list, not an integer; depth must be an integer, not a string;"
        " explain must be true or false, not a string"
    )
    with pytest.raises(ArgumentError) as items:
        check_arguments(spec, {"topic": ["a", 5]})
    assert str(items.value) == "topic must be a list of strings, not a list"


def test_mcp_help_names_every_tool_the_server_lists(run_cli):
    """`ctx mcp --help` is where an integrator first reads what the server offers; at 1fdd446 it
    named four tools and not the session's context_map and expand."""
    from ctx.mcp_server import tool_specs

    import re

    named = set(re.findall(r"[a-z_]+", run_cli("mcp", "--help").stdout.split("Tools: ", 1)[1]))
    assert {spec.name for spec in tool_specs()} <= named
