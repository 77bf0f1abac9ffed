"""Are two execution results the same answer? Three rules, as used by the benchmarks we follow.

- `spider_result_eq` — the Spider test-suite rule (`exec_eval.result_eq`): bag semantics (row
  multiplicity counts), columns may appear in any order (a column permutation is searched), rows
  must be in the same order only when the gold SQL has ORDER BY, and values are compared as
  Python compares them (no rounding, no string normalization; `1 == 1.0`). Both results empty
  is a match; a different row or column count is not. For more than three columns the official
  "shortcut" prunes the permutation space with 20 sampled rows of the prediction: a column pair
  is dropped when a sampled value does not occur in the gold column. Pruning only removes
  permutations that cannot match, so the outcome never depends on the sample.
- `bird_result_eq` — BIRD's rule: `set(pred) == set(gold)`; duplicates, row order are ignored and
  column order matters.
- `relaxed_result_eq` — test-case re-ranking (Li & Xie): the same rows, where one side's columns
  may be a subset of the other's (extra columns are forgiven), as a bag of rows.

Rows are sequences of SQLite values (None, int, float, str, bytes); they must be hashable.
"""

from __future__ import annotations

import enum
import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

Row = tuple[Any, ...]
Rows = Sequence[Sequence[Any]]

PERMUTATION_SAMPLE_ROWS = 20
"""Rows sampled by the official shortcut to prune column permutations (exec_eval.py)."""
FULL_SEARCH_MAX_COLUMNS = 3
"""Up to this many columns every permutation is tried without pruning (exec_eval.py)."""


class CompareMode(enum.StrEnum):
    """Which rule decides that two results match."""

    SPIDER = "spider"
    BIRD = "bird"
    RELAXED = "relaxed"


def results_match(
    gold: Rows, pred: Rows, *, mode: CompareMode | str = CompareMode.SPIDER, order_matters: bool
) -> bool:
    """Compare two results with the rule of `mode` (`order_matters` is ignored by BIRD)."""
    mode = CompareMode(mode)
    if mode is CompareMode.BIRD:
        return bird_result_eq(gold, pred)
    if mode is CompareMode.RELAXED:
        return relaxed_result_eq(gold, pred, order_matters=order_matters)
    return spider_result_eq(gold, pred, order_matters=order_matters)


def gold_orders_rows(gold_sql: str) -> bool:
    """Spider's test: row order matters when the gold SQL text contains `order by`.

    Kept textual, as in `exec_eval.eval_exec_match`, so that results agree with the official
    scores (an ORDER BY inside a subquery also counts).
    """
    return "order by" in gold_sql.lower()


def spider_result_eq(gold: Rows, pred: Rows, *, order_matters: bool) -> bool:
    """The Spider test-suite denotation equality (`result_eq`), see the module docstring."""
    first, second = _as_rows(gold), _as_rows(pred)
    if not first and not second:
        return True
    if len(first) != len(second):
        return False
    width = len(first[0])
    if len(second[0]) != width:
        return False
    if not _same_unordered_rows(first, second, order_matters):
        return False
    column_sets = [{row[i] for row in first} for i in range(width)]
    for permutation in _candidate_permutations(column_sets, second):
        permuted = [tuple(row[i] for i in permutation) for row in second]
        if order_matters:
            if first == permuted:
                return True
        elif set(first) == set(permuted) and Counter(first) == Counter(permuted):
            return True
    return False


def bird_result_eq(gold: Rows, pred: Rows) -> bool:
    """BIRD's execution match: the same set of rows (order, duplicates ignored)."""
    return set(_as_rows(pred)) == set(_as_rows(gold))


def relaxed_result_eq(first: Rows, second: Rows, *, order_matters: bool = False) -> bool:
    """Same rows, where the narrower result's columns may be a subset of the wider one's."""
    a, b = _as_rows(first), _as_rows(second)
    if not a and not b:
        return True
    if len(a) != len(b):
        return False
    narrow, wide = (a, b) if len(a[0]) <= len(b[0]) else (b, a)
    narrow_columns = [Counter(row[i] for row in narrow) for i in range(len(narrow[0]))]
    wide_columns = [Counter(row[i] for row in wide) for i in range(len(wide[0]))]
    candidates = [
        [j for j, wide_column in enumerate(wide_columns) if wide_column == column]
        for column in narrow_columns
    ]
    target: Any = narrow if order_matters else Counter(narrow)
    for mapping in _injective_assignments(candidates):
        projected = [tuple(row[j] for j in mapping) for row in wide]
        if (projected if order_matters else Counter(projected)) == target:
            return True
    return False


def _as_rows(rows: Rows) -> list[Row]:
    return [tuple(row) for row in rows]


def _unordered(row: Row) -> Row:
    """A row's values sorted by their text and type, as the official `unorder_row`."""
    return tuple(sorted(row, key=lambda value: str(value) + str(type(value))))


def _same_unordered_rows(first: list[Row], second: list[Row], order_matters: bool) -> bool:
    """The official quick rejection: compare rows with their values sorted within each row."""
    a = [_unordered(row) for row in first]
    b = [_unordered(row) for row in second]
    return a == b if order_matters else set(a) == set(b)


def _candidate_permutations(column_sets: list[set[Any]], pred: list[Row]) -> Iterator[Row]:
    """Column permutations worth testing: all for few columns, else the official pruning."""
    width = len(column_sets)
    allowed = [set(range(width)) for _ in range(width)]
    if width > FULL_SEARCH_MAX_COLUMNS:
        rng = random.Random(0)  # any sample gives the same answer; fixed for repeatability
        for _ in range(PERMUTATION_SAMPLE_ROWS):
            sampled = rng.choice(pred)
            for gold_column in range(width):
                for pred_column in list(allowed[gold_column]):
                    if sampled[pred_column] not in column_sets[gold_column]:
                        allowed[gold_column].discard(pred_column)
    return _injective_assignments([sorted(a) for a in allowed])


def _injective_assignments(candidates: list[list[int]]) -> Iterator[Row]:
    """Every tuple picking one candidate per position, with no candidate used twice."""
    chosen: list[int] = []
    used: set[int] = set()

    def extend(position: int) -> Iterator[Row]:
        if position == len(candidates):
            yield tuple(chosen)
            return
        for candidate in candidates[position]:
            if candidate in used:
                continue
            chosen.append(candidate)
            used.add(candidate)
            yield from extend(position + 1)
            used.discard(candidate)
            chosen.pop()

    return extend(0)
