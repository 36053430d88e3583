"""Which paragraphs get a vector of their own, and the texts ``ctx embed`` stores them for.

A log note's passage (a lab notebook's session, ~6,000 tokens split into passages of several
unrelated paragraphs each) has one vector, diluted over every paragraph: the entry answering a
question ranked far below passages near it as a whole, and chunk retrieval over ~150-token
chunks beat the embedded graph at 4,000 tokens (issue 23; memory_logs2 kind). Each paragraph of
such a passage is embedded too, and a build lends the passage the rank of its nearest paragraph
(``passage_rank._by_paragraphs``).

Only where it pays: a note that reads as a log (``note_shape.is_log``) and not a day page (an
outliner's blocks are nodes with their own vectors already: ``_by_blocks``), and only its
passages holding two paragraphs or more that are not headings (one paragraph: the passage's own
vector is that paragraph's). A page about one thing keeps its passages' vectors alone: its
paragraphs speak for the page together.

Keyed by the passage's text hash and the paragraph's: an edited passage has a new hash, so its
old paragraph vectors are never read for it (and are pruned); its unchanged paragraphs take
their vectors over without being embedded again.

Here in assembly, not in ``ctx.semantic``: which notes are logs is the assembler's reading
(``note_shape``, ``matching_lines``); ``ctx embed`` (``embedding.embed_graph``) is handed
``pending`` by the library (``Graph.embed``, ``sync``) and stores what it is given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ctx.assemble import matching_lines as ml
from ctx.digest import text_digest
from ctx.importers.dates import day_named
from ctx.assemble.note_shape import _WHEN, is_log
from ctx.semantic.node_text import MAX_CHARS

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader
    from ctx.store.types import NodeFacts, StoredPassage

MIN_PARAGRAPHS = 2
_CHUNK = 500


def paragraphs_of(text: str) -> list[str]:
    """The paragraphs of a passage's ``text`` that get vectors: its non-heading paragraphs, when
    there are ``MIN_PARAGRAPHS`` or more, else none."""
    paras = [p for p in ml.paragraphs(text) if not ml.is_heading(p)]
    return paras if len(paras) >= MIN_PARAGRAPHS else []


def paragraph_hash(paragraph: str) -> str:
    """The key of a paragraph's vector: its embedded text's hash, as a passage's (the store's
    ``passage_reads.passage_hash``, the same digest)."""
    return text_digest(embed_text(paragraph))


def embed_text(paragraph: str) -> str:
    return paragraph[:MAX_CHARS]


def wanted(reader: GraphReader) -> list[tuple[str, str, str]]:
    """(passage hash, paragraph hash, text to embed) of every paragraph that should have a vector,
    each pair once, in the store's node order."""
    out: dict[tuple[str, str], str] = {}
    ids = reader.nodes_with_passages(MIN_PARAGRAPHS)
    for start in range(0, len(ids), _CHUNK):
        part = ids[start : start + _CHUNK]
        found = reader.passages_of(part)
        for facts in reader.node_facts([i for i in part if i in found], with_fields=True):
            rows = found[facts.id]
            if not _is_dated_log(facts, rows):
                continue
            for p in rows:
                for para in paragraphs_of(p.text):
                    text = embed_text(para)
                    out.setdefault((p.hash, text_digest(text)), text)
    return [(ph, h, text) for (ph, h), text in out.items()]


def _is_dated_log(facts: NodeFacts, rows: Sequence[StoredPassage]) -> bool:
    """Whether a node (its facts with fields, its passages) gets paragraph vectors: a log, dated
    or a transcript, that is not a day page."""
    if facts.type == "journal":
        return False
    # A conversation is a record of turns by its shape, whatever its frontmatter says: a chat
    # export's ``created:`` (a node column: every note has a date, a written one or its file's)
    # cannot tell it from a page a template stamped.
    if not (_dated(facts.fields, rows) or _named_for_a_day(facts) or is_transcript(rows)):
        return False
    return is_log(facts.title, [(p.heading, p.text) for p in rows])


def dated_logs(reader: GraphReader, node_ids: list[str], passages: Mapping[str, Sequence[StoredPassage]]) -> set[str]:
    """Those of ``node_ids`` (``passages``: theirs) that get paragraph vectors. A stored paragraph
    vector is keyed by its passage's text, and a note that is not a log can hold the same text (a
    copy of a dated log under another folder, without the date): read by passage text alone, the
    log's paragraphs would rank the copy too, and a private log's would rank a public copy and be
    counted for it. So a build lends, and ``ctx stats`` counts, only for these nodes."""
    ids = sorted(i for i in set(node_ids) if i in passages)
    return {f.id for f in reader.node_facts(ids, with_fields=True) if _is_dated_log(f, passages[f.id])}


def visible_count(reader: GraphReader, model: str | None) -> int:
    """``ctx stats``' count of ``model``'s paragraph vectors: the stored (passage text, paragraph)
    pairs held by a node the reader may see that is a dated log (``dated_logs``)."""
    if model is None or not reader.paragraph_vector_count(model):
        return 0
    # Their keys and owners only: the vectors themselves (the whole matrix) are not read to count.
    owners = reader.paragraph_vector_owners(model)
    visible = sorted(reader.visible_ids(sorted({node for node, _, _ in owners})))
    logs = dated_logs(reader, visible, reader.passages_of(visible))
    return len({(passage, h) for node, passage, h in owners if node in logs})


# A log worth paragraph vectors is a record of dated sessions: a note dated by its own field
# (``date``, ``day``, ``created`` where an importer keeps it as a field: Markdown frontmatter's
# ``created`` is a node column, not a field, as every Dendron note has one) or one whose passages
# are mostly under timed headings. ``is_log`` alone also calls a how-to page a log (foam-docs'
# installation and get-started pages: their paragraphs' lent ranks pushed answering pages out,
# bench_facts with embeddings 0.881 -> 0.862).
DATE_FIELDS = frozenset({"date", "created", "day"})

# A transcript's turns: an assistant chat export's ``#### User`` / ``#### Assistant``, a meeting
# transcript's speakers, an interview's ``## Q`` / ``## A``. Dated by ``created:`` only (a column,
# not a field: see above), such a note got no paragraph vectors, and each passage's one vector was
# diluted over a user's turn of unrelated asides: bench_memory's memory_logs4 dev sets 1300 / 1301
# with embeddings 0.756 / 0.793 / 0.841 and 0.658 / 0.734 / 0.838 at 1k / 2k / 4k without them,
# 0.817 / 0.878 / 0.963 and 0.749 / 0.798 / 0.892 with them (docs/scale.md). Counting the key
# alone made the demo vault's project pages logs (a template stamps ``created:`` on every page);
# a page's headings each name a part of its one subject and rarely repeat. Of the bench_facts
# corpora, the demo vault and ``../shared``'s exports, no note is a transcript by this reading.
TRANSCRIPT_MIN_HEADINGS = 4
TRANSCRIPT_REPEATS = 3  # each heading text used this many times on average, or more


def is_transcript(rows: Sequence[Any]) -> bool:
    """Whether the headings of a note's passages (``rows``, their ``text``) are turns: four or
    more, and a few names said over and over. Headings as ``paragraphs_of`` reads them
    (``matching_lines``: a fenced block is one paragraph, so a code comment is no heading)."""
    names = [para.split("\n", 1)[0].strip(" \t#").lower()
             for p in rows for para in ml.paragraphs(p.text) if ml.is_heading(para)]
    return len(names) >= TRANSCRIPT_MIN_HEADINGS and TRANSCRIPT_REPEATS * len(set(names)) <= len(names)


# The files a note is the whole of: a Markdown importer reads one note from each. A JSON, OPML or
# outliner export holds many pages, and its file's name says nothing of each one's day.
_ONE_NOTE_FILES = (".md", ".markdown")


def _named_for_a_day(facts: NodeFacts) -> bool:
    """A daily note: its file (or, where the file is not the note alone, its title) is named for
    its day (``2024-05-28.md``, Obsidian's default), with no date field to say so."""
    source = PurePosixPath(facts.source_path) if facts.source_path else None
    name = source.stem if source is not None and source.suffix.lower() in _ONE_NOTE_FILES else facts.title
    return day_named(name) is not None


def _dated(fields: object, rows: Sequence[Any]) -> bool:
    if isinstance(fields, dict) and any(str(k).lower() in DATE_FIELDS for k in fields):
        return True
    timed = sum(1 for p in rows if p.heading and _WHEN.search(p.heading[-1]))
    return 2 * timed >= len(rows)


def pending(
    reader: GraphReader, model: str,
) -> tuple[list[tuple[str, str]], list[tuple[str, str, list[str]]], list[tuple[str, str]]]:
    """What ``ctx embed`` still has to do for ``model`` (its ``paragraphs`` argument): (passage
    hash, paragraph hash) pairs whose paragraph text has a vector already (under another passage:
    copied, not embedded); each paragraph text to embed with its hash and the passage hashes
    that hold it, (hash, text, [passage hash, ...]); and the stored pairs no longer wanted, to
    drop. A passage whose note stopped being a dated log (its ``date`` field taken out) keeps
    its text and hash, so only this reading says its paragraph vectors are stale: kept, builds
    would go on lending its passages their ranks."""
    have = reader.paragraph_vector_keys(model)
    texts = reader.paragraph_vector_hashes(model)
    copy: list[tuple[str, str]] = []
    embed: dict[str, tuple[str, str, list[str]]] = {}
    keep: set[tuple[str, str]] = set()
    for ph, h, text in wanted(reader):
        keep.add((ph, h))
        if (ph, h) in have:
            continue
        if h in texts:
            copy.append((ph, h))
        else:
            embed.setdefault(h, (h, text, []))[2].append(ph)
    return copy, list(embed.values()), sorted(have - keep)
