"""Send concurrent LLM calls through a batch API (the Anthropic Message Batches API).

The build runs traversals in a thread pool; each ICRL step is a blocking `complete` call. A
`BatchingLLM` parks those calls and, once `max_pending` are waiting or `window_s` has passed since
the first, submits them as one batch, waits for it and hands each caller its completion. So the
chains of many traversals advance together one step per batch, at the batch price, and the ICRL
loop keeps its simple sequential code.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

from providers import BatchFailure, Completion, LLMRequest, Message, ProviderCallError
from providers.waiting import result_of

log = logging.getLogger("indexer.batching")  # the name log configurations know


class BatchRunner(Protocol):
    @property
    def name(self) -> str: ...

    def run_batch(
        self, requests: Iterable[tuple[str, LLMRequest]], **kwargs: Any
    ) -> dict[str, Completion | BatchFailure]: ...


class BatchingLLM:
    def __init__(
        self,
        runner: BatchRunner,
        *,
        max_pending: int,
        window_s: float = 5.0,
        poll_interval: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_pending < 1:
            raise ValueError(f"max_pending must be >= 1, got {max_pending}")
        self._runner = runner
        self._max_pending = max_pending
        self._window_s = window_s
        self._poll_interval = poll_interval
        self._sleep = sleep
        self._lock = threading.Condition()
        self._pending: list[tuple[LLMRequest, Future[Completion]]] = []
        self._first_at = 0.0
        self._sequence = 0
        self.batches = 0

    @property
    def name(self) -> str:
        return self._runner.name

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> Completion:
        request = LLMRequest(
            system,
            tuple(messages),
            temperature=temperature,
            max_tokens=max_tokens,
            stop=tuple(stop) if stop else None,
            sample=sample,
        )
        future: Future[Completion] = Future()
        with self._lock:
            if not self._pending:
                self._first_at = time.monotonic()
            self._pending.append((request, future))
            self._lock.notify_all()
        self._maybe_flush(future)
        return result_of(future)

    def _maybe_flush(self, mine: Future[Completion]) -> None:
        """The caller that fills the batch, or whose window expires first, submits it; a caller
        whose request another caller submitted just waits for its result."""
        while True:
            with self._lock:
                if all(f is not mine for _, f in self._pending):
                    return
                full = len(self._pending) >= self._max_pending
                waited = time.monotonic() - self._first_at
                if not full and waited < self._window_s:
                    self._lock.wait(timeout=self._window_s - waited)
                    continue
                batch, self._pending = self._pending, []
            self._submit(batch)
            return

    def _submit(self, batch: list[tuple[LLMRequest, Future[Completion]]]) -> None:
        ids = []
        for _ in batch:
            self._sequence += 1
            ids.append(f"req-{self._sequence}")
        try:
            results = self._runner.run_batch(
                list(zip(ids, (r for r, _ in batch), strict=True)),
                poll_interval=self._poll_interval,
                sleep=self._sleep,
            )
        except Exception as exc:  # every waiting caller gets the same error
            for _, future in batch:
                future.set_exception(exc)
            return
        self.batches += 1
        for custom_id, (_, future) in zip(ids, batch, strict=True):
            result = results.get(custom_id)
            if isinstance(result, Completion):
                future.set_result(result)
            else:
                reason = result.message if isinstance(result, BatchFailure) else "no result"
                future.set_exception(
                    ProviderCallError(
                        f"batch request {custom_id} failed: {reason}", provider="batch"
                    )
                )


def make_batching(llm: Any, max_pending: int) -> BatchingLLM:
    """`llm` behind a `BatchingLLM`; it must offer a batch API (`run_batch`)."""
    if not callable(getattr(llm, "run_batch", None)):
        from providers import ConfigurationError

        raise ConfigurationError(
            f"--batch needs a model with a batch API (anthropic:MODEL); {llm.name} has none"
        )
    return BatchingLLM(llm, max_pending=max_pending)
