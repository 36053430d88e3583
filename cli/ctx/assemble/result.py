"""What a build returns (``ctx.assemble.BuildResult``): its own module, so the stages that make
one need not import the package that runs them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class BuildResult:
    text: str  # exactly what goes to stdout (counted within max_tokens, trailing newline included)
    found: bool  # False -> the CLI exits 3, MCP reports not found
    warnings: list[str] = field(default_factory=list)  # one-line notices for stderr
    candidates: list[dict[str, Any]] = field(default_factory=list)  # audit rows for --explain
    meta: dict[str, Any] = field(default_factory=dict)
