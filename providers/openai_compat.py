"""Any OpenAI-compatible ``/chat/completions`` server (vLLM, Ollama, llama.cpp) over httpx."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from providers.errors import ConfigurationError, ProviderCallError, excerpt
from providers.llm import Completion, Message, Usage, check_request

__all__ = ["OpenAICompatLLM"]

log = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class OpenAICompatLLM:
    """An `LLM` on an OpenAI-compatible chat endpoint.

    ``base_url`` is the API root including ``/v1`` (``http://localhost:11434/v1`` for Ollama,
    ``http://localhost:8000/v1`` for vLLM); requests go to ``{base_url}/chat/completions``.
    ``api_key``, when given, is sent as a bearer token. Connection errors, 408/409/429 and 5xx
    are retried ``max_retries`` times with exponential backoff (``retry-after`` honoured);
    ``sleep`` is injectable for tests. With ``logprobs`` the server is asked for token
    log-probabilities and `Completion.logprob` is their sum.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        logprobs: bool = False,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not model:
            raise ConfigurationError("model must be a non-empty string")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"base_url must start with http:// or https://, got {base_url!r}"
            )
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
        self._model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._max_retries = max_retries
        self._logprobs = logprobs
        self._sleep = sleep
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._owns_client = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)
        self._timeout = timeout

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    @property
    def url(self) -> str:
        return self._url

    def close(self) -> None:
        if self._owns_client:
            self._http.close()

    def __enter__(self) -> OpenAICompatLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request_body(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        chat: list[dict[str, str]] = []
        if system:
            chat.append({"role": "system", "content": system})
        chat.extend({"role": m.role, "content": m.content} for m in messages)
        body: dict[str, Any] = {
            "model": self._model,
            "messages": chat,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if stop:
            body["stop"] = list(stop)
        if self._logprobs:
            body["logprobs"] = True
        return body

    def _retry_delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            retry_after = response.headers.get("retry-after")
            if retry_after is not None:
                try:
                    return min(max(float(retry_after), 0.0), 60.0)
                except ValueError:
                    pass
        return min(0.5 * 2.0**attempt, 8.0)

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                response = self._http.post(
                    self._url, json=body, headers=self._headers, timeout=self._timeout
                )
            except httpx.TransportError as exc:
                if attempt >= self._max_retries:
                    raise ProviderCallError(
                        f"could not reach {self._url} ({self.name}): {exc!r}",
                        provider="openai",
                    ) from exc
            else:
                if response.status_code < 400:
                    return response
                if response.status_code not in _RETRY_STATUSES or attempt >= self._max_retries:
                    raise ProviderCallError(
                        f"{self._url} answered HTTP {response.status_code} ({self.name}): "
                        f"{excerpt(response.text, 300)}",
                        provider="openai",
                        status_code=response.status_code,
                    )
            delay = self._retry_delay(attempt, response)
            log.warning(
                "%s: %s, retrying in %.1fs (attempt %d of %d)",
                self.name,
                f"HTTP {response.status_code}" if response is not None else "connection error",
                delay,
                attempt + 1,
                self._max_retries,
            )
            self._sleep(delay)
            attempt += 1

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
        body = self.request_body(
            system, messages, temperature=temperature, max_tokens=max_tokens, stop=stop
        )
        response = self._post(body)
        try:
            payload = response.json()
            choice = payload["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ProviderCallError(
                f"{self._url} returned a response that is not a chat completion "
                f"({self.name}): {excerpt(response.text, 300)}",
                provider="openai",
                status_code=response.status_code,
            ) from exc
        usage = payload.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        logprob: float | None = None
        content_logprobs = (choice.get("logprobs") or {}).get("content")
        if content_logprobs:
            logprob = float(sum(token["logprob"] for token in content_logprobs))
        return Completion(
            text=text,
            model=str(payload.get("model") or self._model),
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0) - cached,
                output_tokens=int(usage.get("completion_tokens") or 0),
                cache_read_tokens=cached,
            ),
            stop_reason=choice.get("finish_reason"),
            logprob=logprob,
        )
