"""The synthesis step: synthesize the plan's traversals, embed their questions, journal them.

Traversals go in chunks of `BuildConfig.batch_traversals`, grouped by database so that a
database's sample is read once; each chunk's records are embedded and committed to the journal
(`indexer.building.journal`) at once, so a killed build resumes after its last chunk. Offline
synthesis may run in forked processes (`BuildConfig.processes`) while the build's own process
embeds; a language model's synthesis runs in the build's threads (`BuildConfig.concurrency`).
Users' examples are embedded and journaled here too (`journal_examples`), never synthesized.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from indexer.building.config import BuildConfig, BuildServices
from indexer.building.journal import Journal, JournalRecord
from indexer.building.load import UPSERT_BATCH, chunk_size, point_id
from indexer.errors import BuildError
from indexer.examples.records import ExamplePlan, example_payload, example_point_id
from indexer.synthesis.pairs import ChainRunner
from indexer.synthesis.warehouse_roles import is_warehouse, once, unsharded
from providers import Embedder
from providers.threads import limited_threads
from providers.waiting import result_of
from schemagraph import (
    Catalog,
    Database,
    DatabaseSample,
    Traversal,
    sample_database,
    table_fingerprint,
)
from schemagraph.humanize import humanize
from schemagraph.parent_watch import exit_with_parent
from store.records import ORIGIN, ROUTING, SYNTHETIC

log = logging.getLogger("indexer.building")  # the name log configurations know

MAX_AUTO_PROCESSES = 8


def synthesize_traversals(
    catalog: Catalog,
    keyed: Mapping[str, Traversal],
    remaining: list[str],
    total: int,
    journal: Journal,
    services: BuildServices,
    config: BuildConfig,
    build_id: str,
    timings: dict[str, float],
    *,
    routed: frozenset[str] = frozenset(),
) -> int:
    """Synthesize, embed and journal `remaining`, with routing keys for the traversals of the
    `routed` databases; returns how many traversals failed. Adds the seconds spent embedding to
    `timings["embed_questions"]`."""
    timings["embed_questions"] = 0.0
    finished = total - len(remaining)
    failures: list[str] = []
    # Grouped by database, so a database's sample is read once and released as the build moves on.
    ordered = sorted(remaining, key=lambda k: (keyed[k].db_id, k))
    size = chunk_size(total, config.batch_traversals)
    chunks = [ordered[start : start + size] for start in range(0, len(ordered), size)]
    if services.progress:  # at once: the first chunk takes seconds (and loads the embedder)
        services.progress("synthesize", finished, total)
    synthesizer = _ChunkSynthesizer(catalog, keyed, services.synthesize, config.seed, routed)
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
        self,
        catalog: Catalog,
        keyed: Mapping[str, Traversal],
        synthesize: ChainRunner,
        seed: int,
        routed: frozenset[str] = frozenset(),
    ) -> None:
        self.catalog, self.keyed, self.synthesize, self.seed = catalog, keyed, synthesize, seed
        #: the databases whose traversals get routing keys (`plan.routing_databases`)
        self.routed = routed
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
                records = self.synthesize(db, traversal, self.samples[db.id], self.seed)
            except Exception as exc:  # one bad traversal must not sink a night's build
                log.warning("synthesis failed for %s %s: %s", db.id, list(traversal.tables), exc)
                failures.append(f"{type(exc).__name__}: {exc}")
                return key, None
            if db.id in self.routed:
                records += self._routing_keys(db, traversal, records)
            return key, records

        results = [(k, recs) for k, recs in map_(one, chunk) if recs is not None]
        return results, failures

    def _routing_keys(
        self, db: Database, traversal: Traversal, records: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """A warehouse traversal's pairs synthesized as for SQLite, as routing keys
        (`store.records.ROUTING`): their questions name the schema's words ("Among the user IDs
        with at least 2 stackoverflow badges, ..."), where the readable ones, which are shown,
        often leave them out (`BuildConfig.routing_keys`; docs/BENCHMARKS.md has what they do to
        routing). None when that synthesis fails; a pair already among `records` is left out."""
        try:
            plain = self.synthesize(
                dataclasses.replace(db, dialect=""), traversal, self.samples[db.id], self.seed
            )
        except Exception as exc:
            log.debug("routing keys failed for %s %s: %s", db.id, list(traversal.tables), exc)
            return []
        shown = {(r.get("question"), r.get("sql")) for r in records}
        return [
            {**{k: v for k, v in r.items() if k != "stats"}, ORIGIN: ROUTING}
            for r in plain
            if r.get("question") and (r["question"], r.get("sql")) not in shown
        ]


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
            # taken before `shutdown`, which forgets it
            manager = getattr(pool, "_executor_manager_thread", None)
            for process in processes:
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            # Its manager thread, seeing the processes dead, closes its wake-up pipe; if that
            # happens while the interpreter's exit hook wakes it (3.11 does so without the
            # pool's lock), the hook writes to a closed pipe and prints a traceback after
            # "terminated". Wait, bounded, for the thread to finish first.
            if manager is not None:
                manager.join(timeout=5)
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
        result = result_of(window.popleft())
        following = next(pending, None)
        if following is not None:
            window.append(pool.submit(_run_forked, following))
        yield result


def _journal_chunk(
    catalog: Catalog,
    keyed: Mapping[str, Traversal],
    results: list[tuple[str, list[dict[str, Any]]]],
    journal: Journal,
    services: BuildServices,
    build_id: str,
    timings: dict[str, float],
) -> None:
    """Embed a chunk's questions and commit its records and stats to the journal."""
    # A record whose question was dropped (a duplicate, say) keeps only its stats.
    texts = [
        indexed_text(catalog.database(keyed[key].db_id), r)
        for key, recs in results
        for r in recs
        if r.get("question")
    ]
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
            if rec.get(ORIGIN) == ROUTING:
                stats["routing_keys"] = stats.get("routing_keys", 0) + 1
            payload = {
                **rec,
                ORIGIN: rec.get(ORIGIN, SYNTHETIC),
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


def indexed_text(db: Database, record: Mapping[str, Any]) -> str:
    """What a synthetic question is embedded as: the question, and in a warehouse the words of
    the tables its SQL reads ("... (stackoverflow badges)"). A readable warehouse question
    often leaves out the dataset and table an analyst's question names ("GitHub commits"); the
    question shown to people and prompts stays as written."""
    question = str(record["question"])
    if not is_warehouse(db) or record.get(ORIGIN) == ROUTING:
        return question
    named = (db.table(t) for t in record.get("tables", ()) if db.has_table(t))
    words = dict.fromkeys(once(humanize(unsharded(t.qualified_name))) for t in named)
    return f"{question} ({', '.join(words)})" if words else question


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
