"""ProviderCache, CachedLLM and CachedEmbedder: a second identical run calls no provider."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import pytest

from providers import (
    CachedEmbedder,
    CachedLLM,
    CacheStats,
    Completion,
    ConfigurationError,
    HashingEmbedder,
    LLMRequest,
    Message,
    ProviderCache,
    ScriptedLLM,
    Usage,
    Vectors,
    cache_key,
    complete_many,
)


class SpyEmbedder:
    """Wraps an embedder and records every batch of texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []
        self.lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        with self.lock:
            self.document_calls.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        with self.lock:
            self.query_calls.append(text)
        return self.inner.embed_query(text)


@pytest.fixture
def cache_path(tmp_path):
    return tmp_path / "cache" / "providers.sqlite"


def _run(llm: Any) -> list[str]:
    return [
        llm.complete("schema", [Message.user("How many singers?")]).text,
        llm.complete("schema", [Message.user("Oldest singer?")], max_tokens=50).text,
        llm.complete("schema", [Message.user("How many singers?")], temperature=0.8, sample=1).text,
    ]


def test_second_identical_run_makes_no_llm_call(cache_path):
    scripted = ScriptedLLM(["r1", "r2", "r3", "r4"])
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(scripted, cache)

        first = _run(llm)
        second = _run(llm)

        assert first == second == ["r1", "r2", "r3"]
        assert scripted.call_count == 3
        assert cache.stats() == CacheStats(completion_hits=3, completion_misses=3)


def test_cache_persists_across_reopening_the_file(cache_path):
    with ProviderCache(cache_path) as cache:
        _run(CachedLLM(ScriptedLLM(["r1", "r2", "r3"]), cache))

    fresh = ScriptedLLM("should not be called")
    with ProviderCache(cache_path) as reopened:
        assert _run(CachedLLM(fresh, reopened)) == ["r1", "r2", "r3"]
        assert reopened.stats().completion_hits == 3
    assert fresh.calls == []


def test_a_hit_returns_the_stored_completion_marked_cached(cache_path):
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(ScriptedLLM("SELECT count(*) FROM singer"), cache)

        original = llm.complete("s", [Message.user("q")])
        replay = llm.complete("s", [Message.user("q")])

    assert not original.cached
    assert replay == Completion(
        text=original.text,
        model=original.model,
        usage=original.usage,
        stop_reason=original.stop_reason,
        cached=True,
    )


@pytest.mark.parametrize(
    "change",
    [
        {"system": "other schema"},
        {"messages": [Message.user("q"), Message.assistant("a"), Message.user("q")]},
        {"temperature": 0.5},
        {"max_tokens": 10},
        {"stop": [";"]},
        {"sample": 1},
    ],
)
def test_every_parameter_is_part_of_the_key(cache_path, change):
    base: dict[str, Any] = {"system": "s", "messages": [Message.user("q")]}
    scripted = ScriptedLLM(["first", "second"])
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(scripted, cache)
        llm.complete(**base)

        changed = llm.complete(**{**base, **change})

    assert changed.text == "second"
    assert scripted.call_count == 2


def test_different_models_do_not_share_entries(cache_path):
    with ProviderCache(cache_path) as cache:
        CachedLLM(ScriptedLLM("from a", model="a"), cache).complete("s", [Message.user("q")])
        reply = CachedLLM(ScriptedLLM("from b", model="b"), cache).complete(
            "s", [Message.user("q")]
        )

    assert reply.text == "from b"


def test_integer_and_float_temperature_share_a_key(cache_path):
    scripted = ScriptedLLM(["one", "two"])
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(scripted, cache)
        llm.complete("s", [Message.user("q")], temperature=0)
        llm.complete("s", [Message.user("q")], temperature=0.0)

    assert scripted.call_count == 1


def test_cached_anthropic_llm_sends_one_http_request_for_two_identical_calls(
    cache_path, make_anthropic, recorder, anthropic_message
):
    counting = recorder(lambda request, n: httpx_response(anthropic_message("SELECT 1")))
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(make_anthropic(counting), cache)

        first = llm.complete("schema", [Message.user("q")])
        second = llm.complete("schema", [Message.user("q")])

    assert counting.count == 1
    assert first.text == second.text == "SELECT 1"
    assert second.cached
    assert second.usage == first.usage


def httpx_response(body: dict[str, Any]) -> Any:
    httpx2 = pytest.importorskip("httpx2")
    return httpx2.Response(200, json=body)


def test_embeddings_only_send_misses_once_each_and_keep_order(cache_path):
    spy = SpyEmbedder(HashingEmbedder(64))
    with ProviderCache(cache_path) as cache:
        embedder = CachedEmbedder(spy, cache)

        first = embedder.embed_documents(["a b", "c d", "a b"])
        second = embedder.embed_documents(["c d", "e f", "a b"])

        assert spy.document_calls == [["a b", "c d"], ["e f"]]
        np.testing.assert_array_equal(
            second, HashingEmbedder(64).embed_documents(["c d", "e f", "a b"])
        )
        np.testing.assert_array_equal(first[0], first[2])
        assert second.dtype == np.float32
        assert cache.stats() == CacheStats(embedding_hits=2, embedding_misses=3)


def test_a_rerun_of_an_embedding_job_makes_no_provider_call(cache_path):
    texts = [f"table {i}" for i in range(300)]
    with ProviderCache(cache_path) as cache:
        CachedEmbedder(SpyEmbedder(HashingEmbedder(32)), cache).embed_documents(texts)
    spy = SpyEmbedder(HashingEmbedder(32))
    with ProviderCache(cache_path) as cache:
        vectors = CachedEmbedder(spy, cache).embed_documents(texts)

    assert spy.document_calls == []
    np.testing.assert_array_equal(vectors, HashingEmbedder(32).embed_documents(texts))


def test_cached_cohere_embedder_rerun_sends_no_http_request(cache_path, make_cohere, recorder):
    import json

    def respond(request: Any, n: int) -> Any:
        body = json.loads(request.content)
        return httpx.Response(
            200,
            json={
                "id": "e",
                "embeddings": {"float": [[1.0] + [0.0] * 1023 for _ in body["texts"]]},
                "texts": body["texts"],
                "meta": {"billed_units": {"input_tokens": 1}},
            },
        )

    counting = recorder(respond)
    texts = [f"t{i}" for i in range(100)]
    with ProviderCache(cache_path) as cache:
        embedder = CachedEmbedder(make_cohere(counting), cache)
        embedder.embed_documents(texts)
        requests_after_first_run = counting.count
        embedder.embed_documents(texts)
        embedder.embed_query("q")
        embedder.embed_query("q")

    assert requests_after_first_run == 2  # 96 + 4
    assert counting.count == 3  # one more, for the first query only


def test_queries_and_documents_are_cached_separately(cache_path):
    spy = SpyEmbedder(HashingEmbedder(16))
    with ProviderCache(cache_path) as cache:
        embedder = CachedEmbedder(spy, cache)
        embedder.embed_documents(["same text"])
        query = embedder.embed_query("same text")
        again = embedder.embed_query("same text")

    assert spy.query_calls == ["same text"]
    assert query.shape == (16,)
    np.testing.assert_array_equal(query, again)
    again[0] = 42.0  # vectors from the cache are writable copies


def test_concurrent_use_from_threads(cache_path):
    scripted = ScriptedLLM(lambda request: request.messages[-1].content[::-1])
    spy = SpyEmbedder(HashingEmbedder(32))
    errors: list[BaseException] = []
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(scripted, cache)
        embedder = CachedEmbedder(spy, cache)

        def work(worker: int) -> None:
            try:
                for i in range(40):
                    key = f"q{(worker + i) % 25}"
                    assert llm.complete("s", [Message.user(key)]).text == key[::-1]
                    embedder.embed_documents([key, f"d{i}"])
            except BaseException as exc:  # collected and re-raised in the main thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        stats = cache.stats()

    assert errors == []
    assert stats.completion_hits + stats.completion_misses == 8 * 40
    assert stats.embedding_hits + stats.embedding_misses == 8 * 40 * 2
    assert 25 <= scripted.call_count < 8 * 40
    with ProviderCache(cache_path) as reopened:
        fresh = ScriptedLLM("unused")
        for i in range(25):
            CachedLLM(fresh, reopened).complete("s", [Message.user(f"q{i}")])
        assert fresh.calls == []


def test_complete_many_over_a_cached_llm_resumes_for_free(cache_path):
    scripted = ScriptedLLM(lambda request: request.messages[-1].content.upper())
    requests = [LLMRequest.of("s", f"q{i}") for i in range(20)]
    with ProviderCache(cache_path) as cache:
        llm = CachedLLM(scripted, cache)
        complete_many(llm, requests[:12], max_concurrency=4)
        results = complete_many(llm, requests, max_concurrency=4)

    assert [r.text for r in results] == [f"Q{i}" for i in range(20)]
    assert scripted.call_count == 20
    assert sum(r.cached for r in results) == 12


def test_cache_key_is_canonical():
    a = cache_key("completion", "m", {"x": 1, "y": [1, 2]}, {"text": "é"})
    b = cache_key("completion", "m", {"y": [1, 2], "x": 1}, {"text": "é"})

    assert a == b
    assert len(a) == 64
    assert a != cache_key("embedding", "m", {"x": 1, "y": [1, 2]}, {"text": "é"})
    assert a != cache_key("completion", "n", {"x": 1, "y": [1, 2]}, {"text": "é"})


def test_in_memory_cache_and_usage_round_trip():
    with ProviderCache(":memory:") as cache:
        completion = Completion("t", "m", Usage(1, 2, 3, 4), stop_reason="end_turn", logprob=-1.5)
        cache.put_completion("k", completion)

        restored = cache.get_completion("k")

    assert restored is not None
    assert restored.usage == Usage(1, 2, 3, 4)
    assert restored.logprob == -1.5
    assert restored.cached


def test_empty_path_is_rejected():
    with pytest.raises(ConfigurationError, match="path"):
        ProviderCache("")


def _open_at_once(path: str, barrier: Any) -> None:
    barrier.wait()
    ProviderCache(path).close()


def test_processes_that_open_a_new_cache_at_once_all_open_it(tmp_path):
    """As the workers of `serve` do: processes opening the same new file together can deadlock
    on its first write, which SQLite answers "locked" without waiting; every one opens it."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(10):
        path = str(tmp_path / f"cache{round_}.sqlite")
        barrier = context.Barrier(6)
        processes = [context.Process(target=_open_at_once, args=(path, barrier)) for _ in range(6)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout=60)
        assert [p.exitcode for p in processes] == [0] * 6
