"""The `llm` plugin: ``llm -f ctx:TOPIC "question"`` puts the context `ctx build TOPIC` prints into
the prompt. Registered through the ``llm`` entry point in pyproject.toml; the syntax of the
fragment argument is in ``ctx.fragment``."""

from __future__ import annotations

from collections.abc import Callable

import llm

from ctx.fragment import fragment_text


@llm.hookimpl
def register_fragment_loaders(register: Callable[..., None]) -> None:
    register("ctx", load_ctx_fragment)


def load_ctx_fragment(argument: str) -> llm.Fragment:
    """Context from your ctx knowledge graph, exactly as `ctx build` prints it.

    ctx:TOPIC or ctx:TOPIC?lens=NAME&tokens=N&depth=N&format=json&db=PATH
    e.g. llm -f 'ctx:Project Apollo?lens=planning&tokens=2000' 'What blocks the launch?'
    """
    return llm.Fragment(fragment_text(argument), source=f"ctx:{argument}")
