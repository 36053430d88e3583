"""Dedup: drop content the context already carries, before packing spends budget on it twice.

Exact duplicates are found by a hash of the normalised text (case and whitespace folded).
Near duplicates (seed 004: ">= 80% overlap") by word shingles: the share of a candidate's shingles
that an already kept text contains. The measure is asymmetric on purpose: a short note copied into a
longer one adds nothing once the longer one is kept, while the longer one still adds its extra text
when the short one came first.

Items arrive best first; an item is only ever a duplicate of a better one, so the best copy stays.
An inverted index (shingle -> kept items) keeps this near-linear in the total text size.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctx.digest import blake2b

if TYPE_CHECKING:
    from ctx.assemble.candidate import Candidate

SHINGLE_WORDS = 4  # long enough that common phrases do not look like copying
MIN_WORDS_FOR_NEAR = 8  # shorter texts are only compared exactly: a few shared words prove nothing

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Duplicate:
    id: str
    of: str  # the better item whose text already covers this one
    kind: str  # "exact" or "near"
    overlap: float  # share of this item's shingles found in ``of`` (1.0 for exact)

    @property
    def reason(self) -> str:
        if self.kind == "exact":
            return f"duplicate of {self.of}"
        return f"duplicate of {self.of} ({self.overlap:.0%} overlap)"


def normalise(text: str) -> str:
    return " ".join(text.casefold().split())


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def shingles(text: str, size: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    tokens = words(text)
    if len(tokens) <= size:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def overlap(candidate: str, kept: str, size: int = SHINGLE_WORDS) -> float:
    """Share of ``candidate``'s shingles that also occur in ``kept`` (0 when it has none)."""
    mine = shingles(candidate, size)
    if not mine:
        return 0.0
    return len(mine & shingles(kept, size)) / len(mine)


def find_duplicates(
    items: Iterable[tuple[str, str]],
    *,
    exact: bool = True,
    near: bool = False,
    threshold: float = 0.8,
    protected: frozenset[str] = frozenset(),
) -> dict[str, Duplicate]:
    """Which of ``items`` ((id, text), best first) repeat a better item: id -> Duplicate.

    Empty texts are never duplicates (two title-only nodes are different things). ``protected`` ids
    (the seeds) are never removed, but later copies of them are.
    """
    if exact and not near:
        return _exact_duplicates(items, protected)
    found: dict[str, Duplicate] = {}
    by_hash: dict[str, str] = {}
    index: dict[tuple[str, ...], list[str]] = {}
    kept_rank: dict[str, int] = {}
    for item_id, text in items:
        flat = normalise(text or "")
        if not flat:
            continue
        digest = blake2b(flat.encode("utf-8"), digest_size=16).hexdigest()
        if exact and digest in by_hash and item_id not in protected:
            found[item_id] = Duplicate(item_id, by_hash[digest], "exact", 1.0)
            continue
        mine: set[tuple[str, ...]] = set()
        if near:
            mine = shingles(flat)
            if len(words(flat)) >= MIN_WORDS_FOR_NEAR and item_id not in protected:
                hits: Counter[str] = Counter()
                for sh in mine:
                    for other in index.get(sh, ()):
                        hits[other] += 1
                if hits:
                    # The most covering kept item; ties go to the better-ranked (earlier) one.
                    best, count = min(hits.items(), key=lambda kv: (-kv[1], kept_rank[kv[0]]))
                    share = count / len(mine)
                    if share >= threshold:
                        found[item_id] = Duplicate(item_id, best, "near", round(share, 4))
                        continue
        by_hash.setdefault(digest, item_id)
        kept_rank[item_id] = len(kept_rank)
        for sh in mine:
            index.setdefault(sh, []).append(item_id)
    return found


def _exact_duplicates(items: Iterable[tuple[str, str]], protected: frozenset[str]) -> dict[str, Duplicate]:
    """``find_duplicates`` with exact copies only: what the hash of the normalised text finds, with
    a text normalised only where an earlier one shares its first and last word (casefolded), which
    every copy does. Normalising splits the whole text into words: ~10 us a body, most of a new
    question's dedup at 100k, where ~40 bodies rarely share both words."""
    found: dict[str, Duplicate] = {}
    alone: dict[tuple[str, str], tuple[str, str]] = {}  # ends -> (id, casefolded text): kept, not normalised
    kept: dict[tuple[str, str], dict[str, str]] = {}  # ends -> normalised text -> the first kept id
    for item_id, text in items:
        folded = (text or "").casefold()
        head = folded.split(None, 1)
        if not head:
            continue  # an empty text is never a duplicate
        ends = (head[0], folded.rsplit(None, 1)[-1])
        flats = kept.get(ends)
        if flats is None:
            first = alone.get(ends)
            if first is None:
                alone[ends] = (item_id, folded)
                continue
            del alone[ends]
            flats = kept[ends] = {" ".join(first[1].split()): first[0]}
        flat = " ".join(folded.split())
        if flat in flats and item_id not in protected:
            found[item_id] = Duplicate(item_id, flats[flat], "exact", 1.0)
            continue
        flats.setdefault(flat, item_id)
    return found


def drop_duplicates(candidates: list["Candidate"], exact: bool, near: bool, threshold: float) -> set[str]:
    """Mark candidates (best first, bodies loaded) whose text repeats a better one; return their ids.

    A marked candidate leaves every section (it is not even summarised: its content is already
    there) and its reason names the copy that stays, for the audit trail.
    """
    if not exact and not near:
        return set()
    found = find_duplicates(
        ((c.id, c.body or "") for c in candidates),
        exact=exact,
        near=near,
        threshold=threshold,
        protected=frozenset(c.id for c in candidates if c.seed),
    )
    for c in candidates:
        dup = found.get(c.id)
        if dup is not None:
            c.section = None
            c.reason = dup.reason
    return set(found)
