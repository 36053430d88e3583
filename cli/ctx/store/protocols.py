"""The one face of the store: what the rest of ctx may ask of a graph, whatever engine holds it.

Three protocols, no database type in any signature:

* ``GraphStore``: an open graph (a SQLite file today, a PostgreSQL database next). It hands out
  readers and write sessions and is closed once.
* ``GraphReader``: every read the build stages (``ctx.assemble``), the semantic layer, inspection,
  sync, freshness and the MCP server make. Visibility is the reader's property: a reader made
  with ``include_private=False`` never returns a private node, nor anything that names one,
  unless a method says otherwise. (The SQLite engine: ``ctx.store.view.GraphView``.)
* ``ImportSession``: the ordered write protocol of an import, the per-file savepoint of a
  streamed file, source removal, and the vector writes of ``ctx embed``; one session is one
  transaction: everything it wrote is committed when its ``with`` block ends normally and none
  of it when it ends by an exception. (SQLite: ``ctx.store.sqlite_store.SqliteSession``.)

Values are the plain dataclasses and tuples of ``ctx.store.types``.

What "the same answers" means. Two engines given the same imported sources must return the same
ids, the same values and the same order from every method, with one exception: full-text
*ranking* (``search``'s order and scores, ``search_passages``' scores and so its order,
``notes_matching``'s notion of a matching word) may differ, since
SQLite's FTS5 BM25 has no exact twin elsewhere; what matches must still be filtered the same way.
Where an order is stated below, it is total (it ends in a unique key), and text compares by
Unicode code point (SQLite's BINARY collation, PostgreSQL's ``COLLATE "C"``), never by locale.
``length(x)`` of a text counts characters (code points), not bytes. Lists of ids given to a
method may be of any length (an engine chunks them); an id that does not exist is ignored unless
a method says otherwise. Private nodes: ``nodes.private`` as computed by the last
``refresh_private_flags``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Hashable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ctx.store.types import (
    MAX_QUERY_TERMS,
    Crumb,
    EdgeRecord,
    EdgeView,
    EmbeddingStatus,
    FileRecord,
    FileState,
    Neighbour,
    RankedNeighbour,
    ScanTable,
    Node,
    NodeFacts,
    NodeRecord,
    NodeText,
    Outline,
    PassageHit,
    Removed,
    SearchHit,
    Settled,
    Source,
    StoredPassage,
    WalkEdge,
    EdgeEnds,
    WalkDetail,
    Written,
)

if TYPE_CHECKING:
    import numpy as np

    from ctx.config import PrivacyConfig, PrivacyRules

__all__ = ["GraphReader", "GraphStore", "ImportSession", "MAX_QUERY_TERMS", "NeighbourOrder", "SourceRecords", "StreamedWrites"]

TokenCounter = Callable[[list[str]], list[int]]  # texts -> their token counts, same length and order
KeyNormalizer = Callable[[str], str]  # how a format compares names (lowercase by default)


class NeighbourOrder(Protocol):
    """How a hub's neighbours are ranked for the fan-out cap (``ctx.assemble.score.NeighbourRanker``)."""

    type_boosts: dict[str, float]
    tag_boosts: dict[str, float]
    reference: float | None
    half_life: float
    recency_share: float

    def boost(self, ntype: str, tags: str | None) -> float: ...


class SourceRecords(Protocol):
    """One source's records as written so far in the open session: what a format's ``finalize``
    reads back to derive records from the whole source (namespaces, hierarchy stubs)."""

    def file_nodes(self) -> list[tuple[str, list[str]]]:
        """(id, tags) of every node of the source read from a file (not derived, file != ''), in
        the order they were written (SQLite: rowid)."""
        ...

    def keys(self, kinds: tuple[str, ...], *, node_types: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
        """(key, kind, node id) of the source's name keys of these ``kinds``, best claim first:
        priority ascending, then length(node id), then node id. With ``node_types``, only keys of
        nodes read from a file whose type is one of them."""
        ...


class StreamedWrites(Protocol):
    """The writes of one file read a batch at a time (a JSON graph of any size): nodes go in batch
    by batch, edges wait until the whole file is read (``ctx.store.streamed``)."""

    def known_ids(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that a node this file already wrote was read with (its stored id, or
        the id a clash renamed)."""
        ...

    def add(self, nodes: list[NodeRecord], edges: list[EdgeRecord]) -> Written:
        """Write a batch's nodes as ``ImportSession.insert_records`` does (tag edges included);
        hold ``edges`` until ``settle``."""
        ...

    def settle(self) -> Settled:
        """Write the held edges: for each (src, type, target) only the first stated, only when src
        is a node of this file, with src (and target, for by-id edges) renamed as their nodes
        were; in the order they were read. Children read before a renamed parent get the new
        parent id. ``dangling``: (type, src) of the first 20 edges left out, in file order."""
        ...


class NearestNodes(Protocol):
    """Nodes nearest a query vector: (id, cosine similarity) best first, ties by id."""

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[str, float]]: ...


class GraphReader(Protocol):
    """Every read of the graph, as one reader may see it (``include_private``)."""

    include_private: bool

    # -- visibility ------------------------------------------------------------------------------

    def has_private_nodes(self) -> bool:
        """Whether any node of the graph is private (whatever this reader may show)."""
        ...

    def private_among(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` that are private nodes (whatever this reader may show)."""
        ...

    def hidden_among(self, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` this reader may not show (empty when it includes private nodes)."""
        ...

    def visible_ids(self, ids: list[str]) -> set[str]:
        """The ids that exist and may be shown."""
        ...

    def hidden_total(self) -> int:
        """How many nodes this reader may not see (0 when it includes private nodes): a nearest-
        neighbour search over every vector fetches this many more, so that the visible hits fill
        its pool as they would in the graph without private nodes."""
        ...

    def hidden_passages_total(self) -> int:
        """How many passages belong to nodes this reader may not see (see ``hidden_total``)."""
        ...

    # Nothing here answers a question about private nodes that depends on a query: any such
    # answer would be an oracle over private text (issue 24). A reader without access gets, from
    # every method, what the graph without its private nodes would give (full-text statistics
    # included: private rows are indexed apart).

    # -- nodes -----------------------------------------------------------------------------------

    def node_exists(self, node_id: str) -> bool:
        """Whether a node with exactly this id exists and may be shown."""
        ...

    def node(self, node_id: str) -> Node | None:
        """The visible node with this id, every column; None if absent or hidden."""
        ...

    def resolve_one(self, id_or_title: str) -> str | None:
        """``id_or_title`` itself when it is a visible node's id, else ``find_by_name``'s first."""
        ...

    def node_facts(self, ids: list[str], *, with_fields: bool) -> list[NodeFacts]:
        """The light columns of the given nodes (no body), sorted by id. ``fields`` parsed only
        ``with_fields`` (else ``{}``). No visibility filter: callers pass ids this reader gave."""
        ...

    def bodies(self, ids: list[str]) -> dict[str, str]:
        """id -> body ('' for a null body) of the given nodes. No visibility filter, as above."""
        ...

    def newest_update(self) -> float | None:
        """The largest ``updated`` of any node (private ones too): a build's reference "now"."""
        ...

    def node_count(self) -> int:
        """How many nodes the graph has, private ones included."""
        ...

    def is_empty(self) -> bool:
        """Whether the graph has no node at all (nothing imported yet)."""
        ...

    def node_texts(self, ids: list[str], chunk: int = 256) -> Iterator[list[NodeText]]:
        """(id, title, body, content hash) of ``ids``, ``chunk`` ids at a time, in the given
        order (absent ids skipped)."""
        ...

    # -- names and full text ---------------------------------------------------------------------

    def find_by_name(self, text: str) -> list[str]:
        """Visible node ids with a title or alias key (``node_keys`` of kind title/alias/any but
        'id') equal to ``text.strip().lower()``, ordered by their lowest key priority, then
        length(id), then id. If none: visible nodes whose title equals ``text.strip()`` ignoring
        ASCII case only (SQLite NOCASE), by length(id), then id. [] for blank text."""
        ...

    def find_by_path(self, text: str) -> list[str]:
        """The visible node a file path names (``ctx.store.reads.find_by_path``): the one top-level
        node (its parent absent or in another file) of that file, the path written relative to its
        source's root (with or without ``.md``/``.markdown``) or as a path on disk inside a
        source's root; [] when the file holds several top-level nodes or the text is no path."""
        ...

    def find_mentions(self, text: str) -> list[str]:
        """Visible node ids whose title or alias occurs verbatim (word-bounded, case-insensitive)
        in ``text``: the rules and the order of ``ctx.store.reads.find_mentions`` (longest name
        first, then position in the text, then id). The engine answers only the lookup of one
        lowered phrase ``p``: title/alias keys equal to ``p`` or starting with ``p + " ("``."""
        ...

    def search(self, text: str, *, limit: int = 20, mode: str = "auto", snippets: bool = True) -> list[SearchHit]:
        """Full-text search over title, aliases and body (weights 10 : 5 : 1) of visible nodes:
        every word of ``text`` (``mode`` 'and'), any word ('or'), or 'and' then 'or' when the
        first finds nothing ('auto'). Best first, ties by id; at most ``limit``. Ranking, scores
        and snippets are the engine's (the one place engines may differ). ``snippets=False``: a
        ranking that needs no snippet, each hit's left empty (they cost more than the ranking)."""
        ...

    def notes_matching(self, word: str, *, at_most: int) -> int:
        """How many visible nodes a full-text search for any word of ``word`` finds, counting no
        further than ``at_most``."""
        ...

    def name_keys_of(self, ids: list[str]) -> list[tuple[str, str]]:
        """(title or alias key, node title) of each visible node among ``ids``, ordered by key then
        title: the names of notes a search already found (for "did you mean")."""
        ...

    def name_keys_near(self, key: str, *, cutoff: float, max_keys: int) -> dict[str, str]:
        """Title and alias keys of visible nodes that may be spelled like ``key`` (for "did you
        mean"): length within 3 of len(key), and sharing, as multisets of characters, at least
        ``cutoff * (len(key) + len(k)) / 2`` characters with ``key`` (less 1e-9). key -> the
        smallest title (code-point order) among visible nodes carrying it. The first
        ``max_keys`` such keys in key order."""
        ...

    # -- edges and the walk ----------------------------------------------------------------------

    def walk_edges(self, ids: list[str], column: str) -> list[WalkEdge]:
        """Resolved edges whose ``column`` ('src' or 'dst') is one of ``ids``, with the type,
        tags (JSON text), updated and title of the node at the other end, which must exist and
        be visible (nothing behind a private node leaks through the walk). Any order: callers
        sort."""
        ...

    def edge_ends(self, ids: list[str], column: str) -> list[EdgeEnds]:
        """(src, dst, type) of the resolved edges whose ``column`` ('src' or 'dst') is one of
        ``ids``, whatever is at the other end (private or not): ``walk_edges`` without the other
        end's details or visibility, which a caller that keeps ``walk_details`` adds itself.
        Index steps only. Any order: callers sort."""
        ...

    def edge_lists(self, node_id: str, column: str) -> list[tuple[str, list[str]]]:
        """The node's resolved edges on ``column`` ('src' or 'dst') as ``edge_ends`` reads them,
        one list per edge type: (type, the other ends), types sorted, each list in the edge
        index's order (the other end's), self-loops left out, hidden ends kept. What a warm
        process reads of a hub (thousands of links) in one pass."""
        ...

    def walk_details(self, ids: list[str] | None = None) -> list[WalkDetail]:
        """(id, type, tags, updated, title) of each visible node among ``ids`` (every visible node
        when None): what ``walk_edges`` reads of the node at an edge's other end. Ids that name no
        visible node are absent. Any order."""
        ...

    def degrees(self, ids: list[str], column: str, at_most: int | None = None) -> dict[str, int]:
        """How many edges each of ``ids`` has on ``column`` ('src': out, 'dst': in), hidden or
        unresolved ends included; ids without any are absent. With ``at_most``, a node with more
        counts as ``at_most`` (telling a hub from an ordinary node need not count a tag's
        200,000 links)."""
        ...

    def edge_classes(self, node_id: str) -> list[tuple[str, str]]:
        """The distinct (type, direction) pairs of the node's edges (any end, hidden included):
        'out' types sorted, then 'in' types sorted."""
        ...

    def remember_reached(self, costs: Iterable[tuple[str, float]], *, reset: bool = False) -> None:
        """Hold the walk's reached nodes with their costs for this reader only (never in the
        graph), for ``best_neighbours``; ``reset`` forgets what was held before. A node given
        again takes its latest cost."""
        ...

    def best_neighbours(
        self, node_id: str, base: float, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> tuple[int, list[Neighbour]]:
        """A hub's fresh visible neighbours over the edges ``weights`` names ((type, direction) ->
        rule weight; 'out' edges have node_id as src, 'in' as dst; self-loops left out): how many
        there are, and the best ``limit`` as (id, type, tags, updated, title).

        Fresh: not held by ``remember_reached``, or held at a cost c with
        ``base + 1 / w < c - 1e-12``, w the largest weight of an edge to it. Value of a
        neighbour: the largest over its edges of ``ranker.boost(type, tags) * (weight +
        ranker.recency_share * r)``, r = ``0.5 ** ((max(0, ranker.reference - updated) / 86400)
        / ranker.half_life)`` (0 when updated is null, or when ``reference`` is None or
        ``recency_share`` is 0), in double precision. Best: value descending, then id."""
        ...

    def ranks_best_alone(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> bool:
        """Whether ``best_neighbours`` finds this hub's best without ranking every neighbour: a
        warm process then asks it each time instead of reading and keeping the whole list
        (``ranked_neighbours``), which costs more to read than such an answer."""
        ...

    def scan_table(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder, limit: int
    ) -> ScanTable | None:
        """What a warm process keeps to rank a hub that ``ranks_best_alone`` as the store does
        (``ctx.assemble.warm``), or None where the store does not rank it that way."""
        ...

    def newest_neighbours(
        self, node_id: str, cls: tuple[str, str], count: int, after: tuple[float, str] | None = None
    ) -> list[Neighbour]:
        """Up to ``count`` visible dated neighbours of the node by one edge class (type,
        direction; self-loops left out), newest first, one date's in id order; with ``after``
        (updated, id), only those after it in that order."""
        ...

    def ranked_neighbours(
        self, node_id: str, weights: dict[tuple[str, str], float], ranker: NeighbourOrder
    ) -> list[RankedNeighbour]:
        """Every visible neighbour of ``best_neighbours``, fresh or not, best first as it ranks
        them, as (id, type, tags, updated, title, w), w the largest weight of an edge to it: what
        a warm process keeps for a hub and filters by the walk's costs itself
        (``ctx.assemble.warm``)."""
        ...

    def edges_around(
        self, node_id: str, classes: Iterable[tuple[str, str]], others: list[str], degree: int = 0
    ) -> list[tuple[str, str, str]]:
        """(other, type, direction) of the node's edges of ``classes`` to any of ``others``
        (self-loops left out; one row per edge). ``degree`` is a hint (the node's edge count) for
        choosing a plan. Any order: callers sort."""
        ...

    def neighbour_ids(self, ids: list[str], names: tuple[str, ...]) -> dict[str, dict[str, list[str]]]:
        """id -> {edge name -> sorted distinct visible neighbour ids} for every id given (an id
        with none maps to {}); names are walked names (``link``, ``backlink``, ``field:x^-1``)."""
        ...

    def edges_among(self, ids: list[str], edge_type: str) -> dict[str, list[str]]:
        """src -> sorted dst (one entry per edge, duplicates kept) of the resolved edges of
        ``edge_type`` with both ends among ``ids``; no visibility filter (callers pass shown ids)."""
        ...

    def edges_of(self, node_id: str) -> list[EdgeView]:
        """The node's edges both ways, as ``ctx show`` lists them. Out: every edge with src =
        node_id, by type, then edge position (nulls first), then the edge's insertion order;
        unresolved ones included; one to a hidden node is left out if it is by id, and shown as
        unresolved (no id, no title, its target) if it is by name. Then in: edges with dst =
        node_id from visible nodes, named as walked backwards (``walked_name``), by type, src,
        insertion order."""
        ...

    def recent_nodes(self, reference: float | None, hours: float, limit: int) -> list[str]:
        """Ids of at most ``limit`` visible non-tag nodes with ``updated >= reference - hours *
        3600``, newest first, then by id. [] when reference is None or limit <= 0."""
        ...

    def siblings_in_order(self, node_id: str) -> tuple[str | None, list[str]]:
        """The node's parent and that parent's visible children in order (``node_id`` among them
        even if hidden). By ``parent_id``: children ordered by position (nulls last), id. Else by
        the smallest src of a ``child`` edge into the node: its child edges' dst ordered by edge
        position (nulls last), node position (nulls last), id, each id once. (None, []) if none."""
        ...

    # -- outlines --------------------------------------------------------------------------------

    def outline(self, page_id: str, max_nodes: int) -> Outline:
        """The page's descendants over ``child`` edges, depth first, siblings by edge position
        (nulls last), node position (nulls last), id; a node met twice is shown once; at most
        ``max_nodes`` (then ``truncated``). Hidden blocks and everything beneath them are left
        out (after the walk: the cap counts them)."""
        ...

    def breadcrumb(self, node_id: str) -> list[Crumb]:
        """The node's ancestors over ``child`` edges, page first, direct parent last ([] for a
        root): at each step the parent is the src of a child edge into the node, preferring nodes
        read from a file (file != ''), then the shorter id, then id; at most 32 steps, stopping
        at a repeat. No visibility filter (as today)."""
        ...

    def with_outline_link(self, ids: list[str], formats: tuple[str, ...], end: str) -> set[str]:
        """Those of ``ids`` at the ``end`` ('src': parent, 'dst': child) of a ``child`` edge whose
        two nodes were read from the same file (not '') of the same source, a source imported in
        one of ``formats``."""
        ...

    # -- passages --------------------------------------------------------------------------------

    def has_passages(self) -> bool:
        """Whether this view sees any passage: False for a graph from before passages, and for one
        whose only passages belong to nodes the view hides."""
        ...

    def passages_of(self, node_ids: Iterable[str]) -> dict[str, list[StoredPassage]]:
        """Every passage of the given nodes, each node's in ``ord`` order (nodes without passages
        absent). No visibility filter."""
        ...

    def passage_terms_known(self, terms: list[str]) -> list[str]:
        """Those of ``terms`` (single words) that the stemmed passage index matches anywhere, in
        the given order."""
        ...

    def block_texts(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """For each of ``ids`` naming a visible node (exactly, or in lower case as Logseq writes
        its uuids): (its text, the title of the page it sits on: its topmost outline ancestor, or
        its own title). Keyed by the id as asked. What a block reference ``((id))`` shows."""
        ...

    def search_passages(
        self, terms: list[str], *, limit: int, visible: Container[str] | None = None
    ) -> list[PassageHit]:
        """Passages of visible nodes matching ANY of ``terms``, best first (ties by passage id),
        at most ``limit``. Ranking is the engine's (``ctx.store.passage_reads.search`` for SQLite).
        ``visible``: where the caller holds them, the ids of every node this reader may see (a
        warm process's, under the graph's state): a hit's node is then known to be one without
        reading its row. The same hits either way."""
        ...

    def passages_stale(self) -> bool:
        """Whether some node still needs splitting into passages (an older graph, or a changed
        splitter version)."""
        ...

    # -- vectors ---------------------------------------------------------------------------------

    def active_model(self) -> str | None:
        """The model the graph's vectors come from (set by the last ``ctx embed``), if any."""
        ...

    def embedding_status(self, model: str | None = None) -> EmbeddingStatus:
        """Nodes, and nodes with a fresh vector (same content hash) of ``model`` (default: the
        active one)."""
        ...

    def nodes_without_static_vectors(self, model: str) -> int:
        """Nodes this reader may see with a passage that has no vector of ``model``, the static
        model of ``ctx embed --fast``'s first stage: what a graph at that stage can lack (its node
        vectors are not missing, they are made per question by design)."""
        ...

    def embedding_coverage(self) -> dict[str, Any]:
        """{model, nodes, fresh, stale, missing} for ``ctx stats``: fresh = vectors of the active
        model from the node's current content, stale = any other vector of an existing node."""
        ...

    def has_vectors(self) -> bool:
        """Whether the graph has vectors: an active model is set and a node vector is stored. The
        one answer every stage asks (a graph from before vectors has none)."""
        ...

    def model_dim(self, model: str) -> int:
        """The dimension of ``model``'s stored node vectors (0 when it has none)."""
        ...

    def node_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        """Fresh float32 vectors of ``model`` for the given nodes (nodes without one absent)."""
        ...

    def unvectored_nodes(self, model: str, ids: Iterable[str]) -> set[str]:
        """Those of ``ids`` without a fresh vector of ``model`` (edited or added since the last
        ``ctx embed``): what rank fusion must not leave behind (``semantic.fusion``)."""
        ...

    def unvectored_passages(self, model: str, passage_ids: Iterable[int]) -> set[int]:
        """Those of ``passage_ids`` whose current text has no vector of ``model``."""
        ...

    def vector_matrix(self, model: str) -> tuple[list[str], np.ndarray]:
        """Every fresh vector of ``model`` as (node ids sorted, float32 matrix (n, dim)); private
        nodes' too (callers filter). An engine may cache the matrix between calls."""
        ...

    def node_vector_search(self, model: str) -> NearestNodes | None:
        """A k-nearest-neighbour search the engine answers itself from an approximate index
        (PostgreSQL's HNSW, made by ``ImportSession.index_vectors`` once a model has enough
        vectors), or None: the caller ranks ``vector_matrix`` exactly (SQLite always; PostgreSQL
        below the threshold or with ``CTX_EXACT_VECTORS=1``)."""
        ...

    def passage_vector_matrix(self, model: str) -> tuple[list[int], list[str], np.ndarray]:
        """(passage ids ascending, their node ids, float32 matrix) of every passage with a vector
        of ``model``; empty lists and a (0, 0) matrix when none."""
        ...

    def pending_node_ids(self, model: str) -> list[str]:
        """Nodes to (re-)embed for ``model`` (no vector, another model's, or changed content), in
        the order they were first written."""
        ...

    def pending_passages(self, model: str) -> list[tuple[str, str]]:
        """(hash, text to embed) of each distinct passage text without a vector of ``model``,
        shortest text first, then by hash."""
        ...

    def query_vector(self, model: str, text: str) -> np.ndarray | None:
        """A free-text topic's vector remembered by ``remember_query_vector`` (keyed by the text
        with its whitespace collapsed), or None."""
        ...

    def candidate_passages(
        self, model: str, passage_ids: list[int]
    ) -> list[tuple[int, str, str, str, np.ndarray | None]]:
        """(passage id, node id, hash, text to embed, vector of ``model`` or None) of each of
        ``passage_ids`` that exists, ascending by id (``ctx.semantic.two_stage``)."""
        ...

    def remember_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> bool:
        """Store (text hash, vector) rows a build computed for ``model``; best effort, as
        ``remember_query_vector``. True when they were stored."""
        ...

    def nodes_with_passages(self, at_least: int) -> list[str]:
        """Ids of the nodes split into ``at_least`` passages or more (every node, hidden or not),
        ascending."""
        ...

    def paragraph_vector_keys(self, model: str) -> set[tuple[str, str]]:
        """(passage hash, paragraph hash) of every stored paragraph vector of ``model``
        (``ctx.assemble.paragraph_vectors``)."""
        ...

    def paragraph_vector_hashes(self, model: str) -> set[str]:
        """Every paragraph text hash with a stored vector of ``model``."""
        ...

    def paragraph_vector_count(self, model: str | None) -> int:
        """Paragraph vectors of ``model`` whose passage the graph has now, of the notes this reader
        may see."""
        ...

    def paragraph_vector_owners(self, model: str) -> set[tuple[str, str, str]]:
        """(node id, passage hash, paragraph hash) of every paragraph vector of ``model`` whose
        passage the graph has now, as ``paragraph_vectors`` joins them, without reading a vector:
        what ``ctx stats`` counts them by."""
        ...

    def paragraph_vectors(self, model: str) -> tuple[list[int], list[str], list[str], np.ndarray]:
        """(passage ids, node ids, paragraph hashes, float32 matrix): every paragraph vector of
        ``model`` whose passage the graph has now (joined by the passage's text hash, so an edited
        passage's old paragraph vectors are never among them). Empty when there are none."""
        ...

    def remember_query_vector(self, model: str, text: str, vector: np.ndarray) -> None:
        """Cache a topic's vector; best effort: never waits for a lock, and a read-only graph or
        role simply caches nothing."""
        ...

    # -- the graph as a whole --------------------------------------------------------------------

    def graph_version(self) -> int:
        """A counter bumped by every write that changed what readers see; keys caches."""
        ...

    def warm_state(self) -> Hashable | None:
        """A value that changes whenever anything a build reads may have changed (any commit
        of another connection, an import, vectors written), so that a warm process may keep a
        build's candidate pool under it (``ctx.assemble.warm``); None: this engine cannot tell
        cheaply, and nothing is kept."""
        ...

    def last_sync(self) -> float | None:
        """When any source was last imported (the newest run, whether it changed anything)."""
        ...

    def remember_setting(self, key: str, value: str) -> None:
        """Store a setting if the graph can take it at once: best effort, never waits for a lock
        (a cache a reader keeps: the freshness check's last result)."""
        ...

    def setting(self, key: str) -> str | None:
        """A graph setting (``meta`` key/value), or None."""
        ...

    def file_path(self) -> Path | None:
        """The graph's file on this machine; None for a graph held by a server (``ctx.trust``)."""
        ...

    def remember_context(
        self, context_id: str, key: str, graph_version: int, manifest: str, *, keep: int, keep_total: int,
    ) -> bool:
        """Keep a build's manifest (JSON text) as the newest of ``key`` for readers of this one's
        visibility, then only the newest ``keep`` of that key and ``keep_total`` in all. Best
        effort like ``remember_setting``: never waits for a lock; False when nothing was kept
        (a busy or read-only graph, a role that may not write)."""
        ...

    def recorded_context(self, context_id: str | None, key: str) -> tuple[str, str] | None:
        """(id, manifest) of the recorded context ``context_id``, or of the newest one of ``key``
        when it is None; only contexts recorded by a reader of this one's visibility."""
        ...

    def stats(self) -> dict[str, Any]:
        """The counts ``ctx stats`` prints (``ctx.store.reads.stats``): nodes, nodes_by_type,
        edges (by type, as this reader may see them), edges_total, private_edges,
        unresolved_links, private_nodes, sources (by id), graph_version, last_import."""
        ...

    def sources(self, *, counted: bool = False) -> list[Source]:
        """Every registered source, by id; with its files, nodes and fresh vectors counted only
        when ``counted`` (else those are None)."""
        ...

    def source_at(self, root: Path) -> tuple[int, str] | None:
        """(id, format) of the source registered at ``root`` (compared as ``str(root)``)."""
        ...

    def file_states(self, source_id: int) -> dict[str, FileState]:
        """Each file of the source as last imported: path -> (mtime_ns, size, hash)."""
        ...

    def file_states_of(self, source_id: int, paths: list[str]) -> dict[str, FileState]:
        """``file_states`` of those of ``paths`` the source has; read inside an import session,
        what that session's lock now protects (an import re-checks what it is about to write)."""
        ...

    def privacy_changed(self, config: PrivacyConfig | PrivacyRules) -> bool:
        """Whether the graph's private flags were computed with other settings than ``config``."""
        ...


class ImportSession(Protocol):
    """One write transaction. An import calls, in this order:

    ``ensure_source`` -> ``forget_files`` -> ``record_files`` -> ``forget_derived`` ->
    ``defer_indexes`` -> ``insert_records`` (changed files; then new files a batch at a time,
    each batch after its ``record_files``) -> per streamed file, inside ``file_savepoint``:
    ``forget_files``, ``streamed_file`` ... ``settle``, ``record_files`` -> the format's
    ``finalize`` reading ``source_records`` -> ``insert_records`` (derived, file '') ->
    ``insert_tag_nodes`` -> ``resolve_edges`` -> ``build_deferred_indexes`` ->
    ``refresh_private_flags`` -> ``refresh_passages`` -> ``mark_imported`` -> ``recount``.
    """

    # -- sources and files ------------------------------------------------------------------------

    def ensure_source(self, root: Path, fmt: str) -> int:
        """The id of the source at ``root``, registered now if there is none (named after the
        file's stem or the folder's name). Ids are given in registration order, from 1."""
        ...

    def forget_files(self, source_id: int, replaced: list[str], vanished: list[str]) -> None:
        """Drop the nodes, name keys and edges read from ``replaced`` and ``vanished`` files, and
        the file records of ``vanished`` ones."""
        ...

    def record_files(self, source_id: int, files: list[FileRecord]) -> None:
        """Remember (path, mtime_ns, size, hash) of each file read, replacing what was known."""
        ...

    def forget_derived(self, source_id: int) -> None:
        """Drop the records derived from the whole source (file ''): recomputed each import."""
        ...

    def defer_indexes(self) -> None:
        """Into an empty graph, the engine may drop reader-only indexes until
        ``build_deferred_indexes`` (a bulk load); otherwise nothing."""
        ...

    def build_deferred_indexes(self) -> None:
        """Rebuild what ``defer_indexes`` set aside (nothing if it set nothing aside)."""
        ...

    # -- records ---------------------------------------------------------------------------------

    def insert_records(
        self,
        source_id: int,
        nodes: list[tuple[str, NodeRecord]],
        edges: list[tuple[str, EdgeRecord]],
        *,
        count: TokenCounter,
        normalize_key: KeyNormalizer,
    ) -> Written:
        """Write (file, record) pairs: nodes with ``count``'s token count of ``title + "\\n" +
        body`` and their name keys (id: 'id' 0; title if ``title_is_key``: 'title' 10; each
        alias: 'alias' 20; plus ``keys``; normalized by ``normalize_key``, empty keys dropped),
        then edges, then one ``tag`` edge per distinct non-empty tag (position = its index among
        the distinct tags) to ``tag_node_id(tag)``. A node id already in the graph or earlier in
        the batch is renamed ``<id>~<file or 'derived'>`` (then ``~2``, ``~3``, ...), reported in
        ``warnings`` and ``renamed``, and edges from/to it (by id) and children's parent_id follow
        the rename. Rows keep the given order (it is the order ``pending_node_ids`` and
        ``source_records`` see)."""
        ...

    def streamed_file(self, source_id: int, rel: str, *, count: TokenCounter, normalize_key: KeyNormalizer) -> StreamedWrites:
        """Writes of one file read a batch at a time (see ``StreamedWrites``)."""
        ...

    def file_savepoint(self) -> AbstractContextManager[None]:
        """A savepoint for one file: an exception leaving the block undoes every write made in it
        (the session stays usable) and propagates."""
        ...

    def source_records(self, source_id: int) -> SourceRecords:
        """The source's records as written so far in this session, for ``Importer.finalize``."""
        ...

    def insert_tag_nodes(self, source_id: int, count: TokenCounter) -> None:
        """A tag node (id ``tag_node_id(tag)``, title ``#tag``, type 'tag', file '', key
        ``#tag`` lowered, kind 'title', priority 90) for each tag of the source's nodes that no
        node has yet; when spellings differ only in case, the first in (lowered, exact) order
        names it."""
        ...

    def resolve_edges(self, source_id: int) -> None:
        """Point every edge of the source at the node its target names now, or at nothing: by id,
        the node with that id; by name, the source's own name key equal to the target (kind not
        'id'), lowest priority, then length(node id), then node id. Edges of other sources whose
        dst no longer exists become unresolved."""
        ...

    def refresh_private_flags(self, config: PrivacyConfig | PrivacyRules) -> int:
        """Recompute every node's private flag (``ctx.store.privacy``: marked by a tag or field,
        below a marked node by child edge or parent_id, or derived and supported only by private
        nodes), remember ``config`` for ``GraphReader.privacy_changed``; returns how many nodes
        are private. Outline pages above a block whose flag changed are split again."""
        ...

    def refresh_passages(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Split every node not split by the current splitter (``ctx.passages.split``); returns
        how many nodes were split. Passage ids grow in the order nodes are split. ``progress``
        is told (nodes split, nodes to split) as the work moves."""
        ...

    def mark_imported(self, source_id: int, fmt: str) -> None:
        """The source was read in ``fmt`` now: its import and check times, its format, the
        graph's last import time; bumps the graph version."""
        ...

    def bump_graph_version(self) -> None:
        """Every cache keyed by the graph version is stale (privacy settings changed)."""
        ...

    def recount(self) -> None:
        """Store the node and edge counts by type, both visibilities, for ``GraphReader.stats``."""
        ...

    def remove_source(self, source_id: int, config: PrivacyConfig | PrivacyRules) -> Removed:
        """Delete a source and everything it brought: nodes (their passages, keys and vectors
        with them), edges, file records. Tag nodes that another source's edges still use move to
        the lowest such source id instead (``kept_tags``); edges of other sources into removed
        nodes become unresolved; passage vectors no passage uses go. Then privacy is recomputed
        with ``config`` (a node below a removed private one is no longer hidden by it), the
        version bumped and counts stored. KeyError if there is no such source."""
        ...

    # -- settings and vectors --------------------------------------------------------------------

    def set_setting(self, key: str, value: str) -> None:
        """Set a graph setting (``GraphReader.setting``)."""
        ...

    def set_active_model(self, model: str) -> None:
        """The model whose vectors readers use from now on."""
        ...

    def write_vectors(self, model: str, rows: Iterable[tuple[str, str, np.ndarray]]) -> int:
        """Store (node id, content hash, float32 vector) rows for ``model``, replacing what each
        node had; returns how many."""
        ...

    def write_passage_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        """Store (passage text hash, vector) rows for ``model``, replacing any with the same key."""
        ...

    def write_paragraph_vectors(self, model: str, rows: list[tuple[str, str, np.ndarray]]) -> None:
        """Store (passage hash, paragraph hash, vector) rows for ``model``."""
        ...

    def copy_paragraph_vectors(self, model: str, rows: list[tuple[str, str]]) -> int:
        """Give each (passage hash, paragraph hash) the vector the paragraph's text already has
        under another passage; returns the rows written."""
        ...

    def index_vectors(self, model: str) -> bool:
        """After ``ctx embed`` wrote ``model``'s vectors: build the engine's approximate index
        for them when it has one and the model has enough vectors (PostgreSQL: HNSW, built after
        the vectors are loaded, never row by row). Whether an index now serves the model."""
        ...

    def prune_paragraph_vectors(self, model: str, stale: list[tuple[str, str]] | None = None) -> int:
        """Drop paragraph vectors of another model than ``model``, of a passage no longer there,
        and the (passage hash, paragraph hash) pairs ``stale`` of ``model`` (``ctx embed`` runs it
        after copying an edited passage's unchanged paragraphs' vectors). Returns the rows dropped."""
        ...

    def prune_orphan_vectors(self, model: str | None = None, also_keep: str | None = None) -> int:
        """Drop vectors of nodes that no longer exist and, given the active ``model``, passage
        vectors no passage needs (another model's than ``model`` and ``also_keep`` -- the first
        stage's static vectors --, or a text no passage has). Returns the node vectors dropped."""
        ...


class GraphStore(Protocol):
    """An open graph: where readers and write sessions come from."""

    @property
    def location(self) -> str:
        """Where the graph lives, for messages (a file path, a URL without its password)."""
        ...

    def reader(self, *, include_private: bool = False) -> GraphReader:
        """A reader of the graph; cheap, and made as often as needed."""
        ...

    def share_warm_state(self, family: Hashable) -> None:
        """Let this store's readers key what a warm process keeps (``GraphReader.warm_state``) like
        every other store given the same ``family`` wherever the graph's state is the same: for
        connections one process keeps open on one graph and drops together when it is replaced."""
        ...

    def import_session(self, *, bulk: bool = False) -> AbstractContextManager[ImportSession]:
        """One write transaction (waiting for other writers up to the engine's timeout, then
        a one-line error). ``bulk``: tuned for an import's many rows. Inside another open
        session of the same store, joins it instead of nesting."""
        ...

    def without_waiting(self) -> AbstractContextManager[None]:
        """Inside the block, a write session that meets another writer's lock fails at once with a
        storage error (``store.errors.is_lock_busy``) instead of waiting for the engine's timeout:
        for freshness checks, which must never hold up a reader (issue 24, M1)."""
        ...

    def close(self) -> None:
        """Release the connection(s); the store is not used afterwards."""
        ...

    def abandon(self) -> bool:
        """Release the connection(s) writing nothing more to the graph (SQLite: no copy of the
        write-ahead log into the file on the last close), for a file replaced under the store.
        False, and the store left open, when that cannot be done here."""
        ...
