"""The `LLM` protocol, its value types, and running many calls under a concurrency limit."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from providers.errors import ConfigurationError
from providers.waiting import result_of

__all__ = [
    "LLM",
    "Completion",
    "LLMRequest",
    "Message",
    "Timings",
    "Usage",
    "acomplete_many",
    "check_request",
    "complete_many",
]

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Message:
    """One chat turn. The system prompt is passed separately to `LLM.complete`."""

    role: Role
    content: str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ConfigurationError(
                f"Message role must be 'user' or 'assistant', got {self.role!r}"
            )

    @classmethod
    def user(cls, content: str) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str) -> Message:
        return cls("assistant", content)


@dataclass(frozen=True)
class Usage:
    """Token counts of one call, or of many added together.

    ``input_tokens`` excludes the tokens read from or written to the prompt cache, as the
    Anthropic API reports them; the three input figures are billed at different prices.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


@dataclass(frozen=True)
class Timings:
    """Where the time of one call went, as a local model reports it."""

    prompt_seconds: float
    generation_seconds: float
    prompt_tokens_per_second: float
    generation_tokens_per_second: float


@dataclass(frozen=True)
class Completion:
    """What an LLM returned.

    ``model`` is the model the provider says answered (it may be a dated id such as
    ``claude-haiku-4-5-20251001``). ``logprob`` is the summed log-probability of the reply's
    tokens when the provider reports it. ``cached`` is true when the reply came from a
    `providers.ProviderCache` rather than from the provider (its usage is what the original call
    cost). ``timings`` is set by providers that run the model themselves (`LlamaCppLLM`).
    """

    text: str
    model: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    logprob: float | None = None
    cached: bool = False
    timings: Timings | None = None


@runtime_checkable
class LLM(Protocol):
    """A chat-style language model.

    ``name`` identifies provider and model (``anthropic:claude-sonnet-5-5``); caches key on it.
    ``sample`` distinguishes repeated draws of the same request at temperature > 0: providers
    ignore it, caches key on it.
    """

    @property
    def name(self) -> str: ...

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> Completion: ...


def check_request(
    messages: Sequence[Message], temperature: float, max_tokens: int, sample: int = 0
) -> None:
    """Reject arguments no provider accepts, naming the argument."""
    if not messages:
        raise ConfigurationError("messages must contain at least one Message")
    for message in messages:
        if not isinstance(message, Message):
            raise ConfigurationError(
                f"messages must be providers.Message values, got {type(message).__name__}"
            )
    if temperature < 0:
        raise ConfigurationError(f"temperature must be >= 0, got {temperature}")
    if max_tokens < 1:
        raise ConfigurationError(f"max_tokens must be >= 1, got {max_tokens}")
    if sample < 0:
        raise ConfigurationError(f"sample must be >= 0, got {sample}")


@dataclass(frozen=True)
class LLMRequest:
    """The arguments of one `LLM.complete` call, as a value (for bulk and batch work)."""

    system: str
    messages: tuple[Message, ...]
    temperature: float = 0.0
    max_tokens: int = 1024
    stop: tuple[str, ...] | None = None
    sample: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        if self.stop is not None:
            object.__setattr__(self, "stop", tuple(self.stop))
        check_request(self.messages, self.temperature, self.max_tokens, self.sample)

    @classmethod
    def of(
        cls,
        system: str,
        user: str,
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> LLMRequest:
        """A request with one user message."""
        return cls(
            system,
            (Message.user(user),),
            temperature=temperature,
            max_tokens=max_tokens,
            stop=tuple(stop) if stop is not None else None,
            sample=sample,
        )

    def run(self, llm: LLM) -> Completion:
        return llm.complete(
            self.system,
            self.messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            stop=self.stop,
            sample=self.sample,
        )


def _check_concurrency(max_concurrency: int) -> None:
    if max_concurrency < 1:
        raise ConfigurationError(f"max_concurrency must be >= 1, got {max_concurrency}")


def complete_many(
    llm: LLM, requests: Sequence[LLMRequest], *, max_concurrency: int = 4
) -> list[Completion]:
    """Run ``requests`` on ``llm`` with at most ``max_concurrency`` calls in flight.

    Results come back in request order. The first failure is raised once the calls already
    running have finished; requests not yet started are not sent. Wrap ``llm`` in
    `providers.CachedLLM` so that a rerun after a failure only pays for what is missing.
    """
    _check_concurrency(max_concurrency)
    if not requests:
        return []
    if max_concurrency == 1 or len(requests) == 1:
        return [request.run(llm) for request in requests]
    with ThreadPoolExecutor(
        max_workers=min(max_concurrency, len(requests)), thread_name_prefix="llm"
    ) as pool:
        futures = [pool.submit(request.run, llm) for request in requests]
        try:
            return [result_of(future) for future in futures]
        except BaseException:
            for future in futures:
                future.cancel()
            raise


async def acomplete_many(
    llm: LLM, requests: Sequence[LLMRequest], *, max_concurrency: int = 4
) -> list[Completion]:
    """`complete_many` for asyncio code: the calls run in a pool of ``max_concurrency`` threads.

    Results come back in request order; the first failure propagates, and requests not yet
    started are not sent. (A pool of its own, because the loop's default executor would cap
    concurrency at a few threads per CPU.)
    """
    _check_concurrency(max_concurrency)
    if not requests:
        return []
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(
        max_workers=min(max_concurrency, len(requests)), thread_name_prefix="llm"
    )
    futures = [loop.run_in_executor(pool, request.run, llm) for request in requests]
    try:
        return list(await asyncio.gather(*futures))
    except BaseException:
        for future in futures:
            future.cancel()
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
