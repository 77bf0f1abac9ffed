"""Thin wrappers that count provider calls and record usage per stage.

Stacked as `MeteredLLM(CachedLLM(CountingLLM(provider)))`: the counter sees only calls that reach
the provider, the meter sees every call and knows from `Completion.cached` which ones were free.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from providers import LLM, Completion, Embedder, Message, UsageMeter, Vectors


class CallCounter:
    """A thread-safe count of provider calls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls = 0

    def __call__(self) -> None:
        with self._lock:
            self.calls += 1


class CountingLLM:
    def __init__(self, llm: LLM, counter: CallCounter) -> None:
        self._llm, self._counter = llm, counter

    @property
    def name(self) -> str:
        return self._llm.name

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
        self._counter()
        return self._llm.complete(
            system,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            sample=sample,
        )


class MeteredLLM:
    def __init__(self, llm: LLM, meter: UsageMeter, stage: str, *, batch: bool = False) -> None:
        self._llm, self._meter, self._stage, self._batch = llm, meter, stage, batch

    @property
    def name(self) -> str:
        return self._llm.name

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
        completion = self._llm.complete(
            system,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            sample=sample,
        )
        self._meter.record_completion(self._stage, completion, batch=self._batch)
        return completion


class CountingEmbedder:
    def __init__(self, embedder: Embedder, counter: CallCounter) -> None:
        self._embedder, self._counter = embedder, counter

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dim(self) -> int:
        return self._embedder.dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if texts:
            self._counter()
        return self._embedder.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        self._counter()
        return self._embedder.embed_query(text)
