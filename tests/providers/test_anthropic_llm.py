"""AnthropicLLM: the real anthropic SDK client against a mock transport."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    AnthropicLLM,
    BatchFailure,
    Completion,
    ConfigurationError,
    LLMRequest,
    Message,
    ProviderCallError,
    Usage,
)

httpx2 = pytest.importorskip("httpx2")


def _json(status: int, body: Any, **headers: str) -> Any:
    return httpx2.Response(status, json=body, headers=headers)


def _error(status: int, kind: str, message: str, **headers: str) -> Any:
    return _json(status, {"type": "error", "error": {"type": kind, "message": message}}, **headers)


def test_request_body_has_model_cached_system_messages_and_sampling(
    make_anthropic, recorder, anthropic_message
):
    record = recorder(lambda request, n: _json(200, anthropic_message()))
    llm = make_anthropic(record, model="claude-sonnet-5-5")

    llm.complete(
        "CREATE TABLE singer (id INT);",
        [Message.user("How many singers?"), Message.assistant("SELECT"), Message.user("go on")],
        temperature=0.3,
        max_tokens=256,
        stop=[";"],
    )

    (request,) = record.requests
    assert request.method == "POST"
    assert request.url.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer test-anthropic-key"
    # No temperature: API version 2026-10-21 answers 400 to any sampling parameter.
    assert json.loads(request.content) == {
        "model": "claude-sonnet-5-5",
        "max_tokens": 256,
        "stop_sequences": [";"],
        "system": [
            {
                "type": "text",
                "text": "CREATE TABLE singer (id INT);",
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [
            {"role": "user", "content": "How many singers?"},
            {"role": "assistant", "content": "SELECT"},
            {"role": "user", "content": "go on"},
        ],
    }


def test_prompt_caching_off_sends_plain_system_block_and_empty_system_is_omitted(
    make_anthropic, recorder, anthropic_message
):
    record = recorder(lambda request, n: _json(200, anthropic_message()))
    llm = make_anthropic(record, prompt_caching=False)

    llm.complete("schema", [Message.user("q")])
    llm.complete("", [Message.user("q")])

    with_system, without_system = record.bodies
    assert with_system["system"] == [{"type": "text", "text": "schema"}]
    assert "system" not in without_system
    assert "stop_sequences" not in without_system


def test_response_text_usage_and_cache_tokens_are_parsed(make_anthropic, anthropic_message):
    body = anthropic_message(
        ["SELECT count(*) ", "FROM singer"],
        input_tokens=25,
        output_tokens=9,
        cache_read=1800,
        cache_write=300,
        stop_reason="stop_sequence",
    )
    llm = make_anthropic(lambda request: _json(200, body))

    completion = llm.complete("schema", [Message.user("How many singers?")])

    assert completion == Completion(
        text="SELECT count(*) FROM singer",
        model="claude-sonnet-5-5",
        usage=Usage(
            input_tokens=25, output_tokens=9, cache_read_tokens=1800, cache_write_tokens=300
        ),
        stop_reason="stop_sequence",
    )
    assert llm.name == "anthropic:claude-sonnet-5-5"


def test_missing_cache_fields_in_usage_count_as_zero(make_anthropic, anthropic_message):
    body = anthropic_message(cache_read=None, cache_write=None)
    del body["usage"]["cache_read_input_tokens"]
    llm = make_anthropic(lambda request: _json(200, body))

    usage = llm.complete("s", [Message.user("q")]).usage

    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (0, 0)


def test_rate_limit_is_retried_by_the_sdk_then_succeeds(
    make_anthropic, recorder, anthropic_message
):
    def respond(request: Any, n: int) -> Any:
        if n == 0:
            return _error(
                429, "rate_limit_error", "Number of requests exceeded", **{"retry-after-ms": "1"}
            )
        return _json(200, anthropic_message("ok"))

    record = recorder(respond)
    llm = make_anthropic(record, max_retries=2)

    assert llm.complete("s", [Message.user("q")]).text == "ok"
    assert record.count == 2
    assert record.requests[1].headers["x-stainless-retry-count"] == "1"


def test_rate_limit_beyond_max_retries_raises_provider_call_error(make_anthropic, recorder):
    record = recorder(
        lambda request, n: _error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1"})
    )
    llm = make_anthropic(record, max_retries=1)

    with pytest.raises(ProviderCallError) as caught:
        llm.complete("s", [Message.user("q")])

    assert caught.value.status_code == 429
    assert record.count == 2


def test_bad_request_is_not_retried_and_the_error_names_status_type_and_message(
    make_anthropic, recorder
):
    record = recorder(
        lambda request, n: _error(400, "invalid_request_error", "max_tokens: 999999 > 64000")
    )
    llm = make_anthropic(record)

    with pytest.raises(ProviderCallError) as caught:
        llm.complete("s", [Message.user("q")], max_tokens=999999)

    message = str(caught.value)
    assert record.count == 1
    assert caught.value.status_code == 400
    assert caught.value.provider == "anthropic"
    assert "HTTP 400" in message
    assert "invalid_request_error: max_tokens: 999999 > 64000" in message
    assert "anthropic:claude-sonnet-5-5" in message


def test_malformed_json_response_is_a_clear_provider_call_error(make_anthropic):
    llm = make_anthropic(
        lambda request: httpx2.Response(
            200,
            content=b'{"id": "msg_1", "content": [',
            headers={"content-type": "application/json"},
        )
    )

    with pytest.raises(ProviderCallError, match="could not be parsed"):
        llm.complete("s", [Message.user("q")])


def test_unreachable_server_is_a_provider_call_error(make_anthropic):
    def refuse(request: Any) -> Any:
        raise httpx2.ConnectError("connection refused", request=request)

    llm = make_anthropic(refuse, max_retries=0)

    with pytest.raises(ProviderCallError, match="could not reach the Anthropic API"):
        llm.complete("s", [Message.user("q")])


def test_missing_api_key_names_the_environment_variable():
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("claude-sonnet-5-5", api_key=None)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicLLM("claude-sonnet-5-5", api_key="")


@pytest.mark.parametrize(
    ("options", "argument"),
    [({"timeout": 0}, "timeout"), ({"max_retries": -1}, "max_retries"), ({"model": ""}, "model")],
)
def test_invalid_constructor_arguments_are_named(options, argument):
    kwargs: dict[str, Any] = {"model": "claude-sonnet-5-5", "api_key": "k", **options}
    model = kwargs.pop("model")
    with pytest.raises(ConfigurationError, match=argument):
        AnthropicLLM(model, **kwargs)


def test_invalid_request_arguments_are_rejected_before_any_http_call(make_anthropic, recorder):
    record = recorder(lambda request, n: pytest.fail("no request expected"))
    llm = make_anthropic(record)

    with pytest.raises(ConfigurationError, match="messages"):
        llm.complete("s", [])
    with pytest.raises(ConfigurationError, match="max_tokens"):
        llm.complete("s", [Message.user("q")], max_tokens=0)
    assert record.count == 0


# -- Message Batches ------------------------------------------------------------------------


def _batch(status: str, *, processing: int, succeeded: int = 0, errored: int = 0, expired: int = 0):
    ended = status == "ended"
    return {
        "id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": processing,
            "succeeded": succeeded,
            "errored": errored,
            "canceled": 0,
            "expired": expired,
        },
        "created_at": "2026-11-21T10:00:00Z",
        "expires_at": "2026-11-22T10:00:00Z",
        "ended_at": "2026-11-21T10:05:00Z" if ended else None,
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": (
            "https://api.anthropic.com/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results"
            if ended
            else None
        ),
    }


class FakeClock:
    """Injected clock and sleep: sleeping advances the clock instead of waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _batch_server(anthropic_message, polls_before_end: int):
    """A handler for create, retrieve and results; results come back out of order."""
    state = {"polls": 0}
    results = [
        {"custom_id": "q3", "result": {"type": "expired"}},
        {
            "custom_id": "q1",
            "result": {
                "type": "succeeded",
                "message": anthropic_message("SELECT 1", input_tokens=50),
            },
        },
        {
            "custom_id": "q2",
            "result": {
                "type": "errored",
                "error": {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "prompt is too long"},
                },
            },
        },
    ]

    def respond(request: Any, n: int) -> Any:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            return _json(200, _batch("in_progress", processing=3))
        if request.method == "GET" and path.endswith("/results"):
            lines = "\n".join(json.dumps(line) for line in results) + "\n"
            return httpx2.Response(
                200, content=lines.encode(), headers={"content-type": "application/binary"}
            )
        if request.method == "GET" and path.startswith("/v1/messages/batches/"):
            state["polls"] += 1
            if state["polls"] > polls_before_end:
                return _json(200, _batch("ended", processing=0, succeeded=1, errored=1, expired=1))
            return _json(200, _batch("in_progress", processing=3))
        return _json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

    return respond


def _requests() -> list[tuple[str, LLMRequest]]:
    return [
        ("q1", LLMRequest.of("schema A", "How many singers?", max_tokens=100)),
        ("q2", LLMRequest.of("schema B", "List stadiums", temperature=0.7, stop=[";"])),
        ("q3", LLMRequest.of("schema C", "Oldest singer?")),
    ]


def test_batch_submission_sends_custom_ids_with_message_params(
    make_anthropic, recorder, anthropic_message
):
    record = recorder(_batch_server(anthropic_message, polls_before_end=0))
    llm = make_anthropic(record, model="claude-haiku-4-5")

    batch_id = llm.submit_batch(_requests())

    assert batch_id == "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF"
    (body,) = record.bodies
    assert [entry["custom_id"] for entry in body["requests"]] == ["q1", "q2", "q3"]
    assert body["requests"][0]["params"] == {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "schema A", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "How many singers?"}],
    }
    assert body["requests"][1]["params"]["stop_sequences"] == [";"]
    assert "temperature" not in body["requests"][1]["params"]


def test_run_batch_polls_until_ended_and_collects_results_by_custom_id(
    make_anthropic, recorder, anthropic_message
):
    record = recorder(_batch_server(anthropic_message, polls_before_end=2))
    llm = make_anthropic(record)
    fake = FakeClock()

    results = llm.run_batch(_requests(), poll_interval=30.0, sleep=fake.sleep, clock=fake.clock)

    assert fake.sleeps == [30.0, 30.0]
    assert set(results) == {"q1", "q2", "q3"}
    succeeded = results["q1"]
    assert isinstance(succeeded, Completion)
    assert succeeded.text == "SELECT 1"
    assert succeeded.usage.input_tokens == 50
    assert results["q2"] == BatchFailure(
        "q2", "errored", "invalid_request_error: prompt is too long"
    )
    assert isinstance(results["q3"], BatchFailure)
    assert results["q3"].kind == "expired"
    methods = [(r.method, r.url.path.rsplit("/", 1)[-1]) for r in record.requests]
    assert methods[0] == ("POST", "batches")
    assert methods[-1] == ("GET", "results")


def test_wait_for_batch_gives_up_after_timeout_naming_the_batch(
    make_anthropic, recorder, anthropic_message
):
    record = recorder(_batch_server(anthropic_message, polls_before_end=1000))
    llm = make_anthropic(record)
    fake = FakeClock()

    with pytest.raises(ProviderCallError, match="msgbatch_013Zva2CMHLNnXjNJJKqJ2EF"):
        llm.wait_for_batch(
            "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
            poll_interval=60.0,
            timeout=300.0,
            sleep=fake.sleep,
            clock=fake.clock,
        )

    assert fake.now <= 300.0
    assert fake.sleeps == [60.0] * 5


def test_batch_status_reports_counts(make_anthropic, anthropic_message):
    llm = make_anthropic(_json_once(_batch("ended", processing=0, succeeded=2, errored=1)))

    status = llm.batch_status("msgbatch_013Zva2CMHLNnXjNJJKqJ2EF")

    assert status.ended
    assert (status.succeeded, status.errored, status.processing) == (2, 1, 0)


def _json_once(body: Any):
    return lambda request: _json(200, body)


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([("has space", LLMRequest.of("s", "q"))], "custom_id"),
        ([("a", LLMRequest.of("s", "q")), ("a", LLMRequest.of("s", "r"))], "twice"),
        ([], "at least one"),
    ],
)
def test_invalid_batches_are_rejected_before_sending(make_anthropic, recorder, pairs, message):
    record = recorder(lambda request, n: pytest.fail("no request expected"))
    llm = make_anthropic(record)

    with pytest.raises(ConfigurationError, match=message):
        llm.submit_batch(pairs)
    assert record.count == 0
