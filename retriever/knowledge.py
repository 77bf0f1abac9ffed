"""Read access to a built knowledge base: one Qdrant client per process, opened once.

The table collection is small (one point per table) and is read whole when a retriever opens;
the question collection is searched per query through Qdrant (`query_points`), embedded or
server alike.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from indexer.store import QUESTIONS, TABLES, StoreLocation
from retriever.errors import StoreNotReadyError
from retriever.tables import TableEntry

log = logging.getLogger(__name__)

_HIT_FIELDS = ["db_id", "tables", "question", "sql"]


@dataclass(frozen=True)
class QuestionHit:
    """One synthetic record near the question."""

    score: float
    db_id: str
    tables: tuple[str, ...]
    question: str
    sql: str


class KnowledgeBase:
    """The served build of a store: its manifest, its client and its two collections."""

    def __init__(
        self, client: Any, questions: str, tables: str, manifest: dict[str, Any], where: str
    ) -> None:
        self.client = client
        self.questions_collection = questions
        self.tables_collection = tables
        self.manifest = manifest
        self.where = where

    @classmethod
    def open(
        cls,
        store: str | Path | StoreLocation,
        *,
        collection: str = "schemarag",
        api_key: str | None = None,
        embedder_name: str | None = None,
    ) -> KnowledgeBase:
        """Open the served build; `embedder_name`, when given, must be the build's embedder."""
        from qdrant_client import QdrantClient

        location = (
            store
            if isinstance(store, StoreLocation)
            else StoreLocation.parse(store, collection=collection, api_key=api_key)
        )
        where = location.url or str(location.root)
        build_id = location.current()
        if build_id is None:
            raise StoreNotReadyError(
                f"{where}: no built knowledge base here; run `schemarag index build ... "
                f"--store {where}` first"
            )
        manifest = location.manifest(build_id)
        built_with = str(manifest.get("embedder", ""))
        if embedder_name and built_with and built_with != embedder_name:
            raise StoreNotReadyError(
                f"{where}: the index was built with embedder {built_with!r}, not "
                f"{embedder_name!r}; use the same embedder or rebuild"
            )
        if location.embedded:
            folder = location.build_dir(build_id) / "qdrant"
            if not folder.is_dir():
                raise StoreNotReadyError(f"{folder}: the served build has no Qdrant folder")
            try:
                client = QdrantClient(path=str(folder))
            except RuntimeError as exc:  # the folder is locked by another client
                raise StoreNotReadyError(f"{folder}: cannot open: {exc}") from None
            questions = location.collection_name(QUESTIONS, build_id)
            tables = location.collection_name(TABLES, build_id)
        else:
            client = QdrantClient(url=location.url, api_key=location.api_key, timeout=30)
            questions, tables = location.alias(QUESTIONS), location.alias(TABLES)
        log.info("opened knowledge base %s build %s", where, build_id)
        return cls(client, questions, tables, manifest, where)

    @property
    def embedder_name(self) -> str:
        return str(self.manifest.get("embedder", ""))

    def close(self) -> None:
        self.client.close()

    def table_entries(self) -> tuple[list[TableEntry], npt.NDArray[np.float32]]:
        """Every table point: entries (in a stable order) and their vectors, row-aligned."""
        points = list(self._scroll(self.tables_collection, with_vectors=True))
        points.sort(key=lambda p: (str(p.payload["db_id"]).casefold(), str(p.payload["table"])))
        entries = [TableEntry.from_payload(p.payload) for p in points]
        if not points:
            return entries, np.zeros((0, int(self.manifest.get("dim", 1))), dtype=np.float32)
        vectors = np.asarray([p.vector for p in points], dtype=np.float32)
        return entries, vectors

    def question_count(self) -> int:
        return int(self.client.count(self.questions_collection, exact=True).count)

    def question_texts(self) -> Iterator[tuple[str, str]]:
        """Every synthetic question with the synthesizer that wrote it (for the leakage check)."""
        for point in self._scroll(self.questions_collection, payload=["question", "synthesizer"]):
            yield str(point.payload.get("question", "")), str(point.payload.get("synthesizer", ""))

    def search_questions(
        self, vector: npt.NDArray[np.float32], limit: int, db_id: str | None = None
    ) -> list[QuestionHit]:
        from qdrant_client import models

        query_filter = None
        if db_id is not None:
            query_filter = models.Filter(
                must=[models.FieldCondition(key="db_id", match=models.MatchValue(value=db_id))]
            )
        response = self.client.query_points(
            self.questions_collection,
            query=vector.tolist(),
            limit=limit,
            query_filter=query_filter,
            with_payload=_HIT_FIELDS,
        )
        return [_hit(p) for p in response.points]

    def _scroll(
        self, collection: str, *, with_vectors: bool = False, payload: Sequence[str] | bool = True
    ) -> Iterator[Any]:
        offset = None
        while True:
            points, offset = self.client.scroll(
                collection,
                limit=1024,
                offset=offset,
                with_payload=list(payload) if not isinstance(payload, bool) else payload,
                with_vectors=with_vectors,
            )
            yield from points
            if offset is None:
                return


def _hit(point: Any) -> QuestionHit:
    payload = point.payload or {}
    return QuestionHit(
        score=float(point.score),
        db_id=str(payload.get("db_id", "")),
        tables=tuple(payload.get("tables", ()) or ()),
        question=str(payload.get("question", "")),
        sql=str(payload.get("sql", "")),
    )
