"""Result comparison: the Spider test-suite rules, BIRD's sets and the relaxed match."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph.sql import (
    CompareMode,
    bird_result_eq,
    gold_orders_rows,
    relaxed_result_eq,
    results_match,
    spider_result_eq,
)

ROWS = [(1, "a"), (2, "b"), (3, "c")]


def test_row_order_is_free_without_order_by() -> None:
    shuffled = [ROWS[2], ROWS[0], ROWS[1]]
    assert spider_result_eq(ROWS, shuffled, order_matters=False)
    assert not spider_result_eq(ROWS, shuffled, order_matters=True)
    assert spider_result_eq(ROWS, list(ROWS), order_matters=True)


def test_order_is_decided_by_the_gold_text() -> None:
    assert gold_orders_rows("SELECT a FROM t ORDER BY a")
    assert gold_orders_rows("select a from t where b in (select b from u order by c limit 1)")
    assert not gold_orders_rows("SELECT a FROM t")
    assert not gold_orders_rows("SELECT a FROM t ORDER\nBY a")  # textual, as the official script


def test_duplicates_count_as_a_bag() -> None:
    gold = [(1,), (1,), (2,)]
    assert not spider_result_eq(gold, [(1,), (2,), (2,)], order_matters=False)
    assert not spider_result_eq(gold, [(1,), (2,)], order_matters=False)
    assert spider_result_eq(gold, [(2,), (1,), (1,)], order_matters=False)
    assert bird_result_eq(gold, [(1,), (2,), (2,)])
    assert bird_result_eq(gold, [(1,), (2,)])


def test_column_order_is_free_in_spider_but_not_in_bird() -> None:
    swapped = [(name, number) for number, name in ROWS]
    assert spider_result_eq(ROWS, swapped, order_matters=False)
    assert spider_result_eq(ROWS, swapped, order_matters=True)
    assert not bird_result_eq(ROWS, swapped)


def test_one_permutation_must_fit_every_row() -> None:
    # Each row matches once its values are sorted, but no single column order fits both rows.
    assert not spider_result_eq([(1, 2), (3, 4)], [(2, 1), (3, 4)], order_matters=False)


def test_nulls_compare_equal_only_to_nulls() -> None:
    assert spider_result_eq([(None, 1)], [(1, None)], order_matters=False)
    assert not spider_result_eq([(None,)], [(0,)], order_matters=False)
    assert not spider_result_eq([(None,)], [("",)], order_matters=False)


def test_floats_are_not_normalized() -> None:
    assert not spider_result_eq([(0.1 + 0.2,)], [(0.3,)], order_matters=False)
    assert not spider_result_eq([(2.5,)], [(2.50001,)], order_matters=False)
    assert spider_result_eq([(1,)], [(1.0,)], order_matters=False)  # Python equality
    assert not spider_result_eq([("1",)], [(1,)], order_matters=False)


def test_empty_and_shape_mismatches() -> None:
    assert spider_result_eq([], [], order_matters=True)
    assert not spider_result_eq([], [(1,)], order_matters=False)
    assert not spider_result_eq([(1, 2)], [(1,)], order_matters=False)
    assert bird_result_eq([], [])


def test_wide_results_use_the_pruned_permutation_search() -> None:
    gold = [(i, i * 10, f"n{i}", i % 2, None) for i in range(30)]
    permutation = [4, 2, 0, 3, 1]
    pred = [tuple(row[j] for j in permutation) for row in gold]
    random.Random(1).shuffle(pred)
    assert spider_result_eq(gold, pred, order_matters=False)
    pred[0] = (*pred[0][:-1], "changed")
    assert not spider_result_eq(gold, pred, order_matters=False)


def test_relaxed_match_forgives_extra_columns_on_either_side() -> None:
    narrow = [("a",), ("b",), ("b",)]
    wide = [(2, "b", 0.5), (1, "a", 0.5), (3, "b", 0.5)]
    assert relaxed_result_eq(narrow, wide)
    assert relaxed_result_eq(wide, narrow)
    assert not relaxed_result_eq([("a",), ("b",)], wide)
    assert not relaxed_result_eq([("a",), ("a",), ("b",)], wide)
    assert not spider_result_eq(narrow, wide, order_matters=False)


def test_relaxed_match_needs_rows_to_line_up() -> None:
    # Column values exist on the wide side but do not form the same rows.
    assert not relaxed_result_eq([(1, "x"), (2, "y")], [(1, "y", 0), (2, "x", 0)])
    assert relaxed_result_eq([(1, "x"), (2, "y")], [("y", 0, 2), ("x", 0, 1)])


def test_results_match_dispatches_on_mode() -> None:
    gold, pred = [(1,), (1,)], [(1,)]
    assert not results_match(gold, pred, mode=CompareMode.SPIDER, order_matters=False)
    assert results_match(gold, pred, mode="bird", order_matters=False)
    assert not results_match(gold, pred, mode=CompareMode.RELAXED, order_matters=False)


VALUES = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.25, -2.0]),
    st.sampled_from(["a", "b", "", "NULL"]),
)


@st.composite
def tables(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    width = draw(st.integers(1, 5))
    return draw(st.lists(st.tuples(*[VALUES] * width), min_size=0, max_size=12))


@settings(max_examples=150, deadline=None)
@given(rows=tables(), seed=st.integers(0, 10_000))
def test_spider_compare_is_invariant_under_column_permutation_and_row_shuffle(
    rows: list[tuple[Any, ...]], seed: int
) -> None:
    rng = random.Random(seed)
    width = len(rows[0]) if rows else 1
    permutation = list(range(width))
    rng.shuffle(permutation)
    permuted = [tuple(row[j] for j in permutation) for row in rows]
    assert spider_result_eq(rows, permuted, order_matters=True)
    shuffled = list(permuted)
    rng.shuffle(shuffled)
    assert spider_result_eq(rows, shuffled, order_matters=False)
    assert spider_result_eq(shuffled, rows, order_matters=False)
    assert relaxed_result_eq(rows, shuffled)


@settings(max_examples=150, deadline=None)
@given(rows=tables(), extra=VALUES)
def test_dropping_a_row_or_changing_a_value_is_detected(
    rows: list[tuple[Any, ...]], extra: Any
) -> None:
    if not rows:
        return
    assert not spider_result_eq(rows, rows[1:], order_matters=False)
    changed = [(*rows[0][:-1], ("changed", extra)), *rows[1:]]
    assert not spider_result_eq(rows, changed, order_matters=False)
