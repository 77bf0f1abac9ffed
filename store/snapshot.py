"""Flat copies of an embedded build's two collections, which readers load instead of Qdrant.

qdrant-client's embedded mode reads every point of every collection in its folder into Python
objects when it opens: measured on a 1,000-database estate (30,570 questions, 4,714 tables), the
open alone took a retriever from 0.67 to 1.58 GB resident. So a build into a folder also writes
each collection into `BUILD/snapshot/`: the vectors as one float32 `.npy` matrix, which readers
map from disk (server workers share its pages), and the payload fields readers use as JSON
lines in the same order. A retriever opening an embedded build reads these and never opens the
Qdrant folder (`retriever.knowledge`). Written last, into a temporary folder renamed into place,
so a snapshot that exists is complete; builds from before snapshots are read through Qdrant.

A build writes its snapshot from what it already holds, never by reading its Qdrant collections
back (which took 134 s of a 333 s incremental build at 10,000 databases): the base build's
snapshot rows minus the removed traversals and the replaced points (`kept_rows`, which reads the
`.keys` file: point id and traversal key per question row), then the journal's records; and the
base build's table documents minus those of changed databases, then their new documents.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

SNAPSHOT_DIR = "snapshot"
#: the question payload fields readers use (the rest stays in Qdrant: fingerprints, rewards...)
QUESTION_FIELDS = ("db_id", "tables", "question", "sql", "origin", "synthesizer")

#: rows of a collection: unit vectors (n x dim), their payloads as JSON text, and their keys
#: ("point_id<TAB>traversal_key" per question, "point_id<TAB>db_id" per table, which the next
#: build derives its snapshot from), or None
Chunk = tuple[npt.NDArray[np.float32], Sequence[str], Sequence[str] | None]


def payload_line(payload: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """A payload as the snapshot writes it (only `fields`, when given)."""
    if fields is not None:
        payload = {f: payload[f] for f in fields if f in payload}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def unit_rows(vectors: Any) -> npt.NDArray[np.float32]:
    """`vectors` as float32 rows of norm 1 (zero rows stay zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=matrix.copy(), where=norms > 0)


def write_snapshot(
    build_dir: Path, collections: Mapping[str, tuple[int, Iterable[Chunk]]], dim: int
) -> Path:
    """Write `collections` (name -> (row count, chunks)) under `build_dir/snapshot`, replacing
    any earlier snapshot; returns its folder."""
    final = build_dir / SNAPSHOT_DIR
    tmp = build_dir / f".{SNAPSHOT_DIR}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, (count, chunks) in collections.items():
        matrix = np.lib.format.open_memmap(
            tmp / f"{name}.npy", mode="w+", dtype=np.float32, shape=(count, dim)
        )
        written = 0
        keyed = True
        with (
            (tmp / f"{name}.jsonl").open("w", encoding="utf-8") as lines,
            (tmp / f"{name}.keys").open("w", encoding="utf-8") as keys,
        ):
            for vectors, payloads, point_keys in chunks:
                n = len(payloads)
                if written + n > count:
                    raise ValueError(f"collection {name} holds more than its {count} points")
                matrix[written : written + n] = vectors
                lines.writelines(f"{line}\n" for line in payloads)
                keyed = keyed and point_keys is not None
                if keyed and point_keys is not None:
                    keys.writelines(f"{key}\n" for key in point_keys)
                written += n
        if written != count:
            raise ValueError(f"collection {name}: {written} points read, {count} counted")
        if not keyed:
            (tmp / f"{name}.keys").unlink()
        matrix.flush()
        del matrix
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    return final


def kept_rows(
    build_dir: Path,
    name: str,
    drop_keys: Set[str] = frozenset(),
    drop_ids: Set[str] = frozenset(),
    chunk: int = 8192,
) -> tuple[int, Iterator[Chunk]] | None:
    """The rows of `build_dir`'s snapshot of `name` whose key (traversal key or database) is not
    in `drop_keys` and whose point id is not in `drop_ids`, as (count, chunks), read without
    parsing a payload; None when there is no snapshot, or something is to be dropped from one
    without keys."""
    folder = build_dir / SNAPSHOT_DIR
    matrix_file, lines_file = folder / f"{name}.npy", folder / f"{name}.jsonl"
    keys_file = folder / f"{name}.keys"
    if not (matrix_file.is_file() and lines_file.is_file()):
        return None
    vectors = np.load(matrix_file, mmap_mode="r")
    if keys_file.is_file():
        keys = keys_file.read_text(encoding="utf-8").splitlines()
        keep = np.fromiter(
            (
                not (pid in drop_ids or key in drop_keys)
                for pid, _, key in (k.partition("\t") for k in keys)
            ),
            dtype=bool,
            count=len(keys),
        )
    elif drop_keys or drop_ids:
        return None
    else:
        keys, keep = None, np.ones(len(vectors), dtype=bool)
    if len(keep) != len(vectors):
        raise ValueError(f"{folder}: {name} has {len(vectors)} vectors, {len(keep)} keys")

    def chunks() -> Iterator[Chunk]:
        with lines_file.open(encoding="utf-8") as lines:
            for start in range(0, len(vectors), chunk):
                stop = min(start + chunk, len(vectors))
                part = [next(lines).rstrip("\n") for _ in range(start, stop)]
                mask = keep[start:stop]
                yield (
                    np.asarray(vectors[start:stop][mask], dtype=np.float32),
                    [line for line, k in zip(part, mask, strict=True) if k],
                    None
                    if keys is None
                    else [k for k, m in zip(keys[start:stop], mask, strict=True) if m],
                )

    return int(keep.sum()), chunks()


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
