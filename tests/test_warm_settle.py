"""A warm process tunes the garbage collector once warmed up (``warm.settle``): what it holds then
is left out of collections, and garbage with cycles made afterwards is still collected. Run in a
process of its own: the tuning is for the whole process."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = r"""
import gc, weakref
from ctx.assemble import warm

held = [{"node": i} for i in range(5000)]  # what a warm process holds once warmed up
warm.settle()
assert gc.get_freeze_count() >= len(held), gc.get_freeze_count()
assert gc.get_threshold() == (warm.COLLECT_YOUNG_AFTER, 10, warm.COLLECT_FULL_AFTER)

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle: reference counting alone never frees it
gone = weakref.ref(a)
del a, b
gc.collect()
assert gone() is None
print("ok")
"""


def test_settled_process_still_collects_cycles():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
