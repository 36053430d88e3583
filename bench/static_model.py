"""Distil a static embedding model from the bundled MiniLM into a folder, offline: the model
``ctx embed``'s first stage makes by itself on first need (``ctx.semantic.distil``, cached per
machine), written where you choose, so the figures in docs/embedding.md can be re-run.

    python bench/static_model.py --out bench/out/static-minilm     # ~20 s CPU (bfloat16)
    ctx embed --model bench/out/static-minilm --db g.db            # static vectors only, no torch
    CTX_EMBED_MODEL=$PWD/bench/out/static-minilm python bench/bench_facts.py --only ctx-default+emb

The method is model2vec's, re-implemented in ``ctx.semantic.distil``. Alone, its rankings were
measured too coarse to replace the transformer (docs/embedding.md); as a first stage proposing
candidates for MiniLM they hold recall.
"""

from __future__ import annotations

from pathlib import Path

from ctx.semantic.distil import distil as _distil
from ctx.semantic.models import ModelRef


def distil(model: ModelRef, target: Path) -> Path:
    if model.path is None:
        raise SystemExit(f"{model.name}: no local model folder to distil from")
    return _distil(model, target)


def main() -> None:
    import argparse
    import os
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the static model to")
    parser.add_argument("--model", default=None, help="sentence-transformers model (default: the bundled MiniLM)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ctx.semantic.models import resolve_model

    load = os.getloadavg()[0]
    started, cpu = time.perf_counter(), time.process_time()
    folder = distil(resolve_model(args.model), args.out)
    print(f"{folder}: {time.perf_counter() - started:.1f} s wall, {time.process_time() - cpu:.1f} s CPU"
          f" (torch import and model load included), load average {load:.1f} -> {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
