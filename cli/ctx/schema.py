"""The version of docs/context.schema.json that ctx's JSON outputs follow.

`ctx build` records it in ``meta.schema``; `ctx search`, `ctx show` and `ctx stats` in a top-level
``schema``. Within a version keys are only added, never removed or retyped; a breaking change bumps
it (and the schema file says what changed).
"""

SCHEMA_VERSION = 1
