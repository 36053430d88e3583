"""A model read through a shorter window (CTX_EMBED_MAX_PIECES) is another model for the graph:
its name carries the window, so its vectors never mix with the full window's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fake_encoder import HashEncoder
from semantic_vault import write_vault

from ctx.errors import CtxError
from ctx.importers.engine import import_path
from ctx.semantic.embedding import embed_graph
from ctx.semantic.models import DEFAULT_MODEL, WINDOW_ENV, resolve_model
from ctx.store import connect


def test_window_is_part_of_the_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WINDOW_ENV, raising=False)
    assert resolve_model(None).window is None and resolve_model(None).name == DEFAULT_MODEL
    monkeypatch.setenv(WINDOW_ENV, "128")
    chosen = resolve_model(None)
    assert (chosen.name, chosen.window) == (f"{DEFAULT_MODEL}#128", 128)
    # A graph's stored name resolves to the same model whatever the environment says.
    again = resolve_model(chosen.name)
    assert again == chosen
    assert resolve_model(DEFAULT_MODEL).window is None
    monkeypatch.setenv(WINDOW_ENV, "many")
    with pytest.raises(CtxError):
        resolve_model(None)


def test_changing_the_window_re_embeds_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = write_vault(tmp_path / "vault")
    conn = connect(tmp_path / "graph.db", create=True)
    import_path(conn, vault)
    monkeypatch.setenv(WINDOW_ENV, "128")
    first = embed_graph(conn, resolve_model(None), encoder_factory=HashEncoder)
    assert first.model == f"{DEFAULT_MODEL}#128" and first.embedded > 0
    monkeypatch.delenv(WINDOW_ENV)
    second = embed_graph(conn, resolve_model(None), encoder_factory=HashEncoder)
    assert second.switched_from == f"{DEFAULT_MODEL}#128"
    assert (second.embedded, second.passages) == (first.embedded, first.passages)


def test_the_window_cuts_what_the_model_reads() -> None:
    pytest.importorskip("sentence_transformers", reason="needs the embed extra")
    from ctx.semantic.encoder import DocumentEncoder
    from ctx.semantic.models import with_window

    opening = "The lighthouse keeper counted the ships that passed the harbour every night. "
    texts = [opening * 3 + "Then the storm took the lamp.", opening * 3 + "Bread is baked at dawn in ovens."]
    narrow = DocumentEncoder(with_window(resolve_model(DEFAULT_MODEL), 16), precision="fp32", threads=1)
    assert narrow.max_length == 16 and max(narrow.token_lengths(texts)) == 16
    a, b = narrow.encode(texts)
    assert float(np.dot(a, b)) > 0.9999  # only the shared opening was read
    full = DocumentEncoder(resolve_model(DEFAULT_MODEL), precision="fp32", threads=1)
    c, d = full.encode(texts)
    assert float(np.dot(c, d)) < 0.999
