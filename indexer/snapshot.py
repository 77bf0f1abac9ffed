"""Flat copies of an embedded build's two collections, which readers load instead of Qdrant.

qdrant-client's embedded mode reads every point of every collection in its folder into Python
objects when it opens: measured on a 1,000-database estate (30,570 questions, 4,714 tables), the
open alone took a retriever from 0.67 to 1.58 GB resident. So a build into a folder also writes
each collection into `BUILD/snapshot/`: the vectors as one float32 `.npy` matrix, which readers
map from disk (server workers share its pages), and the payload fields readers use as JSON
lines in the same order. A retriever opening an embedded build reads these and never opens the
Qdrant folder (`retriever.knowledge`). Written last, into a temporary folder renamed into place,
so a snapshot that exists is complete; builds from before snapshots are read through Qdrant.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

SNAPSHOT_DIR = "snapshot"
#: the question payload fields readers use (the rest stays in Qdrant: fingerprints, rewards...)
QUESTION_FIELDS = ("db_id", "tables", "question", "sql", "origin", "synthesizer")

Point = tuple[Sequence[float], Mapping[str, Any]]


def write_snapshot(
    build_dir: Path, collections: Mapping[str, tuple[int, Iterable[Point]]], dim: int
) -> Path:
    """Write `collections` (name -> (point count, points)) under `build_dir/snapshot`, replacing
    any earlier snapshot; returns its folder."""
    final = build_dir / SNAPSHOT_DIR
    tmp = build_dir / f".{SNAPSHOT_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, (count, points) in collections.items():
        matrix = np.lib.format.open_memmap(
            tmp / f"{name}.npy", mode="w+", dtype=np.float32, shape=(count, dim)
        )
        written = 0
        with (tmp / f"{name}.jsonl").open("w", encoding="utf-8") as lines:
            for vector, payload in points:
                if written == count:
                    raise ValueError(f"collection {name} holds more than its {count} points")
                matrix[written] = vector
                lines.write(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
                lines.write("\n")
                written += 1
        if written != count:
            raise ValueError(f"collection {name}: {written} points read, {count} counted")
        matrix.flush()
        del matrix
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final


def read_snapshot(
    build_dir: Path, name: str
) -> tuple[npt.NDArray[np.float32], list[dict[str, Any]]] | None:
    """The vectors (mapped read-only from disk) and payloads of collection `name`, or None when
    the build has no snapshot."""
    folder = build_dir / SNAPSHOT_DIR
    matrix_file, lines_file = folder / f"{name}.npy", folder / f"{name}.jsonl"
    if not (matrix_file.is_file() and lines_file.is_file()):
        return None
    vectors = np.load(matrix_file, mmap_mode="r")
    with lines_file.open(encoding="utf-8") as lines:
        payloads = [json.loads(line) for line in lines]
    if len(payloads) != len(vectors):
        raise ValueError(f"{folder}: {name} has {len(vectors)} vectors, {len(payloads)} payloads")
    return vectors, payloads
