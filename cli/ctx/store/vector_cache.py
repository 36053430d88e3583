"""Every fresh node vector as one matrix, kept beside the graph file between processes.

Reading 100k blobs out of SQLite takes ~0.5 s, so past CACHE_MIN_ROWS the matrix is also kept as a
memory-mapped .npy beside the graph file, named by the vectors' state (``vectors.vectors_state``),
which loads in a millisecond. The cache is disposable: delete ``<graph>.vectors/`` at any time.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import numpy as np

from ctx.store import vectors

# Below this, reading from SQLite is a few milliseconds and a cache file is not worth leaving around.
CACHE_MIN_ROWS = 5000


def _db_file(conn: sqlite3.Connection) -> Path | None:
    for row in conn.execute("PRAGMA database_list"):
        if row[1] == "main" and row[2]:
            return Path(row[2])
    return None


def _cache_paths(db_file: Path, model: str, state: str) -> tuple[Path, Path, str]:
    folder = db_file.with_name(db_file.name + ".vectors")
    model_key = hashlib.blake2b(model.encode("utf-8"), digest_size=6).hexdigest()
    stem = f"{model_key}-{state}"
    return folder / f"{stem}.npy", folder / f"{stem}.ids.npy", model_key


def fresh_vector_matrix(conn: sqlite3.Connection, model: str) -> tuple[list[str], np.ndarray]:
    """All fresh vectors of ``model`` (ids sorted), from the .npy cache when it matches the graph state."""
    db_file = _db_file(conn)
    state = vectors.vectors_state(conn, model)
    if db_file is not None:
        matrix_path, ids_path, _ = _cache_paths(db_file, model, state)
        if matrix_path.exists() and ids_path.exists():
            try:
                matrix = np.load(matrix_path, mmap_mode="r")
                ids = np.load(ids_path).tolist()
                if len(ids) == matrix.shape[0]:
                    return ids, matrix
            except (OSError, ValueError):
                pass  # a torn or foreign file: rebuild below
    ids, matrix = vectors.all_fresh_vectors(conn, model)
    if db_file is not None and len(ids) >= CACHE_MIN_ROWS:
        _write_cache(db_file, model, state, ids, matrix)
    return ids, matrix


def _write_cache(db_file: Path, model: str, state: str, ids: list[str], matrix: np.ndarray) -> None:
    matrix_path, ids_path, model_key = _cache_paths(db_file, model, state)
    try:
        matrix_path.parent.mkdir(exist_ok=True)
        for old in matrix_path.parent.glob(f"{model_key}-*.npy"):
            old.unlink(missing_ok=True)
        for target, array in ((ids_path, np.array(ids)), (matrix_path, np.ascontiguousarray(matrix))):
            # Write then rename, so a concurrent reader never maps a half-written file.
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as handle:
                np.save(handle, array)
            os.replace(tmp, target)
    except OSError:
        pass  # a read-only folder only means no cache
