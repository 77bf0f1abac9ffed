"""The size prior of `retriever.fusion`: a database of more than `size_floor` tables pays
`db_size` times log(tables / `size_floor`), so that the best of many tables' scores does not
outrank a small database whose one table fits as well."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from retriever.fusion import FusionWeights, Signals, fuse, size_prior

WEIGHTS = FusionWeights()


def db_scores(
    tables: list[int], dense: list[float], weights: FusionWeights = WEIGHTS
) -> list[float]:
    """Database scores of databases of `tables[d]` tables, whose first table has the dense
    cosine `dense[d]` and the others 0 (no other signal)."""
    db_of = np.repeat(np.arange(len(tables)), tables)
    cosines = np.zeros(len(db_of))
    firsts = np.concatenate(([0], np.cumsum(tables)[:-1]))
    cosines[firsts] = dense
    zero = np.zeros(len(db_of))
    signals = Signals(
        table={"dense": cosines, "bm25": zero, "names": zero, "values": zero},
        db_votes=np.zeros(len(tables)),
        table_votes=zero,
    )
    return fuse(signals, db_of, len(tables), weights)[0].round(6).tolist()


def test_a_wide_database_no_longer_wins_a_tie_by_its_size() -> None:
    small, wide = db_scores([3, 400], [0.9, 0.9])
    assert small > wide
    assert small - wide == round(WEIGHTS.db_size * math.log(400 / WEIGHTS.size_floor), 6)
    # without the prior the two tie
    assert len(set(db_scores([3, 400], [0.9, 0.9], FusionWeights(db_size=0.0)))) == 1


def test_databases_up_to_the_floor_pay_nothing() -> None:
    assert db_scores([1, WEIGHTS.size_floor], [0.9, 0.9]) == db_scores(
        [1, WEIGHTS.size_floor], [0.9, 0.9], FusionWeights(db_size=0.0)
    )


def test_a_clearly_better_wide_database_still_wins() -> None:
    small, wide = db_scores([3, 400], [0.1, 0.9])
    assert wide > small


@given(st.lists(st.integers(1, 2_000), min_size=1, max_size=30))
def test_the_prior_grows_with_the_tables_and_is_zero_up_to_the_floor(tables: list[int]) -> None:
    db_of = np.repeat(np.arange(len(tables)), tables)
    prior = size_prior(db_of, len(tables), WEIGHTS)
    for count, paid in zip(tables, prior, strict=True):
        assert paid >= 0.0
        assert (paid == 0.0) == (count <= WEIGHTS.size_floor)
    order = np.argsort(tables, kind="stable")
    assert np.all(np.diff(prior[order]) >= -1e-12)
