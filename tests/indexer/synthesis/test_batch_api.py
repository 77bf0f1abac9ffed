"""Concurrent calls coalesce into batches; failures reach the right caller."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from indexer.synthesis.batch_api import BatchingLLM, make_batching
from providers import (
    BatchFailure,
    Completion,
    ConfigurationError,
    LLMRequest,
    Message,
    ProviderCallError,
    ScriptedLLM,
    Usage,
)


class FakeBatchAPI:
    """Answers each request with its last user message upper-cased; fails ones saying 'fail'."""

    name = "fake:batch"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def run_batch(
        self, requests: Iterable[tuple[str, LLMRequest]], **kwargs: Any
    ) -> dict[str, Completion | BatchFailure]:
        pairs = list(requests)
        self.batches.append([r.messages[-1].content for _, r in pairs])
        out: dict[str, Completion | BatchFailure] = {}
        for custom_id, request in pairs:
            text = request.messages[-1].content
            out[custom_id] = (
                BatchFailure(custom_id, "errored", "overloaded")
                if text == "fail"
                else Completion(text.upper(), "fake", Usage(1, 1))
            )
        return out


def ask(llm: BatchingLLM, text: str) -> str:
    return llm.complete("system", [Message.user(text)]).text


def test_concurrent_calls_share_one_batch_and_get_their_own_answers() -> None:
    api = FakeBatchAPI()
    llm = BatchingLLM(api, max_pending=8, window_s=30)
    words = [f"q{i}" for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda w: ask(llm, w), words))
    assert answers == [w.upper() for w in words]
    assert len(api.batches) == 1 and sorted(api.batches[0]) == sorted(words)


def test_a_partial_batch_goes_out_when_the_window_ends() -> None:
    api = FakeBatchAPI()
    llm = BatchingLLM(api, max_pending=100, window_s=0.05)
    assert ask(llm, "alone") == "ALONE"
    assert api.batches == [["alone"]]


def test_a_failed_request_raises_for_its_caller_only() -> None:
    api = FakeBatchAPI()
    llm = BatchingLLM(api, max_pending=2, window_s=30)
    with ThreadPoolExecutor(2) as pool:
        ok = pool.submit(ask, llm, "fine")
        bad = pool.submit(ask, llm, "fail")
        assert ok.result() == "FINE"
        with pytest.raises(ProviderCallError, match="overloaded"):
            bad.result()


def test_batching_needs_a_batch_api() -> None:
    with pytest.raises(ConfigurationError, match="needs a model with a batch API"):
        make_batching(ScriptedLLM("x"), max_pending=4)
