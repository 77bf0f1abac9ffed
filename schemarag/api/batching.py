"""Retrievals of concurrent requests, run in batches by a two-stage pipeline.

Under load the costly step of a retrieval is the MiniLM forward pass, and one pass over 16
short questions costs a fraction of 16 passes. The retrieve route therefore does not run the
retriever on a thread of its own: it queues the question with `RetrievalBatcher.retrieve` and
awaits the answer. A *prepare* thread takes whatever is queued (up to `max_batch`), embeds and
searches those questions together (`Retriever.prepare`: the model pass and the matrix product
run without Python's interpreter lock), and hands the batch to a *rank* thread, which runs the
rest of each retrieval (Python and small numpy steps) in turn. The two stages overlap, so one
process keeps more than one core busy; while the rank thread works, new questions gather into
the next, larger batch. An idle server answers a lone question at once (no timer, no added
wait). Request threads never fight over the interpreter lock: measured with 16 clients on
Spider (docs/BENCHMARKS.md, "HTTP API load").
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from dataclasses import dataclass

from retriever import Prepared, RetrievalResult, Retriever

log = logging.getLogger(__name__)

__all__ = ["RetrievalBatcher"]


@dataclass(frozen=True)
class _Job:
    retriever: Retriever
    question: str
    top_databases: int
    top_tables: int
    dialect: str | None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[RetrievalResult]


_Prepared = tuple[list[_Job], list[Prepared]]


class RetrievalBatcher:
    """Runs `Retriever.retrieve` for many awaiting requests, batching their embeddings."""

    def __init__(self, *, max_batch: int = 32) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.max_batch = max_batch
        self.batches = 0
        self.questions = 0
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: stop
        # prepared batches waiting to be ranked: one at most, so that while the ranking thread
        # is busy the next questions gather into one larger batch
        self._prepared: queue.Queue[_Prepared | None] = queue.Queue(maxsize=1)
        self._threads: tuple[threading.Thread, ...] = ()
        self._lock = threading.Lock()

    async def retrieve(
        self,
        retriever: Retriever,
        question: str,
        top_databases: int,
        top_tables: int,
        dialect: str | None = None,
    ) -> RetrievalResult:
        """`retriever.retrieve(question, top_databases, top_tables, dialect=dialect)`, on the
        worker threads (started by the first call, and again after `close`)."""
        with self._lock:
            if not self._threads or not all(thread.is_alive() for thread in self._threads):
                self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RetrievalResult] = loop.create_future()
        self._queue.put(_Job(retriever, question, top_databases, top_tables, dialect, loop, future))
        return await future

    def close(self) -> None:
        """Stop the worker threads once the questions queued before are answered."""
        with self._lock:
            threads, self._threads = self._threads, ()
        if threads:
            self._queue.put(None)
            for thread in threads:
                thread.join(timeout=10)

    def _start(self) -> None:
        self._threads = (
            threading.Thread(target=self._prepare_loop, name="retrieval-prepare", daemon=True),
            threading.Thread(target=self._rank_loop, name="retrieval-rank", daemon=True),
        )
        for thread in self._threads:
            thread.start()

    def _prepare_loop(self) -> None:
        """Stage one: take what is queued, embed and search it (`Retriever.prepare`)."""
        while True:
            job = self._queue.get()
            if job is None:
                self._prepared.put(None)
                return
            batch = [job]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            # jobs of one build share a batch; a reload can leave two builds queued at once
            by_retriever: dict[int, list[_Job]] = {}
            for job in batch:
                by_retriever.setdefault(id(job.retriever), []).append(job)
            for jobs in by_retriever.values():
                try:
                    prepared = jobs[0].retriever.prepare([job.question for job in jobs])
                except Exception as exc:
                    for job in jobs:
                        _settle(job, exception=exc)
                    continue
                self._prepared.put((jobs, prepared))
            if stop:
                self._prepared.put(None)
                return

    def _rank_loop(self) -> None:
        """Stage two: the rest of each retrieval, question after question."""
        while True:
            item = self._prepared.get()
            if item is None:
                return
            jobs, prepared = item
            self.batches += 1
            self.questions += len(jobs)
            for job, ready in zip(jobs, prepared, strict=True):
                try:
                    result = job.retriever.retrieve(
                        job.question,
                        job.top_databases,
                        job.top_tables,
                        prepared=ready,
                        dialect=job.dialect,
                    )
                except Exception as exc:
                    _settle(job, exception=exc)
                else:
                    _settle(job, result=result)


def _settle(
    job: _Job, result: RetrievalResult | None = None, exception: BaseException | None = None
) -> None:
    def settle() -> None:
        if job.future.done():  # the request was cancelled (client gone)
            return
        if exception is not None:
            job.future.set_exception(exception)
        else:
            job.future.set_result(result)  # type: ignore[arg-type]

    try:
        job.loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the event loop is closed: nobody is waiting any more
        log.debug("dropped a retrieval answer: its event loop is closed")
