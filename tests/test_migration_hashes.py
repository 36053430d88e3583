"""A shipped migration is never edited: graphs in users' hands already ran it, and an edit would
leave theirs different from a new graph's. Change the schema with a new migration instead.

A new migration fails here until its hash is added below (the message gives the line to add);
an edited one fails for good. The hashes are of each migration's SQL text in ctx.store.migrations,
or, for a migration that is a Python function (it needs more than SQL), of that function's source.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable

from ctx.store.migrations import MIGRATIONS

SHIPPED = {
    1: "f71e6a909cf972057256009420da170ee7c8679884b88ab4179676205039cd6e",
    2: "17411405e7e7b276edd41eee1e5451200881fc3df9d88ee78abbc56631091117",
    3: "5f3c4dcb2f85dd36723c03eb93bb01dc1a8ad6e77bae3f6151b8121661c4b58d",
    4: "078ed0ea24aba21c9dc959f9bab6039e12bf058f6486ddf2baff353ed35be275",
    5: "628f96a5a68776f628139f72b5b449280c56c23dd9b036351f228f6f08fac786",
    6: "060299a70bdd69bdc1cb26448ecb2a8b7df316dd60d9318a56bfe7dfa5b887a5",
    7: "87ed76047ae805a7109c35f693a1a6d852d96dffb5b98a22c0d8e5199e151345",
    8: "14525588309993d86296f2f0b7dd61c4cad73a16a83eb72d65ee48fa7a2f07bd",
    9: "7b9254962592f5d47a9c172e1649bd2001269fe60e4b29d986c4958572d90d38",
    10: "9c5626550ff3cc8237ba790cc24dc9d3e10e52de3d0749a1d63386181265cb8a",
    11: "8800e7088300a2816b1f64231f1d3afe5f516c1768c3f1051690514d43b2051c",
    12: "0d7de7776b6358b7dfbb5106dfdea8fc8aba72f7a87a5627a35cf3e9b80cc134",
    13: "394e0c083e4280b1e483c18008c431eadb7db2e476fbc9ca4e23366caf3cf1b3",
    14: "228e365a3db3db66a2d9b397c6993a55d24861d163ae133acd2c60ff6ade62a4",
    15: "9aed106ff3d1317452f02e74f69ddb2a0c26cd8d3b6a29272f4b76d172b943e6",
    16: "50067966a8d803fcb9714ff0c8408a5d57118d3976c0c5b85ab6d346c38c8288",
    17: "c805a3304d12a4de92cd65939f8f54b2d1f059bc6e0b4f388b4225181b713447",
    18: "298d8fb4edd971c1cb954f6b1eb362e45c1f5cb82eb9ec3d290b22ec66f84c14",
    19: "fd9b6c27e8946b11d1ada877edf536ec8b845b411583401d4b5d5d0b38a914b1",
    20: "38e00e0a947f0bc36a90a5986bbc73f8f0474a65a199f5d460675170372d7f12",
}


def _hash(script: str | Callable[..., object]) -> str:
    text = inspect.getsource(script) if callable(script) else script
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_no_shipped_migration_was_edited():
    edited = [number for number, script in enumerate(MIGRATIONS, start=1)
              if number in SHIPPED and _hash(script) != SHIPPED[number]]
    assert not edited, (
        f"migration(s) {edited} changed after they shipped: graphs that already ran them would differ "
        "from new ones. Restore the text and add a new migration instead."
    )


def test_no_shipped_migration_was_removed():
    assert len(MIGRATIONS) >= max(SHIPPED), "a shipped migration was removed"


def test_every_migration_has_a_recorded_hash():
    new = {number: _hash(script) for number, script in enumerate(MIGRATIONS, start=1) if number not in SHIPPED}
    assert not new, "record the new migration(s) in SHIPPED:\n" + "\n".join(
        f'    {number}: "{digest}",' for number, digest in new.items()
    )
