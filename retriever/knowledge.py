"""Read access to a built knowledge base: one Qdrant client per process, opened once.

The table collection is small (one point per table) and is read whole when a retriever opens.
The question collection is searched per query: through Qdrant (`query_points`) for a server
store, and by default from memory for an embedded one (`retriever.question_index`: the same
exact search without qdrant-client's per-point Python filters), read from the build's snapshot
files (`store.snapshot`) without opening Qdrant at all, or, for builds made before
snapshots, from the Qdrant folder, whose client is closed once loaded: either way an in-memory
knowledge base holds no lock on the build's folder.
`in_memory=False` searches an embedded store through Qdrant as well.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retriever.errors import StoreNotReadyError
from retriever.question_index import InMemoryQuestions, QuestionHit, hit_from_payload
from retriever.tables import TableEntry
from store.location import QUESTIONS, TABLES, StoreLocation
from store.manifest import Manifest, read_manifest
from store.snapshot import read_snapshot

log = logging.getLogger(__name__)

__all__ = ["KnowledgeBase", "QuestionHit", "served_build"]

_HIT_FIELDS = ["db_id", "tables", "question", "sql", "origin"]


def served_build(location: StoreLocation) -> tuple[str, Manifest]:
    """The build `location` serves (its CURRENT) and that build's manifest, read once: what
    every opener (CLI, HTTP, MCP) starts from. A store with no build is one line saying how to
    make one."""
    build_id = location.current()
    if build_id is None:
        hint = ""
        if not location.embedded:
            hint = (
                f" (the state folder {location.root} has no CURRENT: the server must see the "
                "state folder that `schemarag index build` writes)"
            )
        raise StoreNotReadyError(
            f"{location.where}: no built knowledge base here{hint}; build one with `schemarag "
            f"index build SOURCE... --store {location.where}` (`make demo` builds "
            ".schemarag/demo-store)"
        )
    return build_id, read_manifest(location, build_id)


class KnowledgeBase:
    """The served build of a store: its manifest, its client and its two collections."""

    def __init__(
        self, client: Any, questions: str, tables: str, manifest: Manifest, where: str
    ) -> None:
        self.client = client
        self.questions_collection = questions
        self.tables_collection = tables
        self.manifest = manifest
        self.where = where
        self._tables: tuple[list[TableEntry], npt.NDArray[np.float32]] | None = None
        self._memory: InMemoryQuestions | None = None

    @property
    def in_memory(self) -> bool:
        return self._memory is not None

    def load_into_memory(self) -> None:
        """Read both collections into memory and close the Qdrant client."""
        if self._memory is not None:
            return
        self._tables = self._read_tables()
        points = self._scroll(
            self.questions_collection, with_vectors=True, payload=[*_HIT_FIELDS, "synthesizer"]
        )
        self._memory = InMemoryQuestions(
            ((p.vector, p.payload or {}) for p in points), int(self.manifest.dim)
        )
        self.client.close()

    @classmethod
    def open(
        cls,
        store: str | Path | StoreLocation,
        *,
        collection: str = "schemarag",
        api_key: str | None = None,
        embedder_name: str | None = None,
        in_memory: bool | None = None,
        lock_wait_s: float = 30.0,
        served: tuple[str, Manifest] | None = None,
    ) -> KnowledgeBase:
        """Open the served build; `embedder_name`, when given, must be the build's embedder.
        `in_memory`: search the questions from memory (default: for an embedded store).
        `lock_wait_s`: how long to wait for a build folder another process has open (server
        workers loading the same build take turns; each holds it for the seconds it reads).
        `served`: the build and manifest `served_build` read, when the caller has them."""
        location = (
            store
            if isinstance(store, StoreLocation)
            else StoreLocation.parse(store, collection=collection, api_key=api_key)
        )
        where = location.url or str(location.root)
        build_id, manifest = served if served is not None else served_build(location)
        built_with = manifest.embedder
        if embedder_name and built_with and built_with != embedder_name:
            raise StoreNotReadyError(
                f"{where}: the index was built with embedder {built_with!r}, not "
                f"{embedder_name!r}; use the same embedder or rebuild"
            )
        if location.embedded and in_memory is not False:
            kb = cls._from_snapshot(location, build_id, manifest, where)
            if kb is not None:
                log.info("opened knowledge base %s build %s from its snapshot", where, build_id)
                return kb
        if location.embedded:
            folder = location.build_dir(build_id) / "qdrant"
            if not folder.is_dir():
                raise StoreNotReadyError(f"{folder}: the served build has no Qdrant folder")
            client = _open_folder(folder, lock_wait_s)
            questions = location.collection_name(QUESTIONS, build_id)
            tables = location.collection_name(TABLES, build_id)
        else:
            from qdrant_client import QdrantClient

            # The collections of the build CURRENT names, not the aliases: a build moves the
            # aliases first, and a server searching through them would mix the new build's
            # questions with the tables it read from the old one until it reloads.
            client = QdrantClient(url=location.url, api_key=location.api_key, timeout=30)
            questions = location.collection_name(QUESTIONS, build_id)
            tables = location.collection_name(TABLES, build_id)
            missing = [n for n in (questions, tables) if not client.collection_exists(n)]
            if missing:
                client.close()
                raise StoreNotReadyError(
                    f"{where}: build {build_id} (the state folder's CURRENT) has no collection "
                    f"{', '.join(missing)} on the server; is the state folder the one `schemarag "
                    "index build` writes for this server?"
                )
        kb = cls(client, questions, tables, manifest, where)
        if location.embedded if in_memory is None else in_memory:
            try:
                kb.load_into_memory()
            except BaseException:
                client.close()
                raise
        log.info(
            "opened knowledge base %s build %s%s", where, build_id, " in memory" * kb.in_memory
        )
        return kb

    @classmethod
    def _from_snapshot(
        cls, location: StoreLocation, build_id: str, manifest: Manifest, where: str
    ) -> KnowledgeBase | None:
        """The build read from its snapshot files, without opening Qdrant; None when the build
        has none (built before snapshots existed)."""
        build_dir = location.build_dir(build_id)
        questions = read_snapshot(build_dir, QUESTIONS)
        tables = read_snapshot(build_dir, TABLES)
        if questions is None or tables is None:
            return None
        kb = cls(
            None,
            location.collection_name(QUESTIONS, build_id),
            location.collection_name(TABLES, build_id),
            manifest,
            where,
        )
        kb._tables = _table_entries(*tables)
        vectors, payloads = questions
        kb._memory = InMemoryQuestions.from_unit_vectors(vectors, payloads)
        return kb

    @property
    def embedder_name(self) -> str:
        return self.manifest.embedder

    def close(self) -> None:
        if self.client is not None:
            self.client.close()

    def table_entries(self) -> tuple[list[TableEntry], npt.NDArray[np.float32]]:
        """Every table point: entries (in a stable order) and their vectors, row-aligned."""
        return self._tables if self._tables is not None else self._read_tables()

    def _read_tables(self) -> tuple[list[TableEntry], npt.NDArray[np.float32]]:
        points = list(self._scroll(self.tables_collection, with_vectors=True))
        if not points:
            dim = int(self.manifest.dim) or 1
            return [], np.zeros((0, dim), dtype=np.float32)
        vectors = np.asarray([p.vector for p in points], dtype=np.float32)
        return _table_entries(vectors, [p.payload for p in points])

    def question_count(self) -> int:
        if self._memory is not None:
            return len(self._memory)
        return int(self.client.count(self.questions_collection, exact=True).count)

    def question_texts(self) -> Iterator[tuple[str, str]]:
        """Every question with the synthesizer that wrote it (`user` for users' examples; for
        the leakage check)."""
        if self._memory is not None:
            yield from self._memory.texts()
            return
        for point in self._scroll(self.questions_collection, payload=["question", "synthesizer"]):
            yield str(point.payload.get("question", "")), str(point.payload.get("synthesizer", ""))

    def search_questions(
        self, vector: npt.NDArray[np.float32], limit: int, db_id: str | None = None
    ) -> list[QuestionHit]:
        if self._memory is not None:
            return self._memory.search(vector, limit, db_id)
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
        return [hit_from_payload(p.score, p.payload) for p in response.points]

    def search_questions_many(
        self, vectors: npt.NDArray[np.float32], limit: int
    ) -> list[list[QuestionHit]]:
        """`search_questions` for each row of `vectors`: one matrix product in memory, one
        batch request to a Qdrant server."""
        if self._memory is not None:
            return self._memory.search_many(vectors, limit)
        if not len(vectors):
            return []
        from qdrant_client import models

        responses = self.client.query_batch_points(
            self.questions_collection,
            requests=[
                models.QueryRequest(query=v.tolist(), limit=limit, with_payload=_HIT_FIELDS)
                for v in np.asarray(vectors, dtype=np.float32)
            ],
        )
        return [[hit_from_payload(p.score, p.payload) for p in r.points] for r in responses]

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


def _open_folder(folder: Path, lock_wait_s: float) -> Any:
    """An embedded Qdrant client on `folder`, waiting up to `lock_wait_s` for its lock."""
    from qdrant_client import QdrantClient

    deadline = time.monotonic() + lock_wait_s
    while True:
        try:
            return QdrantClient(path=str(folder))
        except RuntimeError as exc:  # the folder is locked by another client
            if time.monotonic() >= deadline:
                raise StoreNotReadyError(f"{folder}: cannot open: {exc}") from None
            time.sleep(0.2)


def _table_entries(
    vectors: npt.NDArray[np.float32], payloads: Sequence[dict[str, Any]]
) -> tuple[list[TableEntry], npt.NDArray[np.float32]]:
    """Table entries in a stable order (database, then table) with their vectors, row-aligned."""
    order = sorted(
        range(len(payloads)),
        key=lambda i: (str(payloads[i]["db_id"]).casefold(), str(payloads[i]["table"])),
    )
    entries = [TableEntry.from_payload(payloads[i]) for i in order]
    return entries, np.asarray(vectors[order], dtype=np.float32)
