"""Typer commands whose parameters come from a request type's option declarations (``ctx.options``).

Typer reads a command's parameters from its function's signature, so the signature is built here
from the declarations: an option added to ``BuildRequest`` appears in `ctx build --help`, is
parsed by Click and reaches ``run_build`` with no edit in this layer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from ctx.options import Option, options_of


def typer_parameter(opt: Option) -> inspect.Parameter:
    """One command-line parameter for a declared option."""
    spec = opt.spec
    if spec.argument:
        kind: Any = list[spec.kind] if spec.many else spec.kind  # type: ignore[name-defined]
        info: Any = typer.Argument(help=spec.help, show_default=False)
        default = inspect.Parameter.empty if opt.required else opt.default
        return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, info], default=default)
    if spec.kind is bool:
        names = "/".join(spec.flags[:2]) if len(spec.flags) > 1 else spec.flags[0]
        info = typer.Option(names, help=opt.help)
        return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[bool, info], default=opt.default)
    default = opt.face_default
    kind = spec.kind if default is not None else spec.kind | None
    info = typer.Option(*spec.flags, help=opt.help, min=spec.minimum, max=spec.maximum, show_default=default is not None,
                        autocompletion=_completer(opt))
    return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[kind, info], default=default)


def _completer(opt: Option) -> Callable[[str], list[str]] | None:
    from ctx.commands.completion import lens_names, values

    if opt.spec.complete == "lenses":
        return lens_names
    return values(*opt.spec.choices) if opt.spec.choices else None


def declare(command: Callable[..., Any], request_type: type, *common: tuple[str, Any, Any]) -> Callable[..., Any]:
    """``command`` (which takes keyword arguments) with the signature of ``request_type``'s
    options followed by ``common`` ones given as (name, annotation, default)."""
    parameters = [typer_parameter(opt) for opt in options_of(request_type)]
    parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
                   for name, annotation, default in common]
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    return command
