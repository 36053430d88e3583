"""Reading a .json graph document record by record: the same records json.loads sees, each with
the line it starts on, whether the text comes whole or in chunks of any size."""

from __future__ import annotations

import json
import random

import pytest

from ctx.errors import ImportFormatError
from ctx.importers.json_stream import document_records


def generated_document(count: int, seed: int) -> str:
    """A graph document laid out the ways people and tools write JSON: compact records, records
    spread over many lines, blank lines, commas at line starts, escaped newlines in strings."""
    rng = random.Random(seed)
    nodes = []
    for i in range(count):
        node = {"id": f"n{i}", "title": f"Node {i}", "body": "line one\nline two" * rng.randint(0, 3)}
        if rng.random() < 0.5:
            node["links"] = [f"n{rng.randrange(count)}" for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.2:
            node["fields"] = {"score": rng.random(), "nested": {"a": [1, 2, {"b": None}]}}
        nodes.append(node)
    edges = [{"source": f"n{rng.randrange(count)}", "target": f"n{rng.randrange(count)}", "type": "ref"}
             for _ in range(count // 3)]
    parts = ['{\n  "version": {"x": [1, 2]},\n  "nodes": [']
    for i, node in enumerate(nodes):
        style = rng.randrange(4)
        text = json.dumps(node, indent=2 if style == 0 else None)
        sep = "" if i == 0 else (",\n" if style != 3 else "\n,")
        parts.append(sep + ("\n\n" if style == 2 else "\n") + text)
    parts.append('\n],\n"edges":[' + ",".join(json.dumps(e) for e in edges) + "]\n}\n")
    return "".join(parts)


def reference_lines(text: str, key: str, count: int) -> list[int]:
    """Where each element of the top-level array ``key`` starts, found the slow obvious way."""
    decoder = json.JSONDecoder()
    pos = text.find("[", text.find(f'"{key}"')) + 1
    out = []
    for _ in range(count):
        while text[pos] in " \t\r\n,":
            pos += 1
        out.append(text[:pos].count("\n") + 1)
        _, pos = decoder.raw_decode(text, pos)
    return out


def in_chunks(text: str, seed: int, largest: int) -> list[str]:
    rng = random.Random(seed)
    chunks, at = [], 0
    while at < len(text):
        size = rng.randint(1, largest)
        chunks.append(text[at : at + size])
        at += size
    return chunks


@pytest.mark.parametrize("largest_chunk", [None, 1, 7, 300])
def test_records_and_lines_match_json_loads_on_a_generated_graph(largest_chunk):
    text = generated_document(600, seed=3)
    document = json.loads(text)
    chunks = [text] if largest_chunk is None else in_chunks(text, 11, largest_chunk)
    records = list(document_records("g.json", chunks))
    nodes, edges = document["nodes"], document["edges"]
    assert [r for _, r in records] == nodes + edges
    node_lines = reference_lines(text, "nodes", len(nodes))
    edge_lines = reference_lines(text, "edges", len(edges))
    expected = [f"g.json:{line} (nodes[{i}])" for i, line in enumerate(node_lines)]
    expected += [f"g.json:{line} (edges[{i}])" for i, line in enumerate(edge_lines)]
    assert [where for where, _ in records] == expected


def test_bare_list_of_nodes():
    text = '[\n {"id": "a"},\n\n {"id": "b"}\n]'
    assert list(document_records("g.json", [text])) == [
        ("g.json:2 ([0])", {"id": "a"}),
        ("g.json:4 ([1])", {"id": "b"}),
    ]


def test_a_number_cut_by_a_chunk_boundary_is_read_whole():
    chunks = ['[{"id": "a", "n": 12', '345}, 67', "89]"]
    assert [r for _, r in document_records("g.json", chunks)] == [{"id": "a", "n": 12345}, 6789]


@pytest.mark.parametrize("largest_chunk", [None, 1, 5])
@pytest.mark.parametrize(
    "text",
    [
        '{"nodes": [\n  {"id": "a"},\n  {"id": "b" "x"}\n]}',
        '{"nodes": [\n  {"id": "a"}\n  {"id": "b"}\n]}',
        '{"nodes": [{"id": "a"}]}\n\n  trailing',
        '{"nodes": [{"id": "a"},\n   ]}',
        '\n\n   {"nodes": [{"id": "a", "body": "x\\q"}]}',
    ],
)
def test_invalid_json_names_the_line_and_column_json_loads_names(text, largest_chunk):
    with pytest.raises(json.JSONDecodeError) as loads_error:
        json.loads(text)
    chunks = [text] if largest_chunk is None else in_chunks(text, 5, largest_chunk)
    with pytest.raises(ImportFormatError) as ours:
        list(document_records("g.json", chunks))
    message = str(ours.value)
    assert message.startswith(f"g.json:{loads_error.value.lineno}: invalid JSON")
    assert message.endswith(f"(column {loads_error.value.colno})")


@pytest.mark.parametrize(
    "text",
    ['{"nodes": {"id": "a"}}', '{"edges": "x"}', '{"other": []}', '"just a string"', "42"],
)
def test_documents_that_are_not_graphs_are_refused(text):
    with pytest.raises(ImportFormatError) as error:
        list(document_records("g.json", [text]))
    assert str(error.value).startswith("g.json:1: ")


def test_null_record_lists_read_as_empty():
    assert list(document_records("g.json", ['{"nodes": null, "edges": []}'])) == []


def test_edges_before_nodes_come_in_file_order():
    text = '{"edges": [{"source": "a", "target": "b"}], "nodes": [{"id": "a"}]}'
    assert [where for where, _ in document_records("g.json", [text])] == [
        "g.json:1 (edges[0])",
        "g.json:1 (nodes[0])",
    ]
