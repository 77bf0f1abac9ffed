"""Shared helpers: real SDK clients on mock transports, and recorders of what they sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest


class Recorder:
    """A transport handler that records requests and answers with ``respond(request, n)``.

    ``n`` is the 0-based index of the request; ``bodies`` holds the decoded JSON bodies.
    """

    def __init__(self, respond: Callable[[Any, int], Any]) -> None:
        self._respond = respond
        self._lock = threading.Lock()
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
        return self._respond(request, index)

    @property
    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)


def anthropic_message(
    text: str | list[str] = "SELECT 1",
    *,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 120,
    output_tokens: int = 7,
    cache_read: int | None = 0,
    cache_write: int | None = 0,
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    """A Messages API response body as the API sends it."""
    texts = [text] if isinstance(text, str) else text
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": t} for t in texts],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
            "service_tier": "standard",
        },
    }


@pytest.fixture
def make_anthropic() -> Callable[..., Any]:
    """Build an `AnthropicLLM` whose real SDK client talks to ``handler``."""
    httpx2 = pytest.importorskip("httpx2")
    from providers import AnthropicLLM

    def make(handler: Callable[[Any], Any], **options: Any) -> AnthropicLLM:
        options.setdefault("api_key", "test-anthropic-key")
        options.setdefault("max_retries", 2)
        client = httpx2.Client(transport=httpx2.MockTransport(handler))
        return AnthropicLLM(
            options.pop("model", "claude-sonnet-5-5"), http_client=client, **options
        )

    return make


@pytest.fixture
def make_cohere() -> Callable[..., Any]:
    """Build a `CohereEmbedder` whose real SDK client talks to ``handler``."""
    from providers import CohereEmbedder

    def make(handler: Callable[[Any], Any], **options: Any) -> CohereEmbedder:
        options.setdefault("api_key", "test-cohere-key")
        options.setdefault("max_retries", 2)
        client = httpx.Client(transport=httpx.MockTransport(handler))
        return CohereEmbedder(http_client=client, **options)

    return make


@pytest.fixture
def recorder() -> type[Recorder]:
    """The `Recorder` class: ``recorder(lambda request, n: response)``."""
    return Recorder


@pytest.fixture(name="anthropic_message")
def anthropic_message_fixture() -> Callable[..., dict[str, Any]]:
    """`anthropic_message`: a Messages API response body."""
    return anthropic_message
