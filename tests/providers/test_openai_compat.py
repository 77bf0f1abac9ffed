"""OpenAICompatLLM against httpx.MockTransport: the body we send, parsing, retries, errors."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers import ConfigurationError, Message, OpenAICompatLLM, ProviderCallError, Usage


def _chat(text: str = "SELECT 1", **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-123",
        "object": "chat.completion",
        "model": "qwen2.5-coder:7b",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45},
    }
    body.update(extra)
    return body


def _llm(handler: Any, sleeps: list[float] | None = None, **options: Any) -> OpenAICompatLLM:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    sink = sleeps if sleeps is not None else []
    return OpenAICompatLLM(
        options.pop("model", "qwen2.5-coder:7b"),
        base_url=options.pop("base_url", "http://localhost:11434/v1/"),
        http_client=client,
        sleep=sink.append,
        **options,
    )


def test_request_goes_to_chat_completions_with_system_first(recorder):
    record = recorder(lambda request, n: httpx.Response(200, json=_chat()))
    llm = _llm(record, api_key="local-key")

    llm.complete(
        "CREATE TABLE t (a INT);",
        [Message.user("q1"), Message.assistant("a1"), Message.user("q2")],
        temperature=0.2,
        max_tokens=64,
        stop=[";", "\n\n"],
    )

    (request,) = record.requests
    assert str(request.url) == "http://localhost:11434/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer local-key"
    assert json.loads(request.content) == {
        "model": "qwen2.5-coder:7b",
        "messages": [
            {"role": "system", "content": "CREATE TABLE t (a INT);"},
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "a1"},
            {"role": "user", "content": "q2"},
        ],
        "temperature": 0.2,
        "max_tokens": 64,
        "stop": [";", "\n\n"],
    }


def test_no_api_key_sends_no_authorization_header(recorder):
    record = recorder(lambda request, n: httpx.Response(200, json=_chat()))

    _llm(record).complete("", [Message.user("q")])

    assert "authorization" not in record.requests[0].headers
    assert record.bodies[0]["messages"] == [{"role": "user", "content": "q"}]


def test_response_text_usage_cached_tokens_and_logprob_are_parsed():
    body = _chat(
        "SELECT a FROM t",
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 4,
            "prompt_tokens_details": {"cached_tokens": 60},
        },
    )
    body["choices"][0]["logprobs"] = {
        "content": [{"token": "SELECT", "logprob": -0.25}, {"token": " a", "logprob": -0.5}]
    }
    llm = _llm(lambda request: httpx.Response(200, json=body), logprobs=True)

    completion = llm.complete("s", [Message.user("q")])

    assert completion.text == "SELECT a FROM t"
    assert completion.model == "qwen2.5-coder:7b"
    assert completion.usage == Usage(input_tokens=40, output_tokens=4, cache_read_tokens=60)
    assert completion.logprob == pytest.approx(-0.75)
    assert completion.stop_reason == "stop"
    assert llm.name == "openai:qwen2.5-coder:7b"


def test_logprobs_are_requested_only_when_asked(recorder):
    record = recorder(lambda request, n: httpx.Response(200, json=_chat()))

    _llm(record, logprobs=True).complete("s", [Message.user("q")])
    _llm(record).complete("s", [Message.user("q")])

    assert record.bodies[0]["logprobs"] is True
    assert "logprobs" not in record.bodies[1]


def test_503_is_retried_after_the_servers_retry_after(recorder):
    def respond(request: Any, n: int) -> Any:
        if n == 0:
            return httpx.Response(503, text="model is loading", headers={"retry-after": "2"})
        return httpx.Response(200, json=_chat("ok"))

    record = recorder(respond)
    sleeps: list[float] = []

    completion = _llm(record, sleeps).complete("s", [Message.user("q")])

    assert completion.text == "ok"
    assert record.count == 2
    assert sleeps == [2.0]


def test_persistent_429_gives_up_after_max_retries_with_backoff(recorder):
    record = recorder(lambda request, n: httpx.Response(429, text="busy"))
    sleeps: list[float] = []

    with pytest.raises(ProviderCallError) as caught:
        _llm(record, sleeps, max_retries=2).complete("s", [Message.user("q")])

    assert record.count == 3
    assert sleeps == [0.5, 1.0]
    assert caught.value.status_code == 429


def test_400_is_not_retried_and_shows_the_server_message(recorder):
    record = recorder(
        lambda request, n: httpx.Response(400, json={"error": {"message": "model 'x' not found"}})
    )
    sleeps: list[float] = []

    with pytest.raises(ProviderCallError, match=r"HTTP 400.*model 'x' not found"):
        _llm(record, sleeps).complete("s", [Message.user("q")])

    assert record.count == 1
    assert sleeps == []


def test_malformed_response_is_a_clear_error():
    llm = _llm(lambda request: httpx.Response(200, text="<html>proxy error</html>"))

    with pytest.raises(ProviderCallError, match=r"not a chat completion.*proxy error"):
        llm.complete("s", [Message.user("q")])


def test_connection_errors_are_retried_then_reported():
    attempts: list[Any] = []

    def refuse(request: Any) -> Any:
        attempts.append(request)
        raise httpx.ConnectError("connection refused", request=request)

    sleeps: list[float] = []
    with pytest.raises(ProviderCallError, match="could not reach http://localhost:11434/v1"):
        _llm(refuse, sleeps, max_retries=1).complete("s", [Message.user("q")])

    assert len(attempts) == 2
    assert sleeps == [0.5]


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"base_url": "localhost:11434"}, "base_url"),
        ({"model": ""}, "model"),
        ({"timeout": -1}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_invalid_constructor_arguments_are_named(options, argument):
    kwargs: dict[str, Any] = {"base_url": "http://localhost:8000/v1", **options}
    with pytest.raises(ConfigurationError, match=argument):
        OpenAICompatLLM(kwargs.pop("model", "m"), **kwargs)
