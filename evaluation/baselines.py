"""The baselines every recall figure is measured against, in the same run: one document per
table (the indexer's `table_document` text), ranked by BM25 (`bm25_table`) or by the cosine of
its embedding (`dense_table`, what Vanna and LlamaIndex do). A database ranks where its best
table ranks. Given `only`, the databases a caller restricts itself to, the others do not rank."""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from evaluation.metrics import Ranking
from providers import Embedder
from retriever.lexical import TableBM25
from retriever.tables import TableEntry
from schemagraph.model import fold


def ranking_from_scores(
    entries: Sequence[TableEntry],
    scores: npt.NDArray[np.float64],
    size: int,
    started: float,
    only: Collection[str] | None = None,
) -> Ranking:
    """Databases and tables by score; `only`: the folded ids of the databases that may rank."""
    order = np.argsort(-scores, kind="stable")
    if only is not None:
        order = order[[fold(entries[int(i)].db_id) in only for i in order]]
    databases: list[str] = []
    seen: set[str] = set()
    for i in order:
        db = entries[int(i)].db_id
        if db.casefold() not in seen:
            seen.add(db.casefold())
            databases.append(db)
    tables = tuple((entries[int(i)].db_id, entries[int(i)].table) for i in order[:size])
    return Ranking(tuple(databases), tables, (time.perf_counter() - started) * 1000)


class BM25TableBaseline:
    name = "bm25_table"

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        self.entries = list(entries)
        self.bm25 = TableBM25(self.entries)

    def rank(self, question: str, size: int = 20, only: Collection[str] | None = None) -> Ranking:
        started = time.perf_counter()
        return ranking_from_scores(self.entries, self.bm25.scores(question), size, started, only)


class DenseTableBaseline:
    name = "dense_table"

    def __init__(
        self, entries: Sequence[TableEntry], vectors: npt.NDArray[np.float32], embedder: Embedder
    ) -> None:
        self.entries = list(entries)
        self.vectors = vectors
        self.embedder = embedder

    def rank(self, question: str, size: int = 20, only: Collection[str] | None = None) -> Ranking:
        started = time.perf_counter()
        scores = (self.vectors @ self.embedder.embed_query(question)).astype(np.float64)
        return ranking_from_scores(self.entries, scores, size, started, only)
