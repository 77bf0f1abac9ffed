"""How plans are written as SQL: negated IN and BETWEEN the way people write them."""

from __future__ import annotations

import pytest
from sqlglot import parse_one
from sqlglot.dialects.sqlite import SQLite

from indexer.synthesis.query_plans import _negations_written


def written(sql: str) -> str:
    generator = SQLite.Generator(dialect="sqlite")
    return str(generator.generate(_negations_written(parse_one(sql, read="sqlite"), generator)))


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "SELECT a FROM t WHERE NOT a IN (1, 2) AND NOT b BETWEEN 1 AND 3",
            "SELECT a FROM t WHERE a NOT IN (1, 2) AND b NOT BETWEEN 1 AND 3",
        ),
        (
            "SELECT a FROM t WHERE NOT a IN (SELECT b FROM u WHERE NOT c IN ('x'))",
            "SELECT a FROM t WHERE a NOT IN (SELECT b FROM u WHERE c NOT IN ('x'))",
        ),
        ("SELECT a FROM t WHERE NOT a LIKE 'x%'", "SELECT a FROM t WHERE NOT a LIKE 'x%'"),
        ("SELECT a FROM t WHERE NOT (a = 1)", "SELECT a FROM t WHERE NOT (a = 1)"),
    ],
)
def test_negations_are_written_as_people_write_them_and_mean_the_same(
    sql: str, expected: str
) -> None:
    text = written(sql)

    assert text == expected
    assert parse_one(text, read="sqlite") == parse_one(sql, read="sqlite")
