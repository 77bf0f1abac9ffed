"""`InMemoryQuestions`: the same hits as Qdrant's own search, and no lock left on the folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from qdrant_client import QdrantClient

from providers import HashingEmbedder
from retriever import KnowledgeBase, StoreNotReadyError
from retriever.question_index import InMemoryQuestions
from tests.retriever.conftest import RECORDS

QUESTIONS = [
    "How many pets are older than 5?",
    "Which airlines fly from APG?",
    "average horsepower of cars",
    "students who own a dog",
]


@pytest.mark.parametrize("db_id", [None, "pets_1", "car_1", "no_such_db"])
def test_hits_equal_qdrants_own_search(
    store: Path, embedder: HashingEmbedder, db_id: str | None
) -> None:
    memory = KnowledgeBase.open(store, in_memory=True)
    qdrant = KnowledgeBase.open(store, in_memory=False)
    try:
        for question in QUESTIONS:
            vector = embedder.embed_query(question)
            ours = memory.search_questions(vector, 5, db_id=db_id)
            theirs = qdrant.search_questions(vector, 5, db_id=db_id)
            assert [h.question for h in ours] == [h.question for h in theirs]
            assert [h.db_id for h in ours] == [h.db_id for h in theirs]
            np.testing.assert_allclose(
                [h.score for h in ours], [h.score for h in theirs], atol=1e-5
            )
            assert all(db_id in (None, h.db_id) for h in ours)
        assert memory.question_count() == qdrant.question_count() == len(RECORDS)
        assert sorted(memory.question_texts()) == sorted(qdrant.question_texts())
    finally:
        memory.close()
        qdrant.close()


def test_batch_search_equals_one_search_per_question_in_memory_and_in_qdrant(
    store: Path, embedder: HashingEmbedder
) -> None:
    vectors = embedder.embed_documents(QUESTIONS)
    for in_memory in (True, False):
        kb = KnowledgeBase.open(store, in_memory=in_memory)
        try:
            batch = kb.search_questions_many(vectors, 4)
            for vector, hits in zip(vectors, batch, strict=True):
                alone = kb.search_questions(vector, 4)
                assert [h.question for h in hits] == [h.question for h in alone]
                np.testing.assert_allclose(
                    [h.score for h in hits], [h.score for h in alone], atol=1e-5
                )
            assert kb.search_questions_many(vectors[:0], 4) == []
        finally:
            kb.close()


def test_an_in_memory_knowledge_base_leaves_the_folder_unlocked(store: Path) -> None:
    kb = KnowledgeBase.open(store, in_memory=True)
    folder = next((store / "builds").iterdir()) / "qdrant"
    QdrantClient(path=str(folder)).close()  # would raise if kb still held the folder
    kb.close()


def test_a_locked_folder_is_waited_for_then_named(store: Path) -> None:
    folder = next((store / "builds").iterdir()) / "qdrant"
    holder = QdrantClient(path=str(folder))
    try:
        with pytest.raises(StoreNotReadyError, match="cannot open"):
            KnowledgeBase.open(store, lock_wait_s=0.3)
    finally:
        holder.close()
    KnowledgeBase.open(store, lock_wait_s=0.3).close()  # free again


@settings(max_examples=60, deadline=None)
@given(
    vectors=arrays(np.float32, st.tuples(st.integers(1, 40), st.just(6)), elements=st.floats(-1, 1, width=32)),  # noqa: E501
    query=arrays(np.float32, 6, elements=st.floats(-1, 1, width=32)),
    limit=st.integers(1, 50),
)  # fmt: skip
def test_search_is_the_exact_top_k_by_cosine(
    vectors: np.ndarray, query: np.ndarray, limit: int
) -> None:
    payloads = [{"db_id": f"db{i % 3}", "question": f"q{i}"} for i in range(len(vectors))]
    index = InMemoryQuestions(zip(vectors.tolist(), payloads, strict=True), 6)

    for db_id in (None, "db1"):
        rows = [i for i in range(len(vectors)) if db_id in (None, payloads[i]["db_id"])]
        hits = index.search(query, limit, db_id)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit = vectors / np.where(norms == 0, 1.0, norms)
        q = query / (np.linalg.norm(query) or 1.0)
        expected = sorted(-float(unit[i] @ q) for i in rows)[:limit]
        assert len(hits) == min(limit, len(rows))
        np.testing.assert_allclose([-h.score for h in hits], expected, atol=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(db_id in (None, h.db_id) for h in hits)
