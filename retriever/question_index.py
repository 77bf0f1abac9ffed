"""The synthetic questions of an embedded store, held in memory and searched with numpy.

qdrant-client's embedded mode is itself a brute-force search in Python: it keeps every point in
memory, scores them with numpy and evaluates payload filters point by point (a search filtered
on `db_id` cost ~15 ms on Spider's 7,041 questions). `InMemoryQuestions` keeps the same points
as one unit-length float32 matrix and per-database row lists: a search is one matrix-vector
product and a partial sort (~0.3 ms), and a filtered one touches only that database's rows.
Scores are cosines, as Qdrant's for the DOT (unit vectors) and COSINE collections alike.

Past `CELLS_FROM` questions (an estate of a few thousand databases) the scan is the largest
cost of a query (35 ms for 267,000 questions on one core), so an unfiltered search probes cells
instead (`Cells`, an inverted-file index: k-means centroids computed when the index is made, a
query scans only the rows of its nearest cells). It is approximate: how much of the exact top 50
it returns, and what that costs the database ranking, is measured in docs/BENCHMARKS.md
(latency, and the decision log).

Memory: 4 bytes x dimension per question (1.5 KB with MiniLM; 1.5 GB for a million), plus the
payload strings; read from a build's snapshot (`store.snapshot`) the matrix is mapped
from disk, so server workers share it (with cells, each process holds its own copy, in cell order).
Past a few million questions, serve from a Qdrant server.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from store.records import ROUTING, SYNTHETIC, USER

#: an unfiltered search probes cells (`Cells`) when there are at least this many questions
CELLS_FROM = 50_000
#: cells a query probes (`Cells`)
PROBE = 64


class QuestionHit(NamedTuple):
    """One knowledge-base record near the question (a named tuple: fifty are made per query,
    several times faster than frozen dataclass instances). `origin`: `synthetic`, `user` for
    an example a person wrote (`indexer.examples.records`), or `routing` for a routing key,
    never shown (`store.records`)."""

    score: float
    db_id: str
    tables: tuple[str, ...]
    question: str
    sql: str
    origin: str = SYNTHETIC


_ORIGINS = {USER: USER, ROUTING: ROUTING}


def hit_from_payload(score: float, payload: Mapping[str, Any] | None) -> QuestionHit:
    payload = payload or {}
    return QuestionHit(
        score=float(score),
        db_id=str(payload.get("db_id", "")),
        tables=tuple(payload.get("tables", ()) or ()),
        question=str(payload.get("question", "")),
        sql=str(payload.get("sql", "")),
        # shared strings, not one per record held in memory
        origin=_ORIGINS.get(str(payload.get("origin")), SYNTHETIC),
    )


class InMemoryQuestions:
    """Exact nearest-neighbour search over (vector, payload) points."""

    def __init__(self, points: Iterable[tuple[Sequence[float], Mapping[str, Any]]], dim: int):
        vectors: list[Sequence[float]] = []
        payloads: list[Mapping[str, Any]] = []
        for vector, payload in points:
            vectors.append(vector)
            payloads.append(payload)
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._index(matrix / np.where(norms == 0, 1.0, norms), payloads)

    @classmethod
    def from_unit_vectors(
        cls, vectors: npt.NDArray[np.float32], payloads: Sequence[Mapping[str, Any]]
    ) -> InMemoryQuestions:
        """Over rows already of unit length (a build's snapshot mapped from disk), used as they
        are, not copied (unless there are enough of them for cells)."""
        if len(vectors) != len(payloads):
            raise ValueError(f"{len(vectors)} vectors for {len(payloads)} payloads")
        index = cls.__new__(cls)
        index._index(vectors, payloads)
        return index

    def _index(
        self, vectors: npt.NDArray[np.floating[Any]], payloads: Sequence[Mapping[str, Any]]
    ) -> None:
        self.cells = Cells(vectors) if len(vectors) >= CELLS_FROM else None
        if self.cells is not None:
            # held in cell order only, so that a matrix mapped from disk is let go
            vectors = self.cells.rows
            payloads = [payloads[i] for i in self.cells.order.tolist()]
        self._vectors = vectors
        self._records = [hit_from_payload(0.0, p)[1:] for p in payloads]
        self._synthesizers = [str(p.get("synthesizer", "")) for p in payloads]
        rows: dict[str, list[int]] = {}
        for i, record in enumerate(self._records):
            rows.setdefault(record[0], []).append(i)
        self._rows = {db: np.asarray(r, dtype=np.int64) for db, r in rows.items()}

    def __len__(self) -> int:
        return len(self._records)

    def texts(self) -> Iterator[tuple[str, str]]:
        """Every question with the synthesizer that wrote it."""
        for record, synthesizer in zip(self._records, self._synthesizers, strict=True):
            yield record[2], synthesizer

    def search(
        self, vector: npt.NDArray[np.float32], limit: int, db_id: str | None = None
    ) -> list[QuestionHit]:
        """The `limit` questions nearest to `vector` (of database `db_id` only, when given),
        best first."""
        if db_id is None:
            return self.search_many(np.asarray(vector)[None, :], limit)[0]
        rows = self._rows.get(db_id)
        if rows is None or limit < 1:
            return []
        scores = self._vectors[rows] @ _unit(np.asarray(vector, dtype=np.float32))
        return self._hits(scores, limit, rows)

    def search_many(self, vectors: npt.NDArray[np.float32], limit: int) -> list[list[QuestionHit]]:
        """`search` for each row of `vectors`, in one matrix product (the stored vectors are
        read from memory once for the batch, not once per question)."""
        queries = np.asarray(vectors, dtype=np.float32)
        if limit < 1:
            return [[] for _ in queries]
        norms = np.linalg.norm(queries, axis=1, keepdims=True)
        units = (queries / np.where(norms == 0, 1.0, norms)).astype(np.float32)
        if self.cells is not None:
            return [self._hits(s, limit, rows) for s, rows in map(self.cells.scores, units)]
        return [self._hits(row, limit) for row in units @ self._vectors.T]

    def _hits(
        self,
        scores: npt.NDArray[np.floating[Any]],
        limit: int,
        rows: npt.NDArray[np.int64] | None = None,
    ) -> list[QuestionHit]:
        if limit < len(scores):
            top = np.argpartition(scores, len(scores) - limit)[-limit:]
            top = top[np.lexsort((top, -scores[top]))]
        else:
            top = np.lexsort((np.arange(len(scores)), -scores))
        records = self._records
        if rows is not None:
            return [QuestionHit(float(scores[i]), *records[rows[i]]) for i in top.tolist()]
        return [QuestionHit(float(scores[i]), *records[i]) for i in top.tolist()]


class Cells:
    """An inverted-file index over unit vectors: `count` k-means centroids (spherical k-means
    on a sample, seeded), every row in the cell of its nearest centroid, the rows stored in cell
    order. A query scores the centroids and then only the rows of its `probe` nearest cells.

    Defaults: about 2 sqrt(n) cells, 64 of them probed, so a query scans about 32 sqrt(n) rows
    (a sixteenth of the 267,247 questions of a 10,000-database estate: docs/BENCHMARKS.md)."""

    def __init__(
        self,
        vectors: npt.NDArray[np.floating[Any]],
        *,
        count: int | None = None,
        probe: int | None = None,
        iterations: int = 10,
        seed: int = 0,
    ) -> None:
        n = len(vectors)
        count = min(n, count or max(1, round(2 * np.sqrt(n))))
        self.probe = min(count, probe or PROBE)
        rng = np.random.default_rng(seed)
        sample = np.asarray(vectors[np.sort(rng.choice(n, min(n, 40 * count), replace=False))])
        centroids = sample[rng.choice(len(sample), count, replace=False)].astype(np.float32)
        for _ in range(iterations):
            centroids = _means(sample, _nearest(sample, centroids), centroids)
        cell = np.concatenate(
            [_nearest(vectors[s : s + 65_536], centroids) for s in range(0, n, 65_536)]
        )
        #: original row of each row in cell order
        self.order = np.argsort(cell, kind="stable")
        self.centroids = centroids
        self.rows = np.ascontiguousarray(vectors[self.order], dtype=np.float32)
        self.starts = np.searchsorted(cell[self.order], np.arange(count + 1))
        self._cell = cell
        # each cell's mean row: its score is the mean score of the cell's rows
        sizes = np.diff(self.starts)
        self._means = (_sums(self.rows, sizes) / np.maximum(sizes, 1)[:, None]).astype(np.float32)

    def _probed(self, query: npt.NDArray[np.float32]) -> list[tuple[int, int]]:
        """The row spans (in cell order) of `query`'s `probe` nearest cells."""
        near = np.argpartition(-(self.centroids @ query), self.probe - 1)[: self.probe]
        return [(self.starts[c], self.starts[c + 1]) for c in near.tolist()]

    def scores(
        self, query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
        """The scores of the rows in `query`'s nearest cells, and those rows' positions in
        `rows` (cell order; `order` maps them back)."""
        spans = self._probed(query)
        scores = np.concatenate([self.rows[a:b] @ query for a, b in spans])
        return scores, np.concatenate([np.arange(a, b) for a, b in spans])

    def estimate(self, query: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Every row's score, in the original order: exact in `query`'s nearest cells, and
        elsewhere the mean score of the row's cell (rows far from the query, whose scores
        matter as a background: the median the dense table signal is shifted by)."""
        out = (self._means @ query)[self._cell]
        for a, b in self._probed(query):
            out[self.order[a:b]] = self.rows[a:b] @ query
        return out


def _nearest(
    vectors: npt.NDArray[np.floating[Any]], centroids: npt.NDArray[np.float32]
) -> npt.NDArray[np.int64]:
    return np.argmax(np.asarray(vectors, dtype=np.float32) @ centroids.T, axis=1)


def _means(
    sample: npt.NDArray[np.floating[Any]],
    cell: npt.NDArray[np.int64],
    centroids: npt.NDArray[np.float32],
) -> npt.NDArray[np.float32]:
    """Each cell's normalized mean (an empty cell keeps its centroid)."""
    order = np.argsort(cell, kind="stable")
    sums = _sums(np.asarray(sample, np.float32)[order], np.bincount(cell, minlength=len(centroids)))
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    return np.where(norms > 0, sums / np.where(norms == 0, 1.0, norms), centroids)


def _sums(
    grouped: npt.NDArray[np.float32], sizes: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """Each cell's sum of its rows: `grouped` holds the rows cell after cell, `sizes[c]` of
    cell c (an empty cell sums to zeros)."""
    sums = np.zeros((len(sizes), grouped.shape[1]), dtype=np.float32)
    present = sizes > 0
    # between two non-empty cells' first rows lie exactly the first one's rows
    sums[present] = np.add.reduceat(grouped, (np.cumsum(sizes) - sizes)[present], axis=0)
    return sums


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
