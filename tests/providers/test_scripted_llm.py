"""ScriptedLLM, the LLM value types, and running many calls concurrently."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest

from providers import (
    LLM,
    Completion,
    ConfigurationError,
    LLMRequest,
    Message,
    ProviderCallError,
    ScriptedLLM,
    Usage,
    acomplete_many,
    complete_many,
    echo_last_user_message,
)


def test_fixed_reply_is_returned_for_every_call_and_calls_are_recorded():
    llm = ScriptedLLM("SELECT 1")

    first = llm.complete("schema", [Message.user("a")])
    second = llm.complete("schema", [Message.user("b")], temperature=0.5, max_tokens=9, sample=2)

    assert [first.text, second.text] == ["SELECT 1", "SELECT 1"]
    assert [call.messages[-1].content for call in llm.calls] == ["a", "b"]
    assert llm.calls[1] == LLMRequest(
        "schema", (Message.user("b"),), temperature=0.5, max_tokens=9, sample=2
    )
    assert llm.call_count == 2


def test_cycling_replies_start_over_after_the_last():
    llm = ScriptedLLM(["a", "b", "c"])

    texts = [llm.complete("", [Message.user("q")]).text for _ in range(5)]

    assert texts == ["a", "b", "c", "a", "b"]


def test_non_cycling_script_fails_when_exhausted():
    llm = ScriptedLLM(["a"], cycle=False)
    llm.complete("", [Message.user("q")])

    with pytest.raises(ProviderCallError, match="ran out of replies after 1 call"):
        llm.complete("", [Message.user("q")])


def test_function_reply_sees_the_whole_request():
    llm = ScriptedLLM(lambda request: f"{request.system}|{request.messages[-1].content}")

    assert llm.complete("S", [Message.user("Q")]).text == "S|Q"


def test_echo_replies_with_the_last_user_message():
    llm = ScriptedLLM(echo_last_user_message, model="echo")
    messages = [Message.user("first"), Message.assistant("x"), Message.user("second")]

    assert llm.complete("s", messages).text == "second"
    assert llm.name == "scripted:echo"


def test_usage_counts_whitespace_tokens_and_model_is_the_scripted_name():
    llm = ScriptedLLM("SELECT name FROM singer")

    completion = llm.complete("two words", [Message.user("three more words")])

    assert completion.usage == Usage(input_tokens=5, output_tokens=4)
    assert completion.model == "scripted:default"


def test_reply_is_cut_at_the_earliest_stop_sequence():
    llm = ScriptedLLM("SELECT 1; -- done\n\nmore")

    completion = llm.complete("", [Message.user("q")], stop=["\n\n", ";"])

    assert completion.text == "SELECT 1"
    assert completion.stop_reason == "stop_sequence"


def test_scripted_llm_satisfies_the_llm_protocol():
    assert isinstance(ScriptedLLM("x"), LLM)


@pytest.mark.parametrize(("replies", "message"), [([], "empty"), ([1], "strings")])
def test_invalid_scripts_are_rejected(replies, message):
    with pytest.raises(ConfigurationError, match=message):
        ScriptedLLM(replies)


def test_requests_with_bad_arguments_are_rejected_and_not_recorded():
    llm = ScriptedLLM("x")

    with pytest.raises(ConfigurationError, match="temperature"):
        llm.complete("", [Message.user("q")], temperature=-1)
    with pytest.raises(ConfigurationError, match="at least one"):
        llm.complete("", [])
    assert llm.calls == []


def test_message_role_is_validated():
    with pytest.raises(ConfigurationError, match="role"):
        Message("system", "x")  # type: ignore[arg-type]


def test_usage_adds_field_by_field():
    total = Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40)

    assert total == Usage(11, 22, 33, 44)
    assert total.total_tokens == 110
    assert sum([Usage(1, 1), Usage(2, 2)], Usage()) == Usage(3, 3)


# -- complete_many / acomplete_many ---------------------------------------------------------


class _Tracking:
    """A function-driven script that sleeps a little and records the peak concurrency."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        self.peak = 0
        self.rng = random.Random(7)

    def __call__(self, request: LLMRequest) -> str:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
            delay = self.rng.uniform(0.005, 0.02)
        time.sleep(delay)
        with self.lock:
            self.active -= 1
        if request.messages[-1].content == "boom":
            raise ProviderCallError("boom", provider="scripted")
        return request.messages[-1].content.upper()


def _requests(n: int) -> list[LLMRequest]:
    return [LLMRequest.of("s", f"q{i}") for i in range(n)]


def test_complete_many_keeps_order_and_bounds_concurrency():
    tracking = _Tracking()
    llm = ScriptedLLM(tracking)

    results = complete_many(llm, _requests(24), max_concurrency=3)

    assert [r.text for r in results] == [f"Q{i}" for i in range(24)]
    assert all(isinstance(r, Completion) for r in results)
    assert 2 <= tracking.peak <= 3
    assert llm.call_count == 24


def test_complete_many_raises_the_first_failure():
    llm = ScriptedLLM(_Tracking())
    requests = [*_requests(3), LLMRequest.of("s", "boom"), *_requests(3)]

    with pytest.raises(ProviderCallError, match="boom"):
        complete_many(llm, requests, max_concurrency=2)


def test_complete_many_sequential_and_empty():
    llm = ScriptedLLM(["a", "b"])

    assert [r.text for r in complete_many(llm, _requests(2), max_concurrency=1)] == ["a", "b"]
    assert complete_many(llm, [], max_concurrency=4) == []
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        complete_many(llm, _requests(1), max_concurrency=0)


def test_acomplete_many_keeps_order_and_bounds_concurrency():
    tracking = _Tracking()
    llm = ScriptedLLM(tracking)

    results = asyncio.run(acomplete_many(llm, _requests(16), max_concurrency=4))

    assert [r.text for r in results] == [f"Q{i}" for i in range(16)]
    assert 2 <= tracking.peak <= 4


@pytest.mark.parametrize("runner", ["threads", "asyncio"])
def test_all_allowed_calls_really_run_at_once(runner):
    # Eight calls that can only finish together: they fail unless eight run concurrently
    # (more than the asyncio default executor's few threads per CPU).
    barrier = threading.Barrier(8, timeout=10)

    def meet(request: LLMRequest) -> str:
        barrier.wait()
        return "met"

    llm = ScriptedLLM(meet)
    requests = _requests(8)
    if runner == "threads":
        results = complete_many(llm, requests, max_concurrency=8)
    else:
        results = asyncio.run(acomplete_many(llm, requests, max_concurrency=8))

    assert [r.text for r in results] == ["met"] * 8


def test_acomplete_many_propagates_a_failure():
    llm = ScriptedLLM(_Tracking())

    with pytest.raises(ProviderCallError, match="boom"):
        asyncio.run(acomplete_many(llm, [LLMRequest.of("s", "boom")], max_concurrency=2))


def test_llm_request_normalizes_sequences_and_validates():
    request = LLMRequest("s", [Message.user("q")], stop=[";"])  # type: ignore[arg-type]

    assert request.messages == (Message.user("q"),)
    assert request.stop == (";",)
    with pytest.raises(ConfigurationError, match="sample"):
        LLMRequest.of("s", "q", sample=-1)
