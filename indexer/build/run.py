"""Index builds: traversals → ICRL synthesis → validation → embeddings → Qdrant, incrementally.

A build is planned against the served one. Every traversal has a key: its table set, the
fingerprints of its tables and the synthesis settings. Traversals whose key the served build
lacks are synthesized; records whose key vanished are removed; everything else is carried over
untouched (embedded: a copy of the served build's folder; server: the points are copied). An
unchanged catalog is reported up to date at once, with no provider call.

Users' examples (`indexer.examples.records`) are planned the same way: each stored example whose
tables still have the fingerprints it was validated against has a record key; new keys are
embedded (never synthesized) and added, vanished ones removed, and the manifest records which
examples the build holds (`examples`: id → key). An example whose table changed is left out and
reported (`user_examples_dropped`).

Work is journaled per batch of traversals (`indexer.build.journal`), so a killed build resumes
where it stopped; the knowledge base is loaded from the journal and published atomically at the end
(`indexer.build.location`), so readers keep the previous complete build until then.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import shutil
import signal
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence, Set
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from indexer.build.journal import Journal, JournalRecord
from indexer.build.location import (
    QUESTIONS,
    TABLES,
    StoreLocation,
    build_lock,
    copy_build,
    open_client,
)
from indexer.build.report import BuildReport
from indexer.build.snapshot import (
    QUESTION_FIELDS,
    Chunk,
    kept_rows,
    payload_line,
    unit_rows,
    write_snapshot,
)
from indexer.build.table_documents import DOCUMENT_VERSION, table_document
from indexer.errors import BuildError
from indexer.examples.records import (
    ORIGIN,
    SYNTHETIC,
    ExamplePlan,
    example_payload,
    example_point_id,
    plan_examples,
)
from indexer.examples.stored import ExampleStore
from indexer.synthesis.pairs import ChainRunner
from providers import Embedder
from providers.threads import limited_threads
from schemagraph import (
    Catalog,
    Database,
    DatabaseSample,
    Traversal,
    TraversalConfig,
    build_graph,
    database_fingerprint,
    enumerate_traversals,
    sample_database,
    table_fingerprint,
)
from schemagraph.containment import find_relations
from schemagraph.families import collapse_families, find_families
from schemagraph.parent_watch import exit_with_parent

log = logging.getLogger(__name__)

POINT_NAMESPACE = uuid.UUID("6f1d2c54-0b7e-4d0e-9a43-5c3f0e6b9a10")
UPSERT_BATCH = 256


@dataclass(frozen=True)
class CollectionLayout:
    """How a Qdrant server holds a build's collections (docs/OPERATIONS.md, "Sharding and
    replication"): `shards` and `replicas` of the question collection (None: the server's
    defaults, one shard per node and no replica; the small table collection is one shard with
    the same replicas), `on_disk`: vectors and payloads on disk, `quantize`: int8 scalar
    quantization kept in RAM (searches rescore with the originals). Server stores only."""

    shards: int | None = None
    replicas: int | None = None
    on_disk: bool = False
    quantize: bool = False

    def __post_init__(self) -> None:
        for name in ("shards", "replicas"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise BuildError(f"{name} must be >= 1, got {value}")

    @property
    def is_default(self) -> bool:
        return self == CollectionLayout()

    def create_options(self, dim: int, distance: Any, *, questions: bool) -> dict[str, Any]:
        """`create_collection` keyword arguments of the question (or table) collection."""
        from qdrant_client import models

        options: dict[str, Any] = {
            "vectors_config": models.VectorParams(
                size=dim, distance=distance, on_disk=self.on_disk or None
            )
        }
        if questions and self.shards is not None:
            options["shard_number"] = self.shards
        if self.replicas is not None:
            options["replication_factor"] = self.replicas
        if self.on_disk:
            options["on_disk_payload"] = True
        if self.quantize:
            options["quantization_config"] = models.ScalarQuantization(
                scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, always_ram=True)
            )
        return options


@dataclass(frozen=True)
class BuildConfig:
    """How to build. `chains`: ICRL chains (final questions) per traversal; `iterations`: ICRL
    iterations after the initial attempt; `concurrency`: traversals synthesized at once by
    threads of one process (language-model calls wait on the model); `processes`: processes
    forked for offline synthesis (`BuildServices.offline`; `auto_processes` suggests how
    many), 0 to synthesize in the build's own threads; `batch_traversals`: traversals per
    journal commit;
    `layout`: the collections' layout on a Qdrant server."""

    traversal: TraversalConfig = field(default_factory=TraversalConfig)
    chains: int = 3
    iterations: int = 2
    seed: int = 0
    full: bool = False
    concurrency: int = 4
    processes: int = 0
    batch_traversals: int = 64
    keep_builds: int = 2
    execute_sql: bool = True
    layout: CollectionLayout = field(default_factory=CollectionLayout)

    def __post_init__(self) -> None:
        if self.processes < 0:
            raise BuildError(f"processes must be >= 0, got {self.processes}")
        for name in ("chains", "concurrency", "batch_traversals", "keep_builds"):
            if getattr(self, name) < 1:
                raise BuildError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.iterations < 0:
            raise BuildError(f"iterations must be >= 0, got {self.iterations}")


MAX_AUTO_PROCESSES = 8


@dataclass
class BuildServices:
    """The explicit dependencies of a build."""

    synthesize: ChainRunner
    synthesizer_name: str
    embedder: Embedder
    #: called as (stage, done, total) while a build runs: "synthesize" counts traversals,
    #: "load" question records written to the store, "tables" table documents embedded and written
    progress: Callable[[str, int, int], None] | None = None
    #: returns {"provider_calls": n, "cache_hits": n, "usage": {...}} for the report
    usage: Callable[[], dict[str, Any]] | None = None
    #: `synthesize` calls no language model or API (template synthesis, rule feedback): it is
    #: CPU-bound and safe to fork, so it may run in forked processes (`BuildConfig.processes`)
    offline: bool = False


def _add_usage(report: BuildReport, services: BuildServices) -> None:
    if services.usage is None:
        return
    counters = services.usage()
    report.provider_calls = int(counters.get("provider_calls", 0))
    report.cache_hits = int(counters.get("cache_hits", 0))
    report.usage = dict(counters.get("usage", {}))


#: what a synthetic pair is: raised when the templates' wording or the checks a pair must pass
#: (`indexer.validate`, `indexer.synthesis.faithful`) change, so that the next build
#: synthesizes every traversal again instead of keeping pairs the new code would not write
PAIRS_VERSION = 2


def traversal_key(db: Database, traversal: Traversal, signature: str) -> str:
    prints = sorted(table_fingerprint(db.table(t)) for t in traversal.tables)
    text = "\x1f".join([traversal.id, signature, *prints])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def point_id(key: str, question: str, sql: str) -> str:
    return str(uuid.uuid5(POINT_NAMESPACE, f"{key}\x1f{question}\x1f{sql}"))


def build_index(
    catalog: Catalog,
    location: StoreLocation,
    services: BuildServices,
    config: BuildConfig | None = None,
) -> BuildReport:
    """Build (or bring up to date) the knowledge base of `catalog` at `location`, holding the
    store's build lock (a second build on the same store fails at once, naming the holder)."""
    config = config or BuildConfig()
    if location.embedded and not config.layout.is_default:
        raise BuildError(
            "shards, replicas, on-disk storage and quantization are settings of a Qdrant server "
            "store (--store http://...); an embedded store is one folder per build"
        )
    if not len(catalog):
        raise BuildError("the catalog is empty: nothing to index")
    with build_lock(location):
        return _build(catalog, location, services, config)


def _build(
    catalog: Catalog, location: StoreLocation, services: BuildServices, config: BuildConfig
) -> BuildReport:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    # a family of sharded tables is indexed once, as its newest member (schemagraph.families)
    families = [family.as_dict() for db in catalog for family in find_families(db)]
    catalog = collapse_families(catalog)
    graph = build_graph(catalog)
    traversals = enumerate_traversals(graph, config.traversal)
    signature = json.dumps(
        [
            PAIRS_VERSION,
            services.synthesizer_name,
            services.embedder.name,
            config.chains,
            config.iterations,
            config.seed,
            config.traversal.__dict__,
        ],
        sort_keys=True,
    )
    keyed = {traversal_key(catalog.database(t.db_id), t, signature): t for t in traversals}
    timings["plan"] = time.perf_counter() - started

    previous = location.current()
    if previous is not None and location.pending() == previous:
        # stopped between publishing and clearing PENDING: that build is whole and served
        location.set_pending(None)
    prev_keys: set[str] = set()
    prev_examples: dict[str, str] = {}
    served_examples: dict[str, str] = {}  # what the served build holds, for the report
    if previous:
        prev_manifest = location.manifest(previous)
        served_examples = dict(prev_manifest.get("examples") or {})
        if not config.full:
            prev_keys = set(prev_manifest["traversal_keys"])
            prev_examples = served_examples
    examples = plan_examples(catalog, ExampleStore.read(location), services.embedder.name)
    prev_example_keys = set(prev_examples.values())
    todo = sorted(k for k in keyed if k not in prev_keys)
    todo_examples = sorted(k for k in examples.keyed if k not in prev_example_keys)
    gone = sorted((prev_keys - keyed.keys()) | (prev_example_keys - examples.keyed.keys()))
    base = previous if (previous and not config.full) else None
    # Table documents of a database whose schema did not change are the base build's (its
    # values are not sampled again); all are rewritten when the sampling seed or what a
    # document says (`DOCUMENT_VERSION`) changed.
    table_signature = {"seed": config.seed, "version": DOCUMENT_VERSION}
    documents_current = bool(base) and prev_manifest.get("table_documents") == table_signature
    stale = None
    if documents_current:
        now = {db.id: database_fingerprint(db) for db in catalog}
        before = dict(prev_manifest.get("databases") or {})
        stale = {d for d, fp in now.items() if before.get(d) != fp} | (before.keys() - now.keys())
    dropped_now = [d for d in examples.dropped if d.id in served_examples]
    for dropped in dropped_now:
        log.warning("user example %s (%s) left out: %s", dropped.id, dropped.where, dropped.reason)

    if base and not todo and not gone and not todo_examples and documents_current:
        log.info("catalog unchanged since build %s: nothing to do", base)
        manifest = location.manifest(base)
        report = BuildReport.up_to_date_of(
            manifest, catalog, len(traversals), time.perf_counter() - started
        )
        report.user_examples = len(examples.keyed)
        report.user_examples_stale = len(examples.dropped)
        _add_usage(report, services)
        return report

    planned: list[Any] = [base, todo, gone]
    if todo_examples:
        planned.append(todo_examples)
    plan = hashlib.sha256(json.dumps(planned).encode()).hexdigest()[:8]
    build_id = _resume_or_start(location, plan)
    journal = Journal(location.build_dir(build_id) / "journal.sqlite")
    try:
        journal.set_meta("plan", plan)
        journal.set_meta("base", base or "")
        done = journal.done_keys()
        remaining = [k for k in todo if k not in done]
        log.info(
            "build %s: %d traversals to synthesize (%d already journaled), %d reused, %d to remove",
            build_id,
            len(remaining),
            len(todo) - len(remaining),
            len(keyed) - len(todo),
            len(gone),
        )
        t0 = time.perf_counter()
        failed = _synthesize_all(
            catalog, keyed, remaining, len(todo), journal, services, config, build_id, timings
        )
        # synthesis includes validation (every SQL parsed, qualified and run); embedding is apart
        timings["synthesize"] = time.perf_counter() - t0 - timings["embed_questions"]
        if todo_examples:
            t0 = time.perf_counter()
            journal_examples(
                examples, [k for k in todo_examples if k not in done], journal, services.embedder
            )
            timings["user_examples"] = time.perf_counter() - t0

        question_count, removed = load_knowledge_base(
            location,
            build_id,
            base,
            gone,
            journal,
            config,
            dim=services.embedder.dim,
            tables_of=(catalog, services.embedder),
            stale=stale,
            progress=services.progress,
            timings=timings,
        )
        stats = list(journal.stats())
        finished = journal.done_keys()
        published_keys = sorted(((keyed.keys() - set(todo)) | finished) & keyed.keys())
        published_examples = {
            e.id: k for k, e in examples.keyed.items() if k in prev_example_keys or k in finished
        }
    except Exception:
        # A build that stopped on an error before finishing any traversal has nothing to
        # resume: leave no PENDING behind. (An interrupted or killed build keeps its journal.)
        if not journal.done_keys():
            journal.close()
            shutil.rmtree(location.build_dir(build_id), ignore_errors=True)
            location.set_pending(None)
        raise
    finally:
        journal.close()

    report = BuildReport.from_stats(
        build_id=build_id,
        catalog=catalog,
        traversals=len(traversals),
        synthesized_traversals=len(todo),
        removed_traversals=len(gone),
        reused_traversals=len(keyed) - len(todo),
        removed_records=removed,
        questions=question_count,
        stats=stats,
        timings=timings,
        seconds=time.perf_counter() - started,
    )
    report.failed_traversals = failed
    report.user_examples = len(published_examples)
    report.user_examples_added = len(todo_examples)
    report.user_examples_dropped = [d.as_dict() for d in dropped_now]
    report.user_examples_stale = len(examples.dropped)
    _add_usage(report, services)
    relations = find_relations(catalog)
    manifest = {
        "build_id": build_id,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "base": base,
        "embedder": services.embedder.name,
        "dim": services.embedder.dim,
        "synthesizer": services.synthesizer_name,
        "collections": {
            kind: location.collection_name(kind, build_id) for kind in (QUESTIONS, TABLES)
        },
        "databases": {db.id: database_fingerprint(db) for db in catalog},
        "twins": [group.as_dict() for group in relations.twins],
        "containment": [group.as_dict() for group in relations.containment],
        "families": families,
        # Failed traversals are left out, so the next build retries them.
        "traversal_keys": published_keys,
        # users' examples in this build: example id -> record key (indexer.examples.records)
        "examples": published_examples,
        "layout": asdict(config.layout),
        "table_documents": table_signature,
        "report": report.as_dict(),
    }
    _write_json(location.build_dir(build_id) / "manifest.json", manifest)
    if location.embedded:
        location.publish(build_id, None)
        location.set_pending(None)
        pruned = location.prune(config.keep_builds)
    else:
        with open_client(location, build_id) as client:
            location.publish(build_id, client)
            location.set_pending(None)
            pruned = location.prune(config.keep_builds, client)
    if pruned:
        log.info("pruned old builds: %s", ", ".join(pruned))
    return report


def _resume_or_start(location: StoreLocation, plan: str) -> str:
    pending = location.pending()
    if pending and (location.build_dir(pending) / "journal.sqlite").exists():
        journal = Journal(location.build_dir(pending) / "journal.sqlite")
        try:
            same = journal.get_meta("plan") == plan
        finally:
            journal.close()
        if same:
            log.info("resuming interrupted build %s", pending)
            return pending
        log.info("discarding interrupted build %s: the catalog changed since", pending)
        shutil.rmtree(location.build_dir(pending), ignore_errors=True)
    build_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ") + "-" + plan
    location.build_dir(build_id).mkdir(parents=True, exist_ok=True)
    location.set_pending(build_id)
    return build_id


def _synthesize_all(
    catalog: Catalog,
    keyed: dict[str, Traversal],
    remaining: list[str],
    total: int,
    journal: Journal,
    services: BuildServices,
    config: BuildConfig,
    build_id: str,
    timings: dict[str, float],
) -> int:
    """Synthesize, embed and journal `remaining`; returns how many traversals failed. Adds the
    seconds spent embedding to `timings["embed_questions"]`."""
    timings["embed_questions"] = 0.0
    finished = total - len(remaining)
    failures: list[str] = []
    # Grouped by database, so a database's sample is read once and released as the build moves on.
    ordered = sorted(remaining, key=lambda k: (keyed[k].db_id, k))
    chunks = [
        ordered[start : start + config.batch_traversals]
        for start in range(0, len(ordered), config.batch_traversals)
    ]
    synthesizer = _ChunkSynthesizer(catalog, keyed, services.synthesize, config.seed)
    processes = config.processes
    if processes and not services.offline:
        raise BuildError(
            "synthesis processes need offline synthesis (template synthesizer, rule feedback): "
            "a language model's client does not survive a fork; use --concurrency"
        )
    with contextlib.ExitStack() as stack:
        if processes:
            done_chunks = _in_processes(synthesizer, chunks, processes, stack)
        else:
            threads = stack.enter_context(ThreadPoolExecutor(max_workers=config.concurrency))
            done_chunks = (synthesizer.run(chunk, threads.map) for chunk in chunks)
        for chunk, (results, chunk_failures) in zip(chunks, done_chunks, strict=True):
            failures.extend(chunk_failures)
            _journal_chunk(catalog, keyed, results, journal, services, build_id, timings)
            finished += len(chunk)
            if services.progress:
                services.progress("synthesize", finished, total)
    if failures and len(failures) == len(remaining):
        raise BuildError(
            f"synthesis failed for all {len(failures)} traversals; first error: {failures[0]}"
        )
    return len(failures)


def auto_processes() -> int:
    """Synthesis processes for an offline build on this machine: one per core. Each waits on
    its SQL worker part of the time, and the build's own process embeds meanwhile on the
    OpenMP threads the processes leave (at least one): on 2 cores, two processes built a
    300-database estate in 117-118 s, one in 124-128 s (docs/BENCHMARKS.md)."""
    return max(1, min(os.cpu_count() or 1, MAX_AUTO_PROCESSES))


ChunkResult = tuple[list[tuple[str, list[dict[str, Any]]]], list[str]]


class _ChunkSynthesizer:
    """Synthesizes chunks of traversal keys: (key, records) for each that succeeded, and one
    line per failure (logged; a failed traversal is retried by the next build)."""

    def __init__(
        self, catalog: Catalog, keyed: dict[str, Traversal], synthesize: ChainRunner, seed: int
    ) -> None:
        self.catalog, self.keyed, self.synthesize, self.seed = catalog, keyed, synthesize, seed
        self.samples: dict[str, DatabaseSample | None] = {}

    def run(self, chunk: list[str], map_: Callable[..., Iterator[Any]] = map) -> ChunkResult:
        db_ids = list(dict.fromkeys(self.keyed[k].db_id for k in chunk))
        for db_id in list(self.samples):
            if db_id not in db_ids:
                del self.samples[db_id]
        for db_id in db_ids:  # read once, outside the threads
            if db_id not in self.samples:
                self.samples[db_id] = sample_database(self.catalog.database(db_id), seed=self.seed)
        failures: list[str] = []

        def one(key: str) -> tuple[str, list[dict[str, Any]] | None]:
            traversal = self.keyed[key]
            db = self.catalog.database(traversal.db_id)
            try:
                return key, self.synthesize(db, traversal, self.samples[db.id], self.seed)
            except Exception as exc:  # one bad traversal must not sink a night's build
                log.warning("synthesis failed for %s %s: %s", db.id, list(traversal.tables), exc)
                failures.append(f"{type(exc).__name__}: {exc}")
                return key, None

        results = [(k, recs) for k, recs in map_(one, chunk) if recs is not None]
        return results, failures


_forked: _ChunkSynthesizer | None = None
"""What a forked synthesis process works on (set in the parent just before the fork)."""


@contextlib.contextmanager
def _forking(synthesizer: _ChunkSynthesizer) -> Iterator[None]:
    """`synthesizer` is what processes forked meanwhile work on (a pool forks at its first
    submit)."""
    global _forked
    _forked = synthesizer
    try:
        yield
    finally:
        _forked = None


def _synthesis_process_started(parent_pid: int) -> None:
    """A synthesis process leaves SIGINT and SIGTERM to the build, which stops it (a terminal's
    Ctrl-C, `timeout` and systemd signal the whole group), and ends by itself when the build's
    process is gone (`schemagraph.parent_watch`; it is forked by the thread that runs the build,
    which outlives it, so the kernel's death signal applies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    exit_with_parent(parent_pid, kernel=True)


def _stop_processes_unless_done(
    pool: ProcessPoolExecutor,
) -> Callable[[type[BaseException] | None, BaseException | None, Any], bool]:
    """An exit callback that kills `pool`'s processes when the block ends by an exception (an
    interrupt, a signal, an error): the chunks in flight are not waited for, since the journal
    holds every chunk done. The pool's own exit then joins dead processes at once."""

    def stop(kind: type[BaseException] | None, _exc: BaseException | None, _tb: Any) -> bool:
        if kind is not None:
            # concurrent.futures has no public way to kill a pool's processes before 3.14, and
            # forgets them at shutdown: take them first
            processes = list((getattr(pool, "_processes", None) or {}).values())
            for process in processes:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
        return False

    return stop


def _run_forked(chunk: list[str]) -> ChunkResult:
    assert _forked is not None
    return _forked.run(chunk)


def _in_processes(
    synthesizer: _ChunkSynthesizer,
    chunks: list[list[str]],
    processes: int,
    stack: contextlib.ExitStack,
) -> Iterator[ChunkResult]:
    """Chunks synthesized by `processes` forked processes, yielded in order, with at most two
    chunks per process in flight (the parent embeds and journals meanwhile)."""
    # The build's own process embeds meanwhile: its OpenMP threads (torch's) get the cores the
    # synthesis processes leave, until synthesis is done. On 2 cores, torch on both beside one
    # synthesis process built Spider in 143 s, on one in 109-119 s (docs/BENCHMARKS.md).
    cores = max(1, (os.cpu_count() or 1) - processes)
    stack.enter_context(limited_threads(cores))
    stack.enter_context(_forking(synthesizer))
    pool = stack.enter_context(
        ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_synthesis_process_started,
            initargs=(os.getpid(),),
        )
    )
    stack.push(_stop_processes_unless_done(pool))
    window: deque[Future[ChunkResult]] = deque()
    pending = iter(chunks)
    for chunk in itertools.islice(pending, 2 * processes):
        window.append(pool.submit(_run_forked, chunk))
    while window:
        result = window.popleft().result()
        following = next(pending, None)
        if following is not None:
            window.append(pool.submit(_run_forked, following))
        yield result


def _journal_chunk(
    catalog: Catalog,
    keyed: dict[str, Traversal],
    results: list[tuple[str, list[dict[str, Any]]]],
    journal: Journal,
    services: BuildServices,
    build_id: str,
    timings: dict[str, float],
) -> None:
    """Embed a chunk's questions and commit its records and stats to the journal."""
    # A record whose question was dropped (a duplicate, say) keeps only its stats.
    texts = [r["question"] for _, recs in results for r in recs if r.get("question")]
    embedding_started = time.perf_counter()
    vectors = services.embedder.embed_documents(texts)
    timings["embed_questions"] += time.perf_counter() - embedding_started
    records: list[JournalRecord] = []
    finished_stats: list[tuple[str, dict[str, Any]]] = []
    i = 0
    for key, recs in results:
        traversal = keyed[key]
        db = catalog.database(traversal.db_id)
        stats: dict[str, Any] = {"records": 0, "dropped": 0, "repaired": 0}
        for rec in recs:
            stats_part = rec.pop("stats", {})
            for name, value in stats_part.items():
                _accumulate(stats, name, value)
            if not rec.get("question"):
                continue
            payload = {
                **rec,
                ORIGIN: SYNTHETIC,
                "db_id": db.id,
                "traversal": traversal.id,
                "traversal_tables": list(traversal.tables),
                "traversal_key": key,
                "synthesizer": services.synthesizer_name,
                "fingerprints": {t: table_fingerprint(db.table(t)) for t in rec["tables"]},
                "build_id": build_id,
            }
            records.append(
                JournalRecord(point_id(key, rec["question"], rec["sql"]), key, payload, vectors[i])
            )
            stats["records"] += 1
            i += 1
        finished_stats.append((key, stats))
    journal.commit(finished_stats, records)


def _accumulate(stats: dict[str, Any], name: str, value: Any) -> None:
    if isinstance(value, dict):
        target = stats.setdefault(name, {})
        for k, v in value.items():
            target[k] = target.get(k, 0) + v
    elif isinstance(value, list):
        stats.setdefault(name, []).extend(value)
    else:
        stats[name] = stats.get(name, 0) + value


def journal_examples(
    examples: ExamplePlan, keys: Sequence[str], journal: Journal, embedder: Embedder
) -> None:
    """Embed the user examples `keys` (record keys of `examples`) and journal their records."""
    for start in range(0, len(keys), UPSERT_BATCH):
        part = keys[start : start + UPSERT_BATCH]
        vectors = embedder.embed_documents([examples.keyed[k].question for k in part])
        records = [
            JournalRecord(
                example_point_id(key), key, example_payload(examples.keyed[key], key, ""), vector
            )
            for key, vector in zip(part, vectors, strict=True)
        ]
        journal.commit([(k, {"user_examples": 1}) for k in part], records)


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
        for batch in journal.records(UPSERT_BATCH):
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
        for start in range(0, len(docs), UPSERT_BATCH):
            part = docs[start : start + UPSERT_BATCH]
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
    (`indexer.build.snapshot`), from the base build's snapshot, the journal and the table rows of
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


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
