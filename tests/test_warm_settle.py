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


AFTER_CALL = r"""
import gc, sys, weakref
from ctx.assemble import warm

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle: reference counting alone never frees it
    return a

warm.after_call()  # before settling: the collector is left as Python runs it
assert gc.get_freeze_count() == 0
held = [{"node": i} for i in range(5000)]
warm.settle()
frozen = gc.get_freeze_count()

collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))

# A call answered: what it kept (3,000 objects) and made is frozen out of later collections
# (counted from none again) without a collection first; garbage with a cycle it made is frozen too.
kept = [[i] for i in range(3000)]  # lists: always tracked by the collector
garbage = cycle()
gone = weakref.ref(garbage)
del garbage
warm.after_call()
assert collections == [], collections
assert gone() is not None
assert gc.get_freeze_count() >= frozen + len(kept) + 2, (gc.get_freeze_count(), frozen)
assert gc.get_count()[0] < 10, gc.get_count()

# A call that failed: its objects collected (a traceback's frames hold cycles), then frozen.
failed = cycle()
gone_failed = weakref.ref(failed)
del failed
warm.after_call(failed=True)
assert collections == [1], collections
assert gone_failed() is None
assert gc.get_count()[0] < 10, gc.get_count()

# A cycle among frozen objects (a cache let go of what it kept) and the answered call's garbage
# are found by the whole collection every FULL_COLLECT_CALLS calls, and not before.
late = cycle()
warm.after_call()  # frozen while still held
gone_late = weakref.ref(late)
del late
for _ in range(warm.FULL_COLLECT_CALLS - 4):  # calls 4 to N - 1 since settling
    warm.after_call()
assert gone() is not None and gone_late() is not None
assert collections == [1], collections
warm.after_call()
assert gone() is None and gone_late() is None
assert collections == [1, 2], collections
# Frozen again after the whole collection (which freed what was garbage when settling, too).
assert gc.get_count()[0] < 10 and gc.get_freeze_count() >= len(held) + len(kept)
print("ok")
"""


def test_a_settled_process_freezes_what_a_call_left_and_collects_it_at_a_bound():
    """After each call (``warm.after_call``, which the MCP server runs once a tool call is
    answered) a settled process freezes the objects made since the last one without collecting
    them, collects them first after a failed call, and collects every object every
    ``FULL_COLLECT_CALLS`` calls; before settling it does nothing."""
    out = subprocess.run([sys.executable, "-c", AFTER_CALL], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# A warm server's process (``tools``) on the demo vault imported afresh; argv: a folder, the vault.
DEMO_SERVER = r"""
import gc, io, json, sqlite3, sys, threading, weakref
from pathlib import Path
from ctx.assemble import warm
from ctx.graph import Graph
from ctx.mcp_server import CtxApplication, CtxTools
from ctx.mcp_wire import StdioServer

db = Path(sys.argv[1]) / "g.db"
with Graph.open(db, create=True) as graph:
    graph.import_path(Path(sys.argv[2]))
warm.enable()
tools = CtxTools(db)
tools.warm_up()


class Node:
    pass


def garbage_cycle():
    # Two objects that hold each other and nothing else: garbage only a collection frees.
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def call(i, **arguments):
    # One `context` tool call as a JSON-RPC line; arguments override the defaults.
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "context", "arguments": {
        "topic": "Project Apollo", "depth": 2, "max_tokens": 1500, **arguments}}}).encode() + b"\n"
"""


def run_on_demo_server(script, tmp_path, demo_vault):
    out = subprocess.run(
        [sys.executable, "-c", DEMO_SERVER + script, str(tmp_path), str(demo_vault)], capture_output=True, text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


SERVED = r"""
warm.settle()
before = gc.get_freeze_count()
reply = tools.context("Project Apollo", depth=3, max_tokens=1500)
assert not reply.is_error, reply.text
# What the call kept was frozen as it was answered.
assert gc.get_count()[1:] == (0, 0) and gc.get_count()[0] < 100, gc.get_count()
assert gc.get_freeze_count() > before
tools.close()
print("ok")
"""


def test_the_server_freezes_what_a_call_kept_once_it_is_answered(tmp_path, demo_vault):
    run_on_demo_server(SERVED, tmp_path, demo_vault)


WIRED = r"""
warm.settle()


class Stdout(io.BytesIO):
    # What the collector had done when each answer was written.
    def __init__(self):
        super().__init__()
        self.at_write = []

    def write(self, data):
        self.at_write.append((gc.get_freeze_count(), garbage() is not None))
        return super().write(data)


garbage = lambda: None
stdin = io.BytesIO(call(0, depth=3))
stdout = Stdout()
before = gc.get_freeze_count()
# A cycle made as the call runs (garbage the call leaves): still there when the answer is written
# (and after: frozen).
garbage = garbage_cycle()
StdioServer(CtxApplication(tools), stdin, stdout).serve()  # returns once the call's thread ended
reply = json.loads(stdout.getvalue())
assert reply["id"] == 0 and not reply["result"]["isError"], reply
[(frozen_then, alive_then)] = stdout.at_write
# Written before the freeze: nothing of the call frozen yet.
assert frozen_then == before, (frozen_then, before)
assert alive_then
# Then frozen on the call's thread, before it ended, without a collection: the cycle is frozen
# with the rest, for the whole collection every FULL_COLLECT_CALLS calls.
assert garbage() is not None
assert gc.get_count()[1:] == (0, 0) and gc.get_count()[0] < 100, gc.get_count()
assert gc.get_freeze_count() > before
tools.close()
print("ok")
"""


def test_over_the_wire_the_freeze_waits_until_the_answer_is_written(tmp_path, demo_vault):
    run_on_demo_server(WIRED, tmp_path, demo_vault)


# A settled server over the wire: answered calls are not collected, a failed one is, and garbage
# an answered call made is freed by the whole collection FULL_COLLECT_CALLS calls after settling.
BOUND = r"""
warm.settle()
warm.FULL_COLLECT_CALLS = 6
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
# Garbage with a cycle left before the first call (as a call's own would be).
garbage = garbage_cycle()
# Calls 1-2 answered, 3 failed (a tool error raised in the call), 4-5 answered: no collection but
# the failed call's (its traceback's frames); the garbage still held after five calls.
replies = []
for line in [call(1, depth=3), call(2), call(3, depth=3, lens="no-such-lens"), call(4, depth=3), call(5, depth=1)]:
    stdout = io.BytesIO()
    StdioServer(CtxApplication(tools), io.BytesIO(line), stdout).serve()  # one call after another
    replies.append(json.loads(stdout.getvalue()))
assert [r["result"]["isError"] for r in replies] == [False, False, True, False, False], replies
young = [g for g in collections if g > 0]  # a young collection within a call (generation 0) may run
assert young == [1], collections
assert garbage() is not None  # frozen with call 1's objects (the failed call's collection skips them)
# The sixth call since settling: the whole collection, which frees it.
StdioServer(CtxApplication(tools), io.BytesIO(call(6, depth=3)), io.BytesIO()).serve()
assert [g for g in collections if g > 0] == [1, 2], collections
assert garbage() is None
tools.close()
print("ok")
"""


def test_a_served_call_s_garbage_is_freed_within_a_bound_of_calls(tmp_path, demo_vault):
    """The collection after each answered call (main before this round: a young one each call,
    0.05-1.8 ms at 100k, freeing nothing) is gone; a failed call's is kept."""
    run_on_demo_server(BOUND, tmp_path, demo_vault)


AFTER_ANSWER = r"""


def recorded():
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM contexts").fetchone()[0]


answered = threading.Event()


def client():
    # As an agent: each request once the last answer is read.
    yield call(1)
    answered.wait(60)
    yield call(2, since="last")


class Stdout:
    def __init__(self):
        self.replies, self.recorded_then = [], []

    def write(self, data):
        self.recorded_then.append(recorded())
        self.replies.append(json.loads(data))
        answered.set()

    def flush(self):
        pass


stdout = Stdout()
StdioServer(CtxApplication(tools), client(), stdout).serve()
first, second = stdout.replies
assert not first["result"]["isError"] and not second["result"]["isError"], stdout.replies
# The first answer was written before its manifest; the second call (since the last context)
# found that manifest: the context unchanged since it.
assert stdout.recorded_then[0] == 0, stdout.recorded_then
assert second["result"]["content"][0]["text"].startswith("# Context diff: Project Apollo: unchanged since c-"), second
before = recorded()
# Without the wire the manifest is written before the call returns.
tools.context("Project Apollo", depth=3, max_tokens=1500)
assert recorded() == before + 1, (before, recorded())
tools.close()
print("ok")
"""


def test_over_the_wire_a_call_s_manifest_is_written_once_it_is_answered(tmp_path, demo_vault):
    run_on_demo_server(AFTER_ANSWER, tmp_path, demo_vault)
