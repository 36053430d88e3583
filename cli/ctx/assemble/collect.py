"""Collect: candidates and annotations that come from lens options rather than from the walk.

Each function serves one general lens option, so a lens for a new kind of task is a YAML file:

* ``activity`` -> ``add_recent``: nodes edited shortly before the graph's newest update;
* ``select: {siblings: N}`` -> ``add_siblings``: the seed's neighbours in its parent's order;
* ``output.neighbours`` -> ``annotate_neighbours``: each node's neighbour ids over named edges;
* ``cycles`` -> ``cycles.find_cycles`` (its own module);

Every read goes through the build's ``GraphReader``, which hides what the reader may not see.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.assemble.candidate import Candidate
from ctx.assemble.traverse import Hop, Reached, Walk
from ctx.lenses import Lens

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader


def add_recent(graph: GraphReader, lens: Lens, walked: Walk, reference: float | None) -> set[str]:
    """Add the lens's recently edited nodes to the walk (as non-walked extras); return all of them.

    "Recent" is measured back from the graph's newest update, not from the wall clock: the same
    graph state always yields the same context, and an old export still has a last 72 hours."""
    if lens.activity.hours <= 0:
        return set()
    ids = graph.recent_nodes(reference, lens.activity.hours, lens.activity.limit)
    for node_id in ids:
        if node_id not in walked.reached:
            walked.reached[node_id] = Reached(node_id, 0, 0.0, (), False)
    return set(ids)


def sibling_window(lens: Lens) -> int | None:
    windows = [s.select.siblings for s in lens.sections if s.select.siblings is not None]
    return max(windows) if windows else None


def add_siblings(graph: GraphReader, seeds: list[str], walked: Walk, window: int) -> dict[str, int]:
    """The seeds' siblings at most ``window`` places away in their parent's order: id -> offset.

    Siblings the walk did not reach join it as parent > child paths, so they read like any other
    two-hop node; the offset is kept for ``select: {siblings: N}``.
    """
    offsets: dict[str, int] = {}
    for seed in seeds:
        parent, order = graph.siblings_in_order(seed)
        if parent is None or seed not in order:
            continue
        here = order.index(seed)
        for i in range(max(0, here - window), min(len(order), here + window + 1)):
            node_id = order[i]
            if node_id == seed or node_id in seeds:
                continue
            offsets[node_id] = min(offsets.get(node_id, abs(i - here)), abs(i - here))
            if node_id not in walked.reached:
                path = (Hop("child", "in", seed, parent), Hop("child", "out", parent, node_id))
                walked.reached[node_id] = Reached(node_id, 2, 2.0, path, False)
    return offsets


def annotate_neighbours(graph: GraphReader, candidates: list[Candidate], names: tuple[str, ...]) -> None:
    """Each candidate's neighbour ids over the lens's ``output.neighbours`` edges (e.g. claims'
    supported_by/supports); hidden nodes are left out, as an id can give a note away."""
    if not names:
        return
    found = graph.neighbour_ids([c.id for c in candidates], names)
    for c in candidates:
        c.neighbours = found.get(c.id, {})
