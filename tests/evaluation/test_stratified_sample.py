"""`stratified_sample`: the subset of a benchmark that `bench ex --sample` and `bench recall
--sample` run."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.datasets import BenchQuestion, stratified_sample
from evaluation.errors import BenchmarkDataError

LEVELS = ("easy", "medium", "hard", "extra", None)


def _questions(levels: list[str | None]) -> list[BenchQuestion]:
    return [BenchQuestion(f"q{i}", "SELECT 1", "db", frozenset(), h) for i, h in enumerate(levels)]


@given(
    st.lists(st.sampled_from(LEVELS), min_size=1, max_size=80),
    st.integers(1, 100),
    st.integers(0, 9),
)
def test_sample_keeps_each_levels_share_and_repeats_with_its_seed(
    levels: list[str | None], size: int, seed: int
) -> None:
    questions = _questions(levels)
    sample = stratified_sample(questions, size, seed)
    assert len(sample) == min(size, len(questions))
    assert len({id(q) for q in sample}) == len(sample)
    positions = [questions.index(q) for q in sample]
    assert positions == sorted(positions)  # file order
    drawn = Counter(q.hardness for q in sample)
    for level, count in Counter(levels).items():
        assert abs(drawn[level] - len(sample) * count / len(questions)) < 1
    assert stratified_sample(questions, size, seed) == sample


def test_different_seeds_draw_different_questions() -> None:
    questions = _questions(["easy"] * 50 + ["hard"] * 50)
    draws = {tuple(q.question for q in stratified_sample(questions, 10, s)) for s in range(5)}
    assert len(draws) == 5


def test_a_sample_size_below_one_is_refused() -> None:
    with pytest.raises(BenchmarkDataError, match="sample size"):
        stratified_sample(_questions(["easy"]), 0, 0)
