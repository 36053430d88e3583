"""The default lens, decided by what the user typed.

A topic that names a node (its id, title or alias) asks for that node and what surrounds it: the
graph-walk lens (``general``). A question or phrase asks for an answer: the ``answer`` lens,
which ranks passages by the words and meaning of the question. Several topics get the graph-walk
lens only when every one of them names a node. The choice is reported in the context's metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctx.defaults import GRAPH_LENS, QUESTION_LENS

if TYPE_CHECKING:
    from ctx.store.protocols import GraphReader

__all__ = ["GRAPH_LENS", "QUESTION_LENS", "choose", "names_a_node"]


def names_a_node(graph: GraphReader, topic: str) -> bool:
    text = topic.strip()
    return graph.node_exists(text) or bool(graph.find_by_name(text)) or bool(graph.find_by_path(text))


def choose(graph: GraphReader, topics: tuple[str, ...]) -> tuple[str, str]:
    """(lens name, why) for the default lens."""
    named = [t for t in topics if t.strip() and names_a_node(graph, t)]
    if topics and len(named) == len([t for t in topics if t.strip()]):
        return GRAPH_LENS, "every topic names a node"
    return QUESTION_LENS, "a topic is a question or phrase, not a node's name"
