"""``python -m ctx``: the same command line as the ``ctx`` entry point (for an environment whose
scripts folder is not on PATH, or to pick the interpreter)."""

from ctx.entry import main

main()
