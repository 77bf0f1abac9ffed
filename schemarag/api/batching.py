"""Retrievals of concurrent requests, run in batches by one thread.

Under load the costly step of a retrieval is the MiniLM forward pass, and one pass over 16
short questions costs a fraction of 16 passes. The retrieve route therefore does not run the
retriever on a thread of its own: it queues the question with `RetrievalBatcher.retrieve` and
awaits the answer. One worker thread takes whatever is queued (up to `max_batch`), embeds and
searches the questions together (`Retriever.prepare`) and runs the rest of each retrieval in
turn. An idle server answers a lone question at once (no timer, no added wait); a busy one
embeds in batches. A single thread runs the retrievers' Python code, so request threads do not
fight over the interpreter lock: measured with 16 clients on Spider, this took server CPU per
request from 5.4 to ... ms against threads sharing a batching embedder (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from dataclasses import dataclass

from retriever import RetrievalResult, Retriever

log = logging.getLogger(__name__)

__all__ = ["RetrievalBatcher"]


@dataclass(frozen=True)
class _Job:
    retriever: Retriever
    question: str
    top_databases: int
    top_tables: int
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[RetrievalResult]


class RetrievalBatcher:
    """Runs `Retriever.retrieve` for many awaiting requests, batching their embeddings."""

    def __init__(self, *, max_batch: int = 32) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.max_batch = max_batch
        self.batches = 0
        self.questions = 0
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()  # None: stop
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    async def retrieve(
        self, retriever: Retriever, question: str, top_databases: int, top_tables: int
    ) -> RetrievalResult:
        """`retriever.retrieve(question, top_databases, top_tables)`, on the worker thread
        (started by the first call, and again after `close`)."""
        with self._lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(
                    target=self._run, name="retrieval-batcher", daemon=True
                )
                self._worker.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RetrievalResult] = loop.create_future()
        self._queue.put(_Job(retriever, question, top_databases, top_tables, loop, future))
        return await future

    def close(self) -> None:
        """Stop the worker once the questions queued before are answered."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put(None)
            worker.join(timeout=10)

    def _run(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
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
                self._answer(jobs)
            if stop:
                return

    def _answer(self, jobs: list[_Job]) -> None:
        retriever = jobs[0].retriever
        try:
            prepared = retriever.prepare([job.question for job in jobs])
        except Exception as exc:
            for job in jobs:
                _settle(job, exception=exc)
            return
        self.batches += 1
        self.questions += len(jobs)
        for job, ready in zip(jobs, prepared, strict=True):
            try:
                result = retriever.retrieve(
                    job.question, job.top_databases, job.top_tables, prepared=ready
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
