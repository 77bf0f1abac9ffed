"""The load step: fill a build's collections from its base build and its journal, and write
the snapshot readers load.

Embedded stores start from a copy of the base build's folder; a server store copies the base
collections' points. Then the removed keys' points are deleted, the journal's records
upserted, the table documents carried over or written again (`store.table_documents`),
and, for an embedded store, the collections written as flat files (`store.snapshot`),
derived from the base snapshot and the journal where they can be. Safe to redo from the start
after a crash: a build's folder is private until it is published.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from typing import Any

import numpy as np

from indexer.building.config import BuildConfig
from indexer.building.journal import Journal
from indexer.errors import BuildError
from providers import Embedder
from schemagraph import Catalog, sample_database
from store.location import QUESTIONS, TABLES, StoreLocation, copy_build, open_client
from store.snapshot import (
    QUESTION_FIELDS,
    Chunk,
    kept_rows,
    payload_line,
    unit_rows,
    write_snapshot,
)
from store.table_documents import table_document

log = logging.getLogger("indexer.building")  # the name log configurations know

POINT_NAMESPACE = uuid.UUID("6f1d2c54-0b7e-4d0e-9a43-5c3f0e6b9a10")
UPSERT_BATCH = 256


#: texts per step of a stage that embeds them: the MiniLM embedder's batch; smaller steps cost
#: more than they show (53 table documents of the bundled sample, 5 per call: 8.2-12.6 s; all
#: at once: 2.5-2.6 s, each new shape of a call building its kernels)
EMBED_STEP = 32


def chunk_size(total: int, most: int, least: int = 1) -> int:
    """Items per step of a stage of `total`: at most `most`, and at most a tenth of the total
    (so that progress moves at least every 10 %: a build's log has a line per 10 %), unless
    that is under `least`."""
    return max(1, least, min(most, total // 10))


def point_id(key: str, question: str, sql: str) -> str:
    """The point of a synthetic record: the same pair of the same traversal, the same point."""
    return str(uuid.uuid5(POINT_NAMESPACE, f"{key}\x1f{question}\x1f{sql}"))


def load_knowledge_base(
    location: StoreLocation,
    build_id: str,
    base: str | None,
    gone: Sequence[str],
    journal: Journal,
    config: BuildConfig,
    *,
    dim: int,
    tables_of: tuple[Catalog, Embedder] | None,
    stale: Set[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    timings: dict[str, float] | None = None,
) -> tuple[int, int]:
    """Fill the build's collections from the base build and the journal; returns the number of
    question records and the number removed. `tables_of`: the catalog whose table documents to
    write, with their embedder (None: keep the base build's); `stale`: with a base, only these
    databases' documents are rewritten (or removed, when the catalog no longer has them), the
    others are the base build's (None: all rewritten). Safe to redo from the start after
    a crash. `progress` hears ("load", done, total) and ("tables", done, total); `timings` gets
    the seconds of loading the questions ("load_questions") and the table documents
    ("load_tables")."""
    from qdrant_client import models

    started = time.perf_counter()
    timings = {} if timings is None else timings

    questions = location.collection_name(QUESTIONS, build_id)
    tables = location.collection_name(TABLES, build_id)
    if tables_of is None and base is None:
        raise BuildError("a build that keeps the table documents needs a base build")
    if location.embedded:
        shutil.rmtree(location.build_dir(build_id) / "qdrant", ignore_errors=True)
        if base:
            copy_build(location, base, build_id)
    with open_client(location, build_id) as client:
        if not location.embedded:
            for name in (questions, tables):
                if client.collection_exists(name):
                    client.delete_collection(name)
        # Embedders return unit vectors: DOT is the cosine, and embedded Qdrant scores it as a plain
        # matrix product instead of re-normalizing every stored vector per query.
        dot = models.Distance.DOT
        if not client.collection_exists(questions):
            client.create_collection(
                questions, **config.layout.create_options(dim, dot, questions=True)
            )
            if base and not location.embedded:
                _copy_points(client, location.collection_name(QUESTIONS, base), questions)
        if location.embedded:
            _fast_local_writes(client, questions)
        else:
            for name in ("db_id", "traversal_key"):
                client.create_payload_index(questions, name, models.PayloadSchemaType.KEYWORD)
        removed = _replace_questions(client, questions, gone, journal, build_id, progress)
        timings["load_questions"] = time.perf_counter() - started
        started = time.perf_counter()
        table_rows = _load_tables(
            client, location, build_id, base, tables_of, stale, config, dim, progress
        )
        timings["load_tables"] = time.perf_counter() - started
        count = int(client.count(questions, exact=True).count)
        _write_snapshot(
            client, location, build_id, base, gone, journal, count, table_rows[1], dim, timings
        )
        return count, removed


def _replace_questions(
    client: Any,
    questions: str,
    gone: Sequence[str],
    journal: Journal,
    build_id: str,
    progress: Callable[[str, int, int], None] | None,
) -> int:
    """Delete the points of the `gone` record keys from the collection `questions` and upsert
    the journal's records; returns how many points were deleted."""
    from qdrant_client import models

    removed = 0
    for start in range(0, len(gone), 512):
        selector = models.Filter(
            must=[
                models.FieldCondition(
                    key="traversal_key",
                    match=models.MatchAny(any=list(gone[start : start + 512])),
                )
            ]
        )
        removed += client.count(questions, count_filter=selector, exact=True).count
        client.delete(questions, points_selector=models.FilterSelector(filter=selector))
    total = journal.record_count()
    loaded = 0
    for batch in journal.records(chunk_size(total, UPSERT_BATCH)):
        client.upsert(
            questions,
            points=models.Batch(
                ids=[r.point_id for r in batch],
                vectors=[r.vector.tolist() for r in batch],
                payloads=[{**r.payload, "build_id": build_id} for r in batch],
            ),
        )
        loaded += len(batch)
        if progress:
            progress("load", loaded, total)
    return removed


def _load_tables(
    client: Any,
    location: StoreLocation,
    build_id: str,
    base: str | None,
    tables_of: tuple[Catalog, Embedder] | None,
    stale: Set[str] | None,
    config: BuildConfig,
    dim: int,
    progress: Callable[[str, int, int], None] | None,
) -> tuple[int, tuple[int, Iterable[Chunk]] | None]:
    """Fill the build's table collection: the base build's documents except those of the
    `stale` databases, plus new documents for the catalog's databases that are stale (all of
    them when `stale` is None and there is no base to keep). Returns the number of new
    documents and the snapshot rows (None: read them back from the collection)."""
    from qdrant_client import models

    tables = location.collection_name(TABLES, build_id)
    if tables_of is None:
        stale = set()  # no catalog: every base document is kept
    keep = base is not None and stale is not None
    if keep:
        assert base is not None and stale is not None
        if not location.embedded:  # embedded: the copied folder holds them already
            client.create_collection(
                tables, **config.layout.create_options(dim, models.Distance.DOT, questions=False)
            )
            _copy_points(client, location.collection_name(TABLES, base), tables)
        for start in range(0, len(stale), 512):
            selector = models.Filter(
                must=[
                    models.FieldCondition(
                        key="db_id", match=models.MatchAny(any=sorted(stale)[start : start + 512])
                    )
                ]
            )
            client.delete(tables, points_selector=models.FilterSelector(filter=selector))
    else:
        if client.collection_exists(tables):
            client.delete_collection(tables)
        client.create_collection(
            tables, **config.layout.create_options(dim, models.Distance.DOT, questions=False)
        )
    if location.embedded:
        _fast_local_writes(client, tables)
    docs: list[dict[str, Any]] = []
    vectors: list[Any] = [np.zeros((0, dim), dtype=np.float32)]
    if tables_of is not None:
        catalog, embedder = tables_of
        docs = [
            table_document(db, t, sample)
            for db in catalog
            if stale is None or db.id in stale
            for sample in [sample_database(db, seed=config.seed)]
            for t in db.tables
        ]
        step = chunk_size(len(docs), UPSERT_BATCH, EMBED_STEP)
        for start in range(0, len(docs), step):
            part = docs[start : start + step]
            vectors.append(embedder.embed_documents([d["text"] for d in part]))
            client.upsert(
                tables,
                points=models.Batch(
                    ids=[table_point_id(d) for d in part],
                    vectors=vectors[-1].tolist(),
                    payloads=part,
                ),
            )
            if progress:
                progress("tables", start + len(part), len(docs))
    new: Chunk = (
        unit_rows(np.concatenate(vectors)),
        [payload_line(d) for d in docs],
        [f"{table_point_id(d)}\t{d['db_id']}" for d in docs],
    )
    if not keep:
        return len(docs), (len(docs), [new])
    assert base is not None and stale is not None
    kept = kept_rows(location.build_dir(base), TABLES, drop_keys=stale)
    if kept is None:
        return len(docs), None
    return len(docs), (kept[0] + len(docs), itertools.chain(kept[1], [new]))


def table_point_id(document: dict[str, Any]) -> str:
    return str(uuid.uuid5(POINT_NAMESPACE, f"{document['db_id']}\x1f{document['table']}"))


def _write_snapshot(
    client: Any,
    location: StoreLocation,
    build_id: str,
    base: str | None,
    gone: Sequence[str],
    journal: Journal,
    count: int,
    table_rows: tuple[int, Iterable[Chunk]] | None,
    dim: int,
    timings: dict[str, float],
) -> None:
    """Embedded stores: the build's collections as flat files for readers
    (`store.snapshot`), from the base build's snapshot, the journal and the table rows of
    `_load_tables`. Rows that cannot be derived (a base snapshot written before snapshots kept keys)
    or whose count is not the collection's (`count` questions) are read back from the collections
    instead."""
    if not location.embedded:
        return
    started = time.perf_counter()
    questions = location.collection_name(QUESTIONS, build_id)
    tables = location.collection_name(TABLES, build_id)
    question_rows = _if_count(_derived_questions(location, base, gone, journal), count, "questions")
    if question_rows is None:
        question_rows = (count, _scrolled(client, questions, QUESTION_FIELDS, "traversal_key"))
    table_count = client.count(tables, exact=True).count
    table_rows = _if_count(table_rows, table_count, "tables")
    if table_rows is None:
        table_rows = (table_count, _scrolled(client, tables, None, "db_id"))
    write_snapshot(
        location.build_dir(build_id), {QUESTIONS: question_rows, TABLES: table_rows}, dim
    )
    timings["snapshot"] = time.perf_counter() - started


def _if_count(
    rows: tuple[int, Iterable[Chunk]] | None, count: int, what: str
) -> tuple[int, Iterable[Chunk]] | None:
    """Derived snapshot `rows`, if they hold the collection's `count` points; None (read the
    collection back) otherwise, with a warning."""
    if rows is not None and rows[0] != count:
        log.warning(
            "the derived snapshot holds %d %s, the collection %d: reading the collection back",
            rows[0],
            what,
            count,
        )
        return None
    return rows


def _derived_questions(
    location: StoreLocation, base: str | None, gone: Sequence[str], journal: Journal
) -> tuple[int, Iterator[Chunk]] | None:
    """The build's question rows: the base snapshot's, less the removed traversals and the
    points the journal replaces, then the journal's (None: the base snapshot has no keys)."""
    new = journal.record_count()
    if base is None:
        return new, _journal_rows(journal)
    kept = kept_rows(location.build_dir(base), QUESTIONS, set(gone), journal.point_ids())
    if kept is None:
        return None
    count, rows = kept
    return count + new, itertools.chain(rows, _journal_rows(journal))


def _journal_rows(journal: Journal) -> Iterator[Chunk]:
    for batch in journal.records(4096):
        yield (
            unit_rows([r.vector for r in batch]),
            [payload_line(r.payload, QUESTION_FIELDS) for r in batch],
            [f"{r.point_id}\t{r.traversal_key}" for r in batch],
        )


def _scrolled(
    client: Any, collection: str, fields: Sequence[str] | None, key: str
) -> Iterator[Chunk]:
    """Snapshot rows read back from a Qdrant collection, keyed by point id and the payload's
    `key` (the traversal key of a question, the database of a table)."""
    asked = [*fields, key] if fields else None
    for batch in _scroll_batches(client, collection, asked):
        payloads = [p.payload or {} for p in batch]
        yield (
            unit_rows([p.vector for p in batch]),
            [payload_line(p, fields) for p in payloads],
            [f"{p.id}\t{q.get(key, '')}" for p, q in zip(batch, payloads, strict=True)],
        )


def _fast_local_writes(client: Any, collection: str) -> None:
    """Embedded Qdrant commits (and fsyncs) its SQLite file once per point, which makes loading
    20k points take minutes. A build's folder is private until it is published, and a crash
    during loading is recovered by loading again from the journal, so per-point durability buys
    nothing here: turn it off for this connection. This reaches into qdrant-client's local
    storage; if its layout changes the build is only slower, never wrong."""
    try:
        storage = client._client.collections[collection].storage.storage
        storage.execute("PRAGMA synchronous=OFF")
        storage.execute("PRAGMA journal_mode=MEMORY")
    except (AttributeError, KeyError, TypeError) as exc:
        log.debug("cannot speed up local Qdrant writes (%s); continuing", exc)


def _copy_points(client: Any, source: str, target: str) -> None:
    from qdrant_client import models

    for points in _scroll_batches(client, source):
        client.upsert(
            target,
            points=[
                models.PointStruct(id=p.id, vector=p.vector, payload=p.payload) for p in points
            ],
        )


def _scroll_batches(
    client: Any, collection: str, fields: Sequence[str] | None = None
) -> Iterator[list[Any]]:
    """Every point of `collection` with its vector and its payload (only `fields`, if given),
    a batch at a time."""
    offset = None
    while True:
        points, offset = client.scroll(
            collection,
            limit=512,
            offset=offset,
            with_vectors=True,
            with_payload=list(fields) if fields else True,
        )
        if points:
            yield points
        if offset is None:
            return
