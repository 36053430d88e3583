"""The one SQL script that sets up a team graph's roles (``roles.sql`` beside this module).

``python -m ctx.store.postgres.roles`` prints it; ``psql "$URL" -f`` runs it. See docs/team.md.
"""

from __future__ import annotations

from importlib import resources

WRITER = "ctx_writer"
READER = "ctx_reader"
PRIVATE = "ctx_private"


def setup_sql() -> str:
    return resources.files("ctx.store.postgres").joinpath("roles.sql").read_text(encoding="utf-8")


if __name__ == "__main__":
    print(setup_sql(), end="")
