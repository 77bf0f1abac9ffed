"""Claude through the official ``anthropic`` SDK: messages, prompt caching, Message Batches."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from providers.batches import BatchFailure, BatchStatus, wait_for_batch
from providers.errors import ConfigurationError, MissingDependencyError, ProviderCallError
from providers.llm import Completion, LLMRequest, Message, Usage, check_request

__all__ = ["AnthropicLLM", "BatchFailure", "BatchStatus"]

log = logging.getLogger(__name__)

_CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _usage(usage: Any) -> Usage:
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
    )


def _completion(message: Any) -> Completion:
    text = "".join(block.text for block in message.content if block.type == "text")
    return Completion(
        text=text,
        model=message.model,
        usage=_usage(message.usage),
        stop_reason=message.stop_reason,
    )


class AnthropicLLM:
    """An `LLM` on Claude, through the official SDK (``pip install 'schemarag[anthropic]'``).

    ``api_key`` is required: read it from ``ANTHROPIC_API_KEY`` at the edge
    (`schemarag.settings.Settings`), not here. The SDK retries 429, 5xx and connection errors
    ``max_retries`` times with backoff (honouring ``retry-after``); nothing here retries on top.

    ``temperature`` is accepted for the `LLM` protocol but not sent: the Messages API version
    the SDK speaks (2026-10-21) rejects temperature, top_p and top_k, so Claude samples with its
    own settings and repeated calls may differ even at temperature 0 (use ``sample`` with a
    cache to keep several draws apart).

    With ``prompt_caching`` the system prompt (the long schema prefix repeated across calls) is
    sent as a text block marked ``cache_control: ephemeral``; prompts shorter than the model's
    minimum cacheable length are simply not cached.

    ``http_client`` is handed to the SDK as is; tests pass one with a mock transport. It must be
    the SDK's HTTP client class (``httpx2.Client`` for anthropic>=2, ``httpx.Client`` before).

    Bulk offline work goes through the Message Batches API at half price: `submit_batch`,
    `wait_for_batch`, `batch_results`, or `run_batch` for all three.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        timeout: float = 120.0,
        max_retries: int = 4,
        prompt_caching: bool = True,
        base_url: str | None = None,
        http_client: Any = None,
    ) -> None:
        if not model:
            raise ConfigurationError("model must be a non-empty string, e.g. 'claude-sonnet-5-5'")
        if not api_key:
            raise ConfigurationError(
                f"anthropic:{model} needs an Anthropic API key: set ANTHROPIC_API_KEY "
                "(or pass api_key)"
            )
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
        try:
            import anthropic
        except ImportError as exc:
            raise MissingDependencyError("anthropic", "anthropic", "AnthropicLLM") from exc
        self._anthropic = anthropic
        self._model = model
        self._prompt_caching = prompt_caching
        self._warned_temperature = False
        options: dict[str, Any] = {
            "api_key": api_key,
            "timeout": timeout,
            "max_retries": max_retries,
        }
        if base_url is not None:
            options["base_url"] = base_url
        if http_client is not None:
            options["http_client"] = http_client
        self._client = anthropic.Anthropic(**options)

    @property
    def name(self) -> str:
        return f"anthropic:{self._model}"

    @property
    def model(self) -> str:
        return self._model

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> AnthropicLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests ---------------------------------------------------------------------------

    def request_params(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """The Messages API body for one call (also the ``params`` of a batch request)."""
        # No temperature: API version 2026-10-21, which the SDK sends, rejects temperature,
        # top_p and top_k on every model (HTTP 400 even at default values).
        if temperature != 0.0 and not self._warned_temperature:
            self._warned_temperature = True
            log.info(
                "%s: temperature=%s is not sent; the Messages API no longer accepts it",
                self.name,
                temperature,
            )
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        if system:
            block: dict[str, Any] = {"type": "text", "text": system}
            if self._prompt_caching:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if stop:
            params["stop_sequences"] = list(stop)
        return params

    def _call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run an SDK call, turning its failures into `ProviderCallError`."""
        anthropic = self._anthropic
        try:
            return function(*args, **kwargs)
        except anthropic.APIStatusError as exc:
            detail = exc.message
            body = exc.body
            if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
                error = body["error"]
                detail = f"{error.get('type', 'error')}: {error.get('message', '')}"
            raise ProviderCallError(
                f"Anthropic {what} failed with HTTP {exc.status_code} ({self.name}): {detail}",
                provider="anthropic",
                status_code=exc.status_code,
            ) from exc
        except anthropic.APITimeoutError as exc:
            raise ProviderCallError(
                f"Anthropic {what} timed out ({self.name}) after the SDK's retries",
                provider="anthropic",
            ) from exc
        except anthropic.APIConnectionError as exc:
            raise ProviderCallError(
                f"could not reach the Anthropic API for {what} ({self.name}): {exc}",
                provider="anthropic",
            ) from exc
        except anthropic.AnthropicError as exc:
            raise ProviderCallError(
                f"Anthropic {what} failed ({self.name}): {exc}", provider="anthropic"
            ) from exc
        except ValueError as exc:  # the body was not JSON, or not the expected shape
            raise ProviderCallError(
                f"Anthropic {what} returned a response that could not be parsed "
                f"({self.name}): {exc}",
                provider="anthropic",
            ) from exc

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
        check_request(messages, temperature, max_tokens, sample)
        params = self.request_params(
            system, messages, temperature=temperature, max_tokens=max_tokens, stop=stop
        )
        message = self._call("messages.create", self._client.messages.create, **params)
        completion = _completion(message)
        log.debug(
            "anthropic %s: %d in, %d out, %d cache read, %d cache write",
            completion.model,
            completion.usage.input_tokens,
            completion.usage.output_tokens,
            completion.usage.cache_read_tokens,
            completion.usage.cache_write_tokens,
        )
        return completion

    # -- Message Batches --------------------------------------------------------------------

    def submit_batch(self, requests: Iterable[tuple[str, LLMRequest]]) -> str:
        """Submit ``(custom_id, request)`` pairs as one Message Batch; returns the batch id.

        Custom ids must be unique and match ``[A-Za-z0-9_-]{1,64}`` (the API's rule).
        """
        body: list[dict[str, Any]] = []
        seen: set[str] = set()
        for custom_id, request in requests:
            if not _CUSTOM_ID.match(custom_id):
                raise ConfigurationError(
                    f"custom_id {custom_id!r} must be 1-64 characters of letters, digits, _ or -"
                )
            if custom_id in seen:
                raise ConfigurationError(f"custom_id {custom_id!r} appears twice in the batch")
            seen.add(custom_id)
            params = self.request_params(
                request.system,
                request.messages,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                stop=request.stop,
            )
            body.append({"custom_id": custom_id, "params": params})
        if not body:
            raise ConfigurationError("requests must contain at least one (custom_id, request)")
        batch = self._call(
            "messages.batches.create", self._client.messages.batches.create, requests=body
        )
        log.info("submitted Message Batch %s with %d requests", batch.id, len(body))
        return str(batch.id)

    def batch_status(self, batch_id: str) -> BatchStatus:
        batch = self._call(
            "messages.batches.retrieve", self._client.messages.batches.retrieve, batch_id
        )
        counts = batch.request_counts
        return BatchStatus(
            batch_id=batch.id,
            processing_status=batch.processing_status,
            processing=counts.processing,
            succeeded=counts.succeeded,
            errored=counts.errored,
            canceled=counts.canceled,
            expired=counts.expired,
        )

    def wait_for_batch(
        self,
        batch_id: str,
        *,
        poll_interval: float = 60.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> BatchStatus:
        """Poll until the batch has ended (`providers.batches.wait_for_batch`)."""
        return wait_for_batch(
            batch_id,
            self.batch_status,
            "anthropic",
            poll_interval=poll_interval,
            timeout=timeout,
            sleep=sleep,
            clock=clock,
        )

    def batch_results(self, batch_id: str) -> dict[str, Completion | BatchFailure]:
        """Results of an ended batch by custom id: a `Completion` or a `BatchFailure`."""
        decoder = self._call(
            "messages.batches.results", self._client.messages.batches.results, batch_id
        )
        results: dict[str, Completion | BatchFailure] = {}
        for entry in self._call("messages.batches.results", list, decoder):
            result = entry.result
            if result.type == "succeeded":
                results[entry.custom_id] = _completion(result.message)
            elif result.type == "errored":
                error = result.error.error
                results[entry.custom_id] = BatchFailure(
                    entry.custom_id, "errored", f"{error.type}: {error.message}"
                )
            elif result.type in ("canceled", "expired"):
                results[entry.custom_id] = BatchFailure(
                    entry.custom_id, result.type, f"request {result.type} before processing"
                )
            else:
                results[entry.custom_id] = BatchFailure(
                    entry.custom_id, "errored", f"unknown result type {result.type!r}"
                )
        return results

    def run_batch(
        self,
        requests: Iterable[tuple[str, LLMRequest]],
        *,
        poll_interval: float = 60.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> dict[str, Completion | BatchFailure]:
        """Submit, wait for and collect one batch. Usage is billed at the batch (50%) price."""
        pairs = list(requests)
        batch_id = self.submit_batch(pairs)
        self.wait_for_batch(
            batch_id, poll_interval=poll_interval, timeout=timeout, sleep=sleep, clock=clock
        )
        results = self.batch_results(batch_id)
        for custom_id, _ in pairs:
            if custom_id not in results:
                results[custom_id] = BatchFailure(
                    custom_id, "errored", "no result returned for this custom_id"
                )
        return results
