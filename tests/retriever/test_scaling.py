"""How the fusion scales its signals over the pool (`scale`, `shift_dense`) and BM25's lead."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from retriever.fusion import (
    DEFAULT_WEIGHTS,
    FusionWeights,
    Signals,
    fuse,
    lead,
    scale,
    shift_dense,
)

finite = st.floats(-1.0, 1.0, allow_nan=False, width=32)


@settings(max_examples=200, deadline=None)
@given(values=arrays(np.float64, st.integers(1, 50), elements=finite))
def test_scale_divides_by_the_maximum_and_clips_negatives(values: np.ndarray) -> None:
    top = values.max()
    expected = np.clip(values / top, 0.0, None) if top > 0 else np.zeros_like(values)

    np.testing.assert_array_equal(scale(values), expected)
    assert values.max() == top  # the input is left as it was


@settings(max_examples=200, deadline=None)
@given(values=arrays(np.float64, st.integers(1, 50), elements=finite), median=finite)
def test_shift_dense_is_zero_at_the_median_and_one_at_the_best(
    values: np.ndarray, median: float
) -> None:
    np.testing.assert_array_equal(shift_dense(values), shift_dense(values, np.median(values)))
    shifted = shift_dense(values, median)
    top = values.max()
    if top <= median:
        assert not shifted.any()
        return
    np.testing.assert_allclose(shifted, np.clip((values - median) / (top - median), 0.0, None))
    assert shifted[values <= median].sum() == 0
    assert shifted[values == top].min() == 1.0


@settings(max_examples=200, deadline=None)
@given(values=arrays(np.float64, st.integers(1, 50), elements=finite))
def test_lead_is_the_best_ones_margin_over_the_runner_up(values: np.ndarray) -> None:
    led = lead(values)
    assert led.shape == values.shape
    if len(values) == 1:
        assert not led.any()
        return
    best = int(np.argmax(values))
    runner_up = np.sort(values)[-2]
    assert led[best] == values[best] - runner_up
    assert not np.delete(led, best).any()  # the others get nothing
    if (values == values.max()).sum() > 1:
        assert not led.any()  # a tie leads nobody


def test_a_clear_bm25_lead_outweighs_a_small_dense_edge() -> None:
    # Two databases of one table each. `a` leads BM25 (1.0 against 0.2); `b` has the better
    # document cosine and the synthetic-question votes.
    signals = Signals(
        table={
            "dense": np.array([0.50, 0.58, 0.10]),
            "bm25": np.array([5.0, 1.0, 0.0]),
            "names": np.zeros(3),
            "values": np.zeros(3),
        },
        db_votes=np.array([0.4, 0.6, 0.0]),
        table_votes=np.array([0.4, 0.6, 0.0]),
    )
    db_of = np.arange(3)

    def database_scores(weights: FusionWeights) -> np.ndarray:
        return fuse(signals, db_of, 3, weights)[0]

    with_lead = database_scores(DEFAULT_WEIGHTS)
    without = database_scores(replace(DEFAULT_WEIGHTS, db_bm25_margin=0.0))
    assert int(np.argmax(without)) == 1
    assert int(np.argmax(with_lead)) == 0
    np.testing.assert_allclose(with_lead - without, [DEFAULT_WEIGHTS.db_bm25_margin * 0.8, 0, 0])
