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


WARMING = r"""
import gc, sys
from ctx.assemble import warm

before = sys.getswitchinterval()
with warm.warming():
    assert sys.getswitchinterval() == warm.WARMING_SWITCH_INTERVAL < before
    assert not gc.isenabled()
    held = [{"node": i} for i in range(5000)]
assert sys.getswitchinterval() == before and gc.isenabled()
assert gc.get_freeze_count() >= len(held)  # settled
assert gc.get_threshold() == (warm.COLLECT_YOUNG_AFTER, 10, warm.COLLECT_FULL_AFTER)
print("ok")
"""


def test_warming_up_switches_often_without_collecting_then_settles():
    """While a warm process warms up beside its first calls, the interpreter switches threads
    every 0.5 ms and does not collect; afterwards both are as before and the process settled."""
    out = subprocess.run([sys.executable, "-c", WARMING], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
