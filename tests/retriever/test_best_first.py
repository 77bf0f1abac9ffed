"""`best_first`: the head of a stable argsort, without sorting the whole pool."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from retriever.fusion import best_first


@settings(max_examples=200, deadline=None)
@given(
    scores=arrays(np.float64, st.integers(1, 60), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0])),  # noqa: E501
    k=st.integers(1, 70),
)  # fmt: skip
def test_best_first_is_the_head_of_the_stable_argsort(scores: np.ndarray, k: int) -> None:
    # few distinct values: ties at the cut are the rule, not the exception
    expected = np.argsort(-scores, kind="stable")[:k]
    np.testing.assert_array_equal(best_first(scores, k), expected)
