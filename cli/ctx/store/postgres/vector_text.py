"""Vectors to and from pgvector, exactly (float32 both ways)."""

from __future__ import annotations

from typing import Any

import numpy as np


def vector_from_text(text: str) -> np.ndarray:
    """pgvector's text form ``[0.1,0.2,...]`` as float32 (exact: pgvector prints shortest
    round-trip float4 text, which parses back to the same float32)."""
    return np.array(text[1:-1].split(","), dtype=np.float32) if len(text) > 2 else np.zeros(0, dtype=np.float32)


def _vector(value: Any) -> np.ndarray:
    """A stored vector as float32: pgvector's adapter gives a numpy array (binary, exact), the
    text form is parsed when the adapter is absent."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float32, copy=False)
    if hasattr(value, "to_numpy"):  # pgvector.Vector (pgvector >= 0.4)
        return np.asarray(value.to_numpy(), dtype=np.float32)
    return vector_from_text(str(value))


def vector_text(vector: np.ndarray) -> str:
    """A float32 vector as pgvector text, exactly: repr of each float32 as a Python float
    round-trips through float4 parsing."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"
