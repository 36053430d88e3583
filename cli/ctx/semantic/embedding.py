"""Embedding the graph: vectors for every passage and node whose text changed since it was last
embedded.

Incremental by content hash: a second run embeds nothing, editing one note embeds that note's
passages. Choosing a different model than the graph's makes every vector stale, so all are redone
(a graph holds one model's vectors at a time; mixing models would make similarities meaningless).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ctx.semantic.models import ModelRef
from ctx.semantic.node_text import MAX_CHARS, node_text
from ctx.store import as_store

if TYPE_CHECKING:
    from pathlib import Path

    from ctx.store.protocols import GraphReader, GraphStore

# Progress callback: (phase, done, total). The first stage: "distilling static model" (word
# pieces, once per machine), "static vectors" (passage texts); then "loading model" (one step) and
# "embedding" (texts done, texts to do: passages, then paragraphs, then nodes), moved after every batch.
Progress = Callable[[str, int, int], None]
# Which paragraphs get vectors of their own (``ctx.assemble.paragraph_vectors.pending``): given the
# graph and the model, (passage hash, paragraph hash) pairs to copy from a vector the graph holds,
# (paragraph hash, text, passage hashes) to embed, and stored pairs no longer wanted, to drop.
Paragraphs = Callable[
    ["GraphReader", str],
    tuple[list[tuple[str, str]], list[tuple[str, str, list[str]]], list[tuple[str, str]]],
]
LOADING, EMBEDDING = "loading model", "embedding"
DISTILLING, STATIC = "distilling static model", "static vectors"


@dataclass
class EmbedReport:
    model: str
    dim: int
    embedded: int
    unchanged: int
    pruned: int
    seconds: float
    switched_from: str | None = None
    passages: int = 0  # passage texts embedded (each distinct text once)
    paragraphs: int = 0  # paragraph texts embedded (``ctx.assemble.paragraph_vectors``)
    precision: str | None = None  # what the encoder ran in ("bf16", "fp32"), when it ran
    threads: int | None = None
    first_stage: str | None = None  # the static first stage's name, when the graph has one
    static_passages: int = 0  # passage texts given a static vector
    first_stage_seconds: float | None = None  # from the start to every passage searchable by meaning
    complete: bool = True  # every passage (and node) has a vector of the model itself

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds > 0 else 0.0

    @property
    def texts_rate(self) -> float:
        """Passages, paragraphs and nodes embedded per second, model load included."""
        return (self.embedded + self.passages + self.paragraphs) / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "model": self.model,
            "dim": self.dim,
            "embedded": self.embedded,
            "unchanged": self.unchanged,
            "pruned": self.pruned,
            "seconds": round(self.seconds, 3),
            "notes_per_second": round(self.rate, 1),
            "switched_from": self.switched_from,
            "passages_embedded": self.passages,
            "paragraphs_embedded": self.paragraphs,
            "texts_per_second": round(self.texts_rate, 1),
            "precision": self.precision,
            "threads": self.threads,
            "first_stage": self.first_stage,
            "static_passages": self.static_passages,
            "first_stage_seconds": None if self.first_stage_seconds is None else round(self.first_stage_seconds, 3),
            "complete": self.complete,
        }


def embed_graph(
    store: GraphStore,
    model: ModelRef,
    *,
    batch_size: int = 32,
    progress: Progress | None = None,
    encoder_factory: Callable[[ModelRef], object] | None = None,
    first_stage_only: bool = False,
    first_stage: bool = True,
    paragraphs: Paragraphs | None = None,
) -> EmbedReport:
    """Bring every passage's and node's vector up to date for ``model``. Commits after each chunk
    of batches, so an interrupted run keeps what it finished and the next run resumes from there.

    First (``first_stage``, when the model can be distilled: ``ctx.semantic.first_stage``) every
    passage without a vector of the model gets a static vector -- seconds for thousands of
    texts -- and the graph is marked as answering by candidates (``ctx.semantic.two_stage``); then,
    unless ``first_stage_only``, the model itself embeds every passage (clearing the mark when all
    are done) and node.

    A node's own vector (its title and opening: what the note is about) ranks nodes by meaning;
    its passages' vectors find the parts of a long note the node's vector cannot see past its
    first ~256 word pieces. Each distinct passage text is embedded once.
    """
    from ctx.semantic import first_stage as stage

    started = time.perf_counter()
    store = as_store(store)
    reader = store.reader(include_private=True)
    previous = reader.active_model()
    total = reader.node_count()
    first = stage.name_for(model.name) if first_stage and stage.supported(model) else None
    if first_stage_only and first is None:
        from ctx.semantic.static import is_static_model

        if model.path is None or not is_static_model(model.path):
            from ctx.errors import UsageError

            raise UsageError(
                f"--fast needs a local transformer folder to distil a static first stage from; {model.name!r} is not one"
            )
        first_stage_only = False  # a static model is its own fast stage: embed with it
    run = _EmbedRun(batch_size, progress)
    if previous != model.name and total:
        # Every text is embedded again for another model, so what embeds them is loaded first:
        # one that cannot be (a mistyped name, a folder that is not there, a folder whose weights
        # are broken) changes nothing. Switched first, the graph lost every passage vector of its
        # own model and was left named after a model it cannot embed with (its ``ctx sync``
        # failing until a ``ctx embed`` redid all). A model with a first stage is distilled here
        # too: the distillation reads the weights, which the encoder's loading may leave for later.
        if not first_stage_only:
            run.load(model, encoder_factory)
        if first is not None:
            _distilled(model, progress)
    pruned = _prune_and_activate(store, model.name, previous, first)
    report = EmbedReport(
        model=model.name, dim=0, embedded=0, unchanged=0, pruned=pruned, seconds=0.0,
        switched_from=previous if previous not in (None, model.name) else None, first_stage=first,
    )
    if first_stage_only:
        # The model's own lists are not read (every text of a big vault): only the static stage.
        assert first is not None
        report.static_passages = _first_stage(store, model, first, progress)
        if report.static_passages or reader.setting(stage.SETTING):
            _mark_first_stage(store, first)
            report.first_stage_seconds = time.perf_counter() - started
        status = reader.embedding_status(model.name)
        report.complete = not reader.setting(stage.SETTING) and status.missing == 0
        report.unchanged = status.fresh
        report.dim = reader.model_dim(model.name)
        report.seconds = time.perf_counter() - started
        return report
    pending_passages = reader.pending_passages(model.name)
    # A log's long passages' paragraphs (``paragraphs``: ``ctx.assemble.paragraph_vectors.pending``):
    # the ones whose text has a vector already under another passage are copied, only new texts
    # are embedded.
    copy_paragraphs, pending_paragraphs, stale_paragraphs = paragraphs(reader, model.name) if paragraphs else ([], [], [])
    pending = reader.pending_node_ids(model.name)
    report.unchanged = total - len(pending)
    if first is not None and pending_passages:
        report.static_passages = _first_stage(store, model, first, progress)
        _mark_first_stage(store, first)
        report.first_stage_seconds = time.perf_counter() - started
    run.begin(len(pending_passages) + len(pending_paragraphs) + len(pending), model, encoder_factory)

    def write_passages(part: list[int], out: list[np.ndarray]) -> None:
        with store.import_session() as session:
            session.write_passage_vectors(model.name, [(pending_passages[i][0], v) for i, v in zip(part, out, strict=True)])

    run.embed_sorted([text[:MAX_CHARS] for _, text in pending_passages], write_passages)
    # Every passage has the model's own vector: builds rank all of them again, not candidates.
    _mark_first_stage(store, None)
    if copy_paragraphs:
        with store.import_session() as session:
            session.copy_paragraph_vectors(model.name, copy_paragraphs)

    def write_paragraphs(part: list[int], out: list[np.ndarray]) -> None:
        rows = [(ph, pending_paragraphs[i][0], v)
                for i, v in zip(part, out, strict=True) for ph in pending_paragraphs[i][2]]
        with store.import_session() as session:
            session.write_paragraph_vectors(model.name, rows)

    run.embed_sorted([text for _, text, _ in pending_paragraphs], write_paragraphs)
    if paragraphs is not None:
        with store.import_session() as session:
            session.prune_paragraph_vectors(model.name, stale_paragraphs)
    embedded = 0
    # Node texts are read a window at a time (a node's text can be long) and sorted within it.
    for rows in reader.node_texts(pending, chunk=batch_size * 64):

        def write_nodes(part: list[int], out: list[np.ndarray], rows: list[tuple[str, str, str, str]] = rows) -> None:
            with store.import_session() as session:
                session.write_vectors(model.name, [(rows[i][0], rows[i][3], v) for i, v in zip(part, out, strict=True)])

        embedded += run.embed_sorted([node_text(title, body) for _, title, body, _ in rows], write_nodes)
    if embedded:
        # The engine's approximate index, built once the vectors are in (PostgreSQL's HNSW).
        with store.import_session() as session:
            session.index_vectors(model.name)
    report.dim = run.dim or reader.model_dim(model.name)
    report.embedded = embedded
    report.passages = len(pending_passages)
    report.paragraphs = len(pending_paragraphs)
    report.precision = getattr(run.encoder, "precision", None)
    report.threads = getattr(run.encoder, "threads", None)
    report.seconds = time.perf_counter() - started
    return report


def _distilled(model: ModelRef, progress: Progress | None) -> Path:
    """The model's distilled static folder, distilled now (with progress) if this machine lacks it."""
    from ctx.semantic import first_stage as stage

    folder = stage.ready(model)
    if folder is None:
        if progress:
            progress(DISTILLING, 0, 1)
        folder = stage.ensure(model, (lambda done, total: progress(DISTILLING, done, total)) if progress else None)
    return folder


def _first_stage(store: GraphStore, model: ModelRef, first: str, progress: Progress | None) -> int:
    """Static vectors for every passage text without one; returns how many were written."""
    from ctx.semantic import static

    reader = store.reader(include_private=True)
    todo = reader.pending_passages(first)
    if not todo:
        return 0
    encoder = static.load(str(_distilled(model, progress)))
    chunk = 2048
    if progress:
        progress(STATIC, 0, len(todo))
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        vectors = encoder.encode([text[:MAX_CHARS] for _, text in part])
        with store.import_session() as session:
            session.write_passage_vectors(first, [(h, v) for (h, _), v in zip(part, vectors, strict=True)])
        if progress:
            progress(STATIC, start + len(part), len(todo))
    return len(todo)


def _mark_first_stage(store: GraphStore, first: str | None) -> None:
    """Builds rank candidates (``first``) or every passage (None) by the model's own vectors."""
    from ctx.semantic import first_stage as stage

    if (store.reader(include_private=True).setting(stage.SETTING) or None) == first:
        return
    with store.import_session() as session:
        session.set_setting(stage.SETTING, first or "")


def _prune_and_activate(store: GraphStore, model_name: str, previous: str | None, first: str | None) -> int:
    """Drop the vectors no node or passage needs (keeping the first stage's, ``first``); make
    ``model_name`` the graph's model, so every other model's vectors are stale and never ranked
    with this one's. Returns node vectors dropped."""
    with store.import_session() as session:
        pruned = int(session.prune_orphan_vectors(model_name, first))
    if previous != model_name:
        with store.import_session() as session:
            session.set_active_model(model_name)
    return pruned


class _EmbedRun:
    """One embed's encoder, loaded only when there is work, and its progress over all the texts
    to embed (passages, then nodes)."""

    def __init__(self, batch_size: int, progress: Progress | None) -> None:
        self.batch_size, self.progress, self.work = batch_size, progress, 0
        self.encoder: Any = None  # a DocumentEncoder, or what a test passes as encoder_factory
        self.dim = 0
        self.done = 0

    def load(self, model: ModelRef, encoder_factory: Callable[[ModelRef], object] | None) -> None:
        # Only now pay for sentence-transformers: an up-to-date graph never imports torch.
        if encoder_factory is None:
            from ctx.semantic.encoder import document_encoder

            encoder_factory = document_encoder
        if self.progress:
            self.progress(LOADING, 0, 1)
        self.encoder = encoder_factory(model)
        self.dim = int(getattr(self.encoder, "dim", 0))

    def begin(self, work: int, model: ModelRef, encoder_factory: Callable[[ModelRef], object] | None) -> None:
        """``work`` texts to embed: the encoder loaded (unless it was already), progress at 0."""
        self.work = work
        if not work:
            return
        if self.encoder is None:
            self.load(model, encoder_factory)
        if self.progress:
            self.progress(EMBEDDING, 0, self.work)

    def lengths(self, texts: list[str]) -> list[int]:
        measure = getattr(self.encoder, "token_lengths", None)
        return list(measure(texts)) if measure is not None else [len(t) for t in texts]

    def embed_sorted(self, texts: list[str], write: Callable[[list[int], list[np.ndarray]], None]) -> int:
        """Embed ``texts`` longest first, so each batch holds texts of one length (padding is work
        thrown away: sorting by characters left 31% of a vault's passage batches padding, by word
        pieces 0.5%). ``write(indices, vectors)`` stores each chunk of a few batches as it is done,
        so an interrupted run keeps its work; progress moves after every batch. Returns how many
        texts were embedded."""
        if not texts:
            return 0
        size = self.lengths(texts)
        order = sorted(range(len(texts)), key=lambda i: (-size[i], i))
        chunk = self.batch_size * 8
        for start in range(0, len(order), chunk):
            part = order[start : start + chunk]
            write(part, self._encode_chunk([texts[i] for i in part]))
        return len(texts)

    def _encode_chunk(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for first in range(0, len(texts), self.batch_size):
            batch = texts[first : first + self.batch_size]
            encoded = self.encoder.encode(batch, batch_size=self.batch_size)
            self.dim = int(encoded.shape[1])
            out.extend(encoded)
            self.done += len(batch)
            if self.progress:
                self.progress(EMBEDDING, self.done, self.work)
        return out
