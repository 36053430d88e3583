"""Checking a graph file: SQLite's own integrity check, then the invariants ctx keeps.

A damaged graph answers silently: SQLite notices a bad page only when a query reads it, so a build
that reads other pages exits 0. ``ctx doctor`` reads everything once and reports one line per
problem, each with what to do about it. The checks, cheapest first:

* SQLite's ``PRAGMA integrity_check`` (every page, index and constraint); when it fails, ctx's own
  checks may fail on the same pages and are only tried as far as they can be read;
* the counts the store keeps (``store/counts.py``) against the rows they count;
* every passage's span inside its node's body (a passage without its own text is a span);
* both passage full-text indexes and the node index in step with their content: the same rows,
  and FTS5's own check of the index against the content;
* vectors: each of the right size, and each for a text that still exists.

Nothing here writes: FTS5's check is an INSERT of a command row that changes nothing, run inside a
transaction that is rolled back.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ctx.store import counts
from ctx.store.db import GRAPH_TABLES, REBUILD_HINT, busy_timeout_ms
from ctx.store.fts import PRIVATE_SUFFIX
from ctx.store.migrations import APPLICATION_ID, MIGRATIONS, current_version

# How many problems of one kind are listed before the rest is summed up.
MAX_LISTED = 5


@dataclass(frozen=True)
class Problem:
    check: str  # which check found it: sqlite, counts, passages, fts, vectors
    message: str
    hint: str = REBUILD_HINT


@dataclass
class Checkup:
    checked: list[str]
    problems: list[Problem]
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self, path: Path) -> str:
        return json.dumps(
            {
                "graph": str(path),
                "ok": self.ok,
                "checked": self.checked,
                "problems": [{"check": p.check, "message": p.message, "hint": p.hint} for p in self.problems],
                "notes": self.notes,
            },
            ensure_ascii=False,
            indent=2,
        )


def open_for_check(path: Path) -> sqlite3.Connection:
    """The graph opened as it is: no migration, nothing that a damaged file could trip over before
    the checks run. Read-write only because FTS5's check is an INSERT of a command row (rolled
    back); a read-only file is opened read-only and that one check is skipped."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, isolation_level=None)
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.OperationalError:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    # A writer (an import, embed or watch) holding the graph is waited for as every command waits
    # for it; without a timeout the FTS5 check failed at once with "database is locked".
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
    return conn


class StillLocked(Exception):
    """Another process held the graph's write lock past the busy timeout: nothing could be judged
    by the checks that need it (the caller says so in one line, never as damage)."""

    def __init__(self, error: sqlite3.DatabaseError) -> None:
        super().__init__(str(error))
        self.error = error


def _locked(exc: sqlite3.DatabaseError) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


def _not_checkable(conn: sqlite3.Connection, path: Path) -> Problem | None:
    """A file these checks do not apply to, said instead of running them: another application's
    database (whose tables are not ctx's, so 'rebuild from its sources' would be wrong advice), or
    a graph written by a newer ctx (whose invariants this version does not know: every other
    command refuses it, and doctor called it ok)."""
    try:
        application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = current_version(conn)
    except sqlite3.DatabaseError:
        return None  # unreadable: SQLite's integrity check says what is wrong
    if application_id not in (0, APPLICATION_ID):
        return Problem("graph", f"{path} is another application's SQLite database (application id {application_id})",
                       "give --db a ctx graph")
    if application_id == 0 and not tables and version == 0:
        return Problem("graph", f"{path} is empty, not a ctx graph", "give --db a ctx graph, or `ctx import` into it")
    if application_id == 0 and not (version >= 1 and GRAPH_TABLES <= tables):
        return Problem("graph", f"{path} is a SQLite database that is not a ctx graph", "give --db a ctx graph")
    if version > len(MIGRATIONS):
        return Problem("schema", f"written by a newer ctx (schema {version}; this ctx knows up to {len(MIGRATIONS)})",
                       "upgrade ctx, then run ctx doctor again")
    return None


def check(conn: sqlite3.Connection, path: Path) -> Checkup:
    """Every check, or the one line saying why none applies; StillLocked if a writer held the graph
    throughout the busy timeout."""
    checkup = Checkup([], [])
    foreign = _not_checkable(conn, path)
    if foreign is not None:
        checkup.checked.append(foreign.check)
        checkup.problems.append(foreign)
        return checkup
    steps = (
        ("sqlite", _sqlite_integrity),
        ("counts", _kept_counts),
        ("passages", _passage_spans),
        ("fts", _full_text),
        ("vectors", _vectors),
    )
    for name, step in steps:
        checkup.checked.append(name)
        try:
            checkup.problems.extend(step(conn))
        except sqlite3.DatabaseError as exc:
            if _locked(exc):
                raise StillLocked(exc) from None
            checkup.problems.append(Problem(name, f"cannot be checked: {exc}"))
    try:
        checkup.notes.extend(_vector_notes(conn))
    except sqlite3.DatabaseError:
        pass  # the vectors check has said why already
    return checkup


def _listed(check: str, what: str, items: list[str], hint: str = REBUILD_HINT) -> list[Problem]:
    if not items:
        return []
    shown = ", ".join(items[:MAX_LISTED]) + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")
    return [Problem(check, f"{len(items)} {what}: {shown}", hint)]


def _sqlite_integrity(conn: sqlite3.Connection) -> list[Problem]:
    # A row may hold several lines (a "*** in database main ***" header, then the first problem):
    # one problem a line, the header left out.
    rows = [
        line.strip()
        for r in conn.execute("PRAGMA integrity_check(100)")
        for line in str(r[0]).splitlines()
        if line.strip() and not line.startswith("*** in database ")
    ]
    if rows == ["ok"]:
        return []
    return [Problem("sqlite", f"integrity check: {row}") for row in rows[:MAX_LISTED]] + (
        [Problem("sqlite", f"integrity check: {len(rows) - MAX_LISTED} more problems")] if len(rows) > MAX_LISTED else []
    )


def _kept_counts(conn: sqlite3.Connection) -> list[Problem]:
    """The stored counts, where their key says they describe the graph as it is, equal a recount.
    (A key that no longer matches is not a problem: readers count live then.)"""
    both = counts.kept_and_counted(conn)
    if both is None:
        return []
    stored, live = both
    wrong = [
        f"{kind} {which} {name}: kept {stored[kind][which].get(name, 0)}, counted {live[kind][which].get(name, 0)}"
        for kind in ("nodes", "edges")
        for which in ("all", "visible")
        for name in sorted(set(stored[kind][which]) | set(live[kind][which]))
        if stored[kind][which].get(name, 0) != live[kind][which].get(name, 0)
    ]
    return _listed(
        "counts", "kept counts differ from the rows", wrong,
        "the next `ctx import` that changes anything recounts them; or " + REBUILD_HINT,
    )


def _passage_spans(conn: sqlite3.Connection) -> list[Problem]:
    outside = [
        f"{r[0]} #{r[1]} [{r[2]}:{r[3]}] of {r[4]} characters"
        for r in conn.execute(
            'SELECT p.node_id, p.ord, p.start, p."end", length(n.body) FROM passages p JOIN nodes n ON n.id = p.node_id'
            ' WHERE p.own_text IS NULL AND (p.start < 0 OR p."end" < p.start OR p."end" > length(n.body))'
            " ORDER BY p.node_id, p.ord"
        )
    ]
    orphans = [
        f"{r[0]} #{r[1]}"
        for r in conn.execute(
            "SELECT node_id, ord FROM passages WHERE node_id NOT IN (SELECT id FROM nodes) ORDER BY node_id, ord"
        )
    ]
    unsplit_hint = "`ctx import` of the source re-splits the note once its file changes; or " + REBUILD_HINT
    return _listed("passages", "passages whose span is outside their node's body", outside, unsplit_hint) + _listed(
        "passages", "passages of nodes that no longer exist", orphans
    )


# Each full-text index, the rows it holds (``{only}``: the public ones in it, the private ones in
# its ``_private`` twin where the graph has one) and what they are rows of.
_INDEXES = (
    ("nodes_fts", "SELECT rowid AS rid FROM nodes{only}", "private", "nodes"),
    ("passages_fts", "SELECT p.id AS rid FROM passages p JOIN nodes n ON n.id = p.node_id{only}", "n.private", "passages"),
    ("passages_exact", "SELECT p.id AS rid FROM passages p JOIN nodes n ON n.id = p.node_id{only}", "n.private", "passages"),
)


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _full_text(conn: sqlite3.Connection) -> list[Problem]:
    """Each index holds exactly the rows it should (its docsize table has one row per indexed
    row) and is consistent in itself (FTS5's integrity-check); where it holds every row of its
    content (no private rows elsewhere), it is also checked word for word against the content."""
    problems: list[Problem] = []
    for base, rows, private, content in _INDEXES:
        every = rows.format(only="")
        if _has_table(conn, base + PRIVATE_SUFFIX):
            pairs = [(base, rows.format(only=f" WHERE {private} = 0")), (base + PRIVATE_SUFFIX, rows.format(only=f" WHERE {private} != 0"))]
        else:
            pairs = [(base, every)]
        total = conn.execute(f"SELECT COUNT(*) FROM ({every})").fetchone()[0]
        for index, expected in pairs:
            missing = conn.execute(
                f"SELECT COUNT(*) FROM ({expected}) e WHERE e.rid NOT IN (SELECT id FROM {index}_docsize)"
            ).fetchone()[0]
            extra = conn.execute(
                f"SELECT COUNT(*) FROM {index}_docsize WHERE id NOT IN (SELECT rid FROM ({expected}))"
            ).fetchone()[0]
            if missing or extra:
                problems.append(
                    Problem("fts", f"{index}: {missing} rows of {content} not indexed, {extra} indexed rows not in {content}")
                )
                continue
            held = conn.execute(f"SELECT COUNT(*) FROM {index}_docsize").fetchone()[0]
            try:
                conn.execute("BEGIN")
                try:
                    conn.execute(
                        f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', ?)", (1 if held == total else 0,)
                    )
                finally:
                    conn.execute("ROLLBACK")
            except sqlite3.DatabaseError as exc:
                if "readonly" in str(exc):
                    continue  # a read-only file: FTS5 checks only by writing a command row
                if _locked(exc):
                    raise  # another process is writing: a lock, not an index out of step
                problems.append(Problem("fts", f"{index}: the index is out of step with {content} ({exc})"))
    return problems


def _vectors(conn: sqlite3.Connection) -> list[Problem]:
    wrong_size = [
        f"{r[0]} ({r[1]})"
        for r in conn.execute("SELECT node_id, model FROM embeddings WHERE length(vector) != 4 * dim ORDER BY node_id, model")
    ] + [
        f"passage text {r[0][:12]} ({r[1]})"
        for r in conn.execute("SELECT hash, model FROM passage_vectors WHERE length(vector) != 4 * dim ORDER BY hash, model")
    ] + [
        # One paragraph vector of the wrong size fails every build that ranks by them (the
        # matrix cannot be shaped), as a passage vector's does.
        f"paragraph {r[1][:12]} of passage text {r[0][:12]} ({r[2]})"
        for r in (conn.execute(
            "SELECT passage_hash, hash, model FROM paragraph_vectors WHERE length(vector) != 4 * dim"
            " ORDER BY passage_hash, hash, model") if _has_table(conn, "paragraph_vectors") else ())
    ]
    return _listed("vectors", "vectors of the wrong size", wrong_size, "`ctx embed` (it embeds them again)")


def _vector_notes(conn: sqlite3.Connection) -> list[str]:
    """Vectors of texts that are gone: what an import leaves until the next ``ctx embed``, which
    drops them. Normal, so a note rather than a problem."""
    nodes = conn.execute("SELECT COUNT(*) FROM embeddings WHERE node_id NOT IN (SELECT id FROM nodes)").fetchone()[0]
    passages = conn.execute("SELECT COUNT(*) FROM passage_vectors WHERE hash NOT IN (SELECT hash FROM passages)").fetchone()[0]
    paragraphs = conn.execute(
        "SELECT COUNT(*) FROM paragraph_vectors WHERE passage_hash NOT IN (SELECT hash FROM passages)"
    ).fetchone()[0] if _has_table(conn, "paragraph_vectors") else 0
    if not nodes and not passages and not paragraphs:
        return []
    return [f"{nodes} node vectors, {passages} passage vectors and {paragraphs} paragraph vectors for texts no longer"
            " in the graph (the next `ctx embed` drops them)"]
