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
from retriever import KnowledgeBase, StoreNotReadyError, question_index
from retriever.question_index import Cells, InMemoryQuestions
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


def _unit_rows(rng: np.random.Generator, n: int, dim: int = 8) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), count=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_cells_hold_every_row_once_and_a_stored_row_finds_itself(
    n: int, count: int, seed: int
) -> None:
    vectors = _unit_rows(np.random.default_rng(seed), n)
    cells = Cells(vectors, count=count, probe=1, seed=seed)

    assert sorted(cells.order.tolist()) == list(range(n))
    np.testing.assert_array_equal(cells.rows, vectors[cells.order])
    for row in range(0, n, 7):
        scores, positions = cells.scores(vectors[row])
        rows = cells.order[positions]
        assert row in rows.tolist()  # its own cell is the nearest one
        np.testing.assert_allclose(scores, vectors[rows] @ vectors[row], atol=1e-5)


def test_probing_every_cell_is_the_exact_search_and_fewer_cells_scan_fewer_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(0)
    vectors = _unit_rows(rng, 2_000)
    payloads = [{"db_id": f"db{i % 7}", "question": f"q{i}"} for i in range(len(vectors))]
    exact = InMemoryQuestions.from_unit_vectors(vectors, payloads)
    monkeypatch.setattr(question_index, "CELLS_FROM", 1_000)
    probed = InMemoryQuestions.from_unit_vectors(vectors, payloads)
    assert exact.cells is None and probed.cells is not None
    assert len(probed.cells.centroids) == round(2 * np.sqrt(2_000))  # 89 cells
    assert probed.cells.probe == 64

    queries = _unit_rows(rng, 20)
    narrow = probed.search_many(queries, 10)
    assert [len(h) for h in narrow] == [10] * 20
    assert all(h.score <= 1.0 + 1e-6 for hits in narrow for h in hits)
    probed.cells.probe = 5
    assert max(len(probed.cells.scores(q)[0]) for q in queries) < len(vectors) / 3
    probed.cells.probe = len(probed.cells.centroids)
    wide = probed.search_many(queries, 10)
    for hits, alone in zip(wide, exact.search_many(queries, 10), strict=True):
        assert [h.question for h in hits] == [h.question for h in alone]
    # a filtered search stays exact over the database's rows
    assert [h.question for h in probed.search(queries[0], 5, "db3")] == [
        h.question for h in exact.search(queries[0], 5, "db3")
    ]


def test_cells_are_reproducible_from_their_seed() -> None:
    vectors = _unit_rows(np.random.default_rng(3), 500)
    first, again, other = Cells(vectors), Cells(vectors), Cells(vectors, seed=1)
    np.testing.assert_array_equal(first.centroids, again.centroids)
    np.testing.assert_array_equal(first.order, again.order)
    assert not np.array_equal(first.centroids, other.centroids)


def test_an_estimate_is_exact_near_the_query_and_each_cells_mean_elsewhere() -> None:
    vectors = _unit_rows(np.random.default_rng(5), 1_000)
    cells = Cells(vectors, count=40, probe=3)
    query = vectors[17]
    estimate = cells.estimate(query)
    near, positions = cells.scores(query)
    near_rows = cells.order[positions]
    np.testing.assert_allclose(estimate[near_rows], near, atol=1e-6)
    far = np.setdiff1d(np.arange(1_000), near_rows)
    assert len(far) > 500
    cell_of = np.empty(1_000, dtype=np.int64)
    for c in range(40):
        cell_of[cells.order[cells.starts[c] : cells.starts[c + 1]]] = c
    for row in far[:50].tolist():
        members = np.flatnonzero(cell_of == cell_of[row])
        assert estimate[row] == pytest.approx(float((vectors[members] @ query).mean()), abs=1e-5)
    cells.probe = 40
    np.testing.assert_allclose(cells.estimate(query), vectors @ query, atol=1e-6)
