"""How the fusion scales its signals over the pool: `scale` and `shift_dense`."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from retriever.fusion import scale, shift_dense

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
