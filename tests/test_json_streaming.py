"""A JSON graph is imported a batch at a time: the same graph, warnings and guarantees as when the
whole file was read and parsed at once, whatever the batch size."""

from __future__ import annotations

import codecs
import json
import random
import sqlite3
from pathlib import Path

import pytest

from ctx.errors import EXIT_USAGE
from ctx.importers import jsongraph
from ctx.importers.file_text import FileText


def _tables(db: Path) -> dict[str, list[tuple]]:
    """Every row that says something about the graph (not row ids or times), sorted."""
    conn = sqlite3.connect(db)
    out = {
        "nodes": conn.execute(
            "SELECT id, title, body, type, tags, fields, aliases, file, parent_id, position, created, updated,"
            " content_hash, tokens FROM nodes"
        ).fetchall(),
        "edges": conn.execute("SELECT src, type, target, dst, by_id, label, position, file FROM edges").fetchall(),
        "keys": conn.execute("SELECT key, node_id, kind, priority FROM node_keys").fetchall(),
    }
    conn.close()
    return {name: sorted(rows, key=repr) for name, rows in out.items()}


def _messy_graph(seed: int, count: int = 60) -> list[dict]:
    """Records that exercise every whole-file rule: ids stated twice, relations stated from both
    ends, edges from nodes the file lacks, children before their parents, bad records."""
    rng = random.Random(seed)
    ids = [f"n{i}" for i in range(count)]
    records: list[dict] = []
    for i, node_id in enumerate(ids):
        record: dict = {"id": node_id, "title": f"Node {i}", "body": f"Body of {i}. " * rng.randint(0, 5)}
        if rng.random() < 0.4:
            record["parent"] = rng.choice(ids)
        if rng.random() < 0.5:
            record["links"] = [rng.choice(ids) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.3:
            record["children"] = [rng.choice(ids) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            record["supports"] = [rng.choice(ids)]
        if rng.random() < 0.3:
            record["supported_by"] = [rng.choice(ids + ["ghost"])]
        if rng.random() < 0.2:
            record["tags"] = [rng.choice(["red", "Red", "blue"])]
        records.append(record)
    for _ in range(count // 2):
        records.append({"source": rng.choice(ids + ["ghost", "nobody"]), "target": rng.choice(ids), "type": "ref"})
    for _ in range(count // 6):
        records.append({"id": rng.choice(ids), "title": "Again"})  # a duplicate: skipped
    records.append({"source": "ghost", "target": ids[0], "type": "ref"})
    records.append({"id": ids[1], "title": "Stated twice"})
    records.append({"title": "no id"})
    records.append({"id": "bad-links", "links": {"an": "object"}})
    rng.shuffle(records)
    return records


def _import(run_cli, db: Path, path: Path) -> list[str]:
    result = run_cli("import", str(path), "--format", "json", db=db)
    assert result.exit_code == 0, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("ctx: warning:")]


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tiny_batches_give_the_graph_and_warnings_of_one_batch(tmp_path, run_cli, monkeypatch, suffix, seed):
    records = _messy_graph(seed)
    path = tmp_path / f"graph{suffix}"
    if suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps({"nodes": records}, indent=1), encoding="utf-8")
    whole = _import(run_cli, tmp_path / "whole.db", path)
    monkeypatch.setattr(jsongraph, "BATCH_RECORDS", 3)
    batched = _import(run_cli, tmp_path / "batched.db", path)
    assert _tables(tmp_path / "batched.db") == _tables(tmp_path / "whole.db")
    assert sorted(batched) == sorted(whole)
    assert any("duplicate id" in w for w in whole) and any("from unknown node" in w for w in whole)


def test_streamed_import_equals_the_in_memory_parse(tmp_path, run_cli, monkeypatch):
    """The store's whole-file rules (ctx.store.streamed) and the parser's own (``parse``) agree."""
    from ctx.importers.base import FileInfo

    records = _messy_graph(4, count=120)
    path = tmp_path / "graph.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    monkeypatch.setattr(jsongraph, "BATCH_RECORDS", 7)
    _import(run_cli, tmp_path / "g.db", path)
    parsed = jsongraph.JsonGraphImporter().parse(FileInfo("graph.jsonl", path, 0.0), path.read_text())
    conn = sqlite3.connect(tmp_path / "g.db")
    stored_nodes = {r[0] for r in conn.execute("SELECT id FROM nodes WHERE file != ''")}
    stored_edges = sorted(conn.execute("SELECT src, type, target FROM edges WHERE type != 'tag' ORDER BY id"))
    assert stored_nodes == {n.id for n in parsed.nodes}
    assert stored_edges == sorted((e.src, e.type, e.target) for e in parsed.edges)


def test_ids_renamed_on_a_clash_rename_their_edges_and_children_in_every_batch(tmp_path, run_cli, monkeypatch):
    """A node whose id another source already has is stored under a new id; every edge and child
    that names it, before or after it in the file, follows it."""
    run_cli("import", str(_jsonl(tmp_path / "first.jsonl", [{"id": "p", "title": "Other P"}])))
    records = [
        {"id": "child", "title": "Child", "parent": "p"},
        {"source": "x", "target": "p", "type": "ref"},
        {"id": "x", "title": "X"},
        {"id": "p", "title": "P", "links": ["x"]},
        {"id": "late", "title": "Late", "parent": "p", "links": ["p"]},
    ]
    monkeypatch.setattr(jsongraph, "BATCH_RECORDS", 1)
    warnings = _import(run_cli, None, _jsonl(tmp_path / "second.jsonl", records))
    assert any("duplicate node id 'p'" in w for w in warnings)
    shown = json.loads(run_cli("show", "p~second.jsonl", "--format", "json").stdout)
    edges = sorted((e["type"], e["direction"], e["id"]) for e in shown["edges"])
    assert ("child", "out", "child") in edges and ("child", "out", "late") in edges
    assert ("link", "out", "x") in edges and ("referenced_by", "in", "x") in edges and ("backlink", "in", "late") in edges
    conn = sqlite3.connect(tmp_path / "graph.db")
    assert conn.execute("SELECT parent_id FROM nodes WHERE id = 'child'").fetchone()[0] == "p~second.jsonl"
    other = json.loads(run_cli("show", "p", "--format", "json").stdout)
    assert other["title"] == "Other P" and other["edges"] == []


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_a_file_that_fails_after_batches_were_written_keeps_the_previous_graph(tmp_path, run_cli, monkeypatch):
    monkeypatch.setattr(jsongraph, "BATCH_RECORDS", 2)
    path = tmp_path / "graph.json"
    nodes = [{"id": f"n{i}", "title": f"Node {i}", "links": [f"n{(i + 1) % 9}"]} for i in range(9)]
    path.write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    run_cli("import", str(path))
    before = _tables(tmp_path / "graph.db")
    changed = [{"id": f"m{i}", "title": f"New {i}"} for i in range(9)]
    path.write_text(json.dumps({"nodes": changed})[:-30], encoding="utf-8")  # truncated near the end
    result = run_cli("import", str(path))
    assert result.exit_code == EXIT_USAGE and "graph.json:1: invalid JSON" in result.stderr
    assert _tables(tmp_path / "graph.db") == before
    # Fixed, it imports: nothing of the failed attempt was left behind.
    path.write_text(json.dumps({"nodes": changed}), encoding="utf-8")
    assert run_cli("import", str(path)).exit_code == 0
    ids = {r[0] for r in _tables(tmp_path / "graph.db")["nodes"]}
    assert ids == {f"m{i}" for i in range(9)}


def test_a_touched_but_equal_graph_file_is_not_parsed_again(tmp_path, run_cli):
    import os

    path = _jsonl(tmp_path / "g.jsonl", [{"id": "a", "title": "A"}])
    run_cli("import", str(path))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    result = run_cli("import", str(path), "--format", "json")
    assert result.exit_code == 0
    assert "0 parsed" in result.stdout + result.stderr


def _reference(data: bytes) -> tuple[str, list[int]]:
    """How the engine decodes a whole file: strict, else replaced with the first bad offset."""
    try:
        text, bad = data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        text, bad = data.decode("utf-8-sig", errors="replace"), [exc.start]
    return text.replace("\r\n", "\n").replace("\r", "\n"), bad


@pytest.mark.parametrize("seed", range(40))
def test_file_text_in_pieces_decodes_as_the_whole_file_does(seed):
    rng = random.Random(seed)
    alphabet = ["a", "b", "\n", "\r", "\r\n", "é", "€", "𝄞", "\x0c"]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
    data = text.encode("utf-8")
    if rng.random() < 0.5:
        data = codecs.BOM_UTF8 + data
    if rng.random() < 0.5 and data:
        for _ in range(rng.randint(1, 3)):  # invalid bytes: a cut sequence, a stray continuation
            at = rng.randrange(len(data) + 1)
            data = data[:at] + rng.choice([b"\xe2\x82", b"\x80", b"\xff", b"\xf0\x9d"]) + data[at:]
    pieces, at = [], 0
    while at < len(data):
        size = rng.randint(1, 9)
        pieces.append(data[at : at + size])
        at += size
    source = FileText("f.json", pieces)
    got = "".join(source.text())
    expected, bad = _reference(data)
    assert got == expected
    assert source.warnings == [f"f.json: invalid UTF-8 at byte {b}; undecodable bytes replaced" for b in bad]
    assert source.size == len(data)
    import hashlib

    assert source.digest == hashlib.blake2b(data, digest_size=16).hexdigest()


def test_a_binary_graph_file_is_a_warning_and_is_recorded(tmp_path, run_cli):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'{"id": "a"}\n\x00\x00')
    result = run_cli("import", str(path), "--format", "json")
    assert "g.jsonl: binary file; skipped" in result.stderr


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_parsing_holds_one_batch_whatever_the_file_size(tmp_path, monkeypatch, suffix):
    """Peak Python memory while a graph file is read and parsed is the same for 1,000 and
    10,000 nodes: nothing of the file outlives its batch."""
    import os
    import tracemalloc

    from ctx.files import read_pieces
    from ctx.importers.base import FileInfo

    monkeypatch.setattr(jsongraph, "BATCH_RECORDS", 200)
    importer = jsongraph.JsonGraphImporter()

    def peak(count: int) -> int:
        path = tmp_path / f"g{count}{suffix}"
        records = [{"id": f"n{i}", "title": f"Node {i}", "body": "word " * 40, "links": [f"n{i // 2}"]}
                   for i in range(count)]
        if suffix == ".jsonl":
            path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        else:
            path.write_text(json.dumps({"nodes": records}, indent=1), encoding="utf-8")
        del records
        tracemalloc.start()
        text = FileText(path.name, read_pieces(path, checked=os.stat(path), size=64 * 1024)).text()
        for batch in importer.parse_stream(FileInfo(path.name, path, 0.0), text, lambda batch_ids: set()):
            assert len(batch.nodes) <= 200
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(1_000), peak(10_000)
    assert large < small * 1.5 + 256 * 1024, (small, large)


def test_checking_a_batch_for_repeated_ids_reads_by_id_not_the_whole_file(tmp_path):
    """The per-batch check costs the same with 1,000 or 10,000 nodes of the file already written
    (reading the file's nodes through its (source, file) index made a 1M import quadratic)."""
    from ctx.store import connect
    from ctx.store.records import NodeRecord
    from ctx.store.streamed import StreamedFile
    from ctx.store.transaction import transaction
    from ctx.store.writes import ensure_source
    from ctx.tokens import estimate_many

    def steps(count: int) -> int:
        conn = connect(tmp_path / f"g{count}.db", create=True)
        with transaction(conn):
            source = ensure_source(conn, tmp_path / "g.json", "json")
            target = StreamedFile(conn, source, "g.json", count=estimate_many, normalize_key=str.lower)
            for start in range(0, count, 1000):
                target.add([NodeRecord(id=f"n{i}", title=f"N{i}") for i in range(start, start + 1000)], [])
            calls = [0]

            def tick() -> int:
                calls[0] += 1
                return 0

            conn.set_progress_handler(tick, 100)
            assert target.known_ids(["n5", "n999", "new"]) == {"n5", "n999"}
            conn.set_progress_handler(None, 0)
            target.settle()
        conn.close()
        return calls[0]

    few, many = steps(1_000), steps(10_000)
    assert many <= few + 5, (few, many)
