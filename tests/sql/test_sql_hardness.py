"""Spider hardness: hand-worked examples of each counting rule, and the official dev split."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from schemagraph.sql import (
    Hardness,
    HardnessCounts,
    SqlParseError,
    classify_hardness,
    hardness_counts,
    spider_hardness,
)


def counts(sql: str) -> tuple[int, int, int]:
    c = hardness_counts(sql)
    return c.component1, c.component2, c.others


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # component 1: WHERE, GROUP BY, ORDER BY, LIMIT, one per extra table unit, OR, LIKE
        ("SELECT name FROM singer", (0, 0, 0)),
        ("SELECT name FROM singer WHERE age > 20", (1, 0, 0)),
        ("SELECT name FROM singer ORDER BY age LIMIT 1", (2, 0, 0)),
        ("SELECT country FROM singer GROUP BY country", (1, 0, 0)),
        ("SELECT T1.a FROM x AS T1 JOIN y AS T2 ON T1.id = T2.id JOIN z ON T2.k = z.k", (2, 0, 0)),
        ("SELECT name FROM singer WHERE age = 1 OR age = 2 OR age = 3", (3, 0, 1)),
        ("SELECT name FROM singer WHERE name LIKE '%a%'", (2, 0, 0)),
        ("SELECT name FROM singer WHERE name NOT LIKE '%a%'", (2, 0, 0)),
        ("SELECT a FROM (SELECT a FROM t) JOIN u", (1, 0, 0)),  # FROM subquery: a table unit
        # component 2: subqueries used as condition values, and a set operation at the top
        ("SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)", (1, 1, 0)),
        ("SELECT a FROM t WHERE b IN (SELECT b FROM u) AND c IN (SELECT c FROM v)", (1, 2, 1)),
        ("SELECT a FROM t UNION SELECT b FROM u", (0, 1, 0)),
        ("SELECT a FROM t UNION SELECT b FROM u EXCEPT SELECT c FROM v", (0, 1, 0)),
        ("SELECT a, (SELECT max(b) FROM u) FROM t", (0, 0, 1)),  # SELECT-list subquery: none
        # set operations: a trailing ORDER BY / LIMIT belongs to the right-hand query
        ("SELECT a FROM t UNION SELECT b FROM u ORDER BY a LIMIT 1", (0, 1, 0)),
        # others: >1 aggregation, >1 SELECT item, >1 WHERE condition, >1 GROUP BY item
        ("SELECT max(age), min(age) FROM singer", (0, 0, 2)),
        ("SELECT name, age FROM singer", (0, 0, 1)),
        ("SELECT name FROM singer WHERE age > 1 AND age < 9", (1, 0, 1)),
        ("SELECT a FROM t GROUP BY a, b", (1, 0, 1)),
        ("SELECT count(*) FROM t GROUP BY a ORDER BY count(*) DESC", (2, 0, 1)),
        ("SELECT a FROM t ORDER BY sum(b) + max(c)", (1, 0, 1)),
        # official quirks kept: negated WHERE conditions count as aggregations ...
        ("SELECT a FROM t WHERE b NOT IN (SELECT b FROM u) AND c NOT LIKE 'x'", (2, 1, 2)),
        # ... HAVING's aggregates do not, but each of its AND/OR connectives does ...
        ("SELECT a FROM t GROUP BY a HAVING count(*) > 1", (1, 0, 0)),
        ("SELECT a FROM t GROUP BY a HAVING count(*) > 1 AND sum(b) > 2 OR max(c) = 1", (2, 0, 1)),
        # ... and OR after a column-valued comparison is swallowed by the official parser.
        ("SELECT a FROM x JOIN y ON x.k = y.k OR x.k = y.j", (1, 0, 0)),
        ("SELECT a FROM x JOIN y ON x.k = 1 OR x.k = y.j", (2, 0, 0)),
        ("SELECT a FROM t WHERE t.b = t.c OR t.d = 1 AND t.e = 2", (1, 0, 1)),
        ('SELECT a FROM t WHERE b = "x" OR c = 1', (2, 0, 1)),  # "x" is a string in Spider
    ],
)
def test_counting_rules(sql: str, expected: tuple[int, int, int]) -> None:
    assert counts(sql) == expected


@pytest.mark.parametrize(
    ("sql", "level"),
    [
        ("SELECT count(*) FROM singer", Hardness.EASY),
        ("SELECT name FROM singer WHERE age > 20", Hardness.EASY),
        ("SELECT name, age FROM singer WHERE age > 20", Hardness.MEDIUM),
        ("SELECT T1.a FROM x AS T1 JOIN y AS T2 ON T1.id = T2.id WHERE T2.b = 1", Hardness.MEDIUM),
        ("SELECT name FROM singer WHERE age > 20 ORDER BY age LIMIT 1", Hardness.HARD),
        ("SELECT a FROM t INTERSECT SELECT a FROM u", Hardness.HARD),
        ("SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)", Hardness.HARD),
        ("SELECT name, age FROM singer WHERE age > (SELECT avg(age) FROM singer)", Hardness.EXTRA),
        ("SELECT a FROM t WHERE b = 1 OR c LIKE 'x' ORDER BY a LIMIT 3", Hardness.EXTRA),
    ],
)
def test_levels(sql: str, level: Hardness) -> None:
    assert spider_hardness(sql) is level


@pytest.mark.parametrize(
    ("c1", "c2", "others", "level"),
    [
        (1, 0, 0, Hardness.EASY),
        (1, 0, 2, Hardness.MEDIUM),
        (2, 0, 1, Hardness.MEDIUM),
        (2, 0, 2, Hardness.EXTRA),
        (2, 0, 3, Hardness.HARD),
        (3, 0, 2, Hardness.HARD),
        (4, 0, 0, Hardness.EXTRA),
        (0, 1, 0, Hardness.HARD),
        (1, 1, 1, Hardness.EXTRA),
        (0, 2, 0, Hardness.EXTRA),
    ],
)
def test_thresholds(c1: int, c2: int, others: int, level: Hardness) -> None:
    assert classify_hardness(HardnessCounts(c1, c2, others)) is level


def test_unparsable_sql_is_a_user_error() -> None:
    with pytest.raises(SqlParseError):
        spider_hardness("SELECT FROM WHERE (")
    with pytest.raises(SqlParseError, match="one statement"):
        spider_hardness("SELECT 1; SELECT 2")


# --- the official split, checked against Spider dev's own parsed `sql` fields -------------

WHERE_OP_LIKE = 9  # index of 'like' in process_sql.WHERE_OPS


def official_counts(parsed: dict[str, Any]) -> tuple[int, int, int]:
    """The official counts, from the `sql` field Spider ships (its parser's output)."""
    conditions = [parsed["from"]["conds"], parsed["where"], parsed["having"]]
    units = [unit for cond in conditions for unit in cond[::2]]
    connectives = [c for cond in conditions for c in cond[1::2]]
    c1 = sum(
        (
            bool(parsed["where"]),
            bool(parsed["groupBy"]),
            bool(parsed["orderBy"]),
            parsed["limit"] is not None,
            max(len(parsed["from"]["table_units"]) - 1, 0),
            connectives.count("or"),
            sum(1 for unit in units if unit[1] == WHERE_OP_LIKE),
        )
    )
    nested = sum(isinstance(v, dict) for unit in units for v in (unit[3], unit[4]))
    nested += sum(parsed[op] is not None for op in ("intersect", "except", "union"))
    order_units = parsed["orderBy"][1] if parsed["orderBy"] else []
    aggregations = (
        sum(1 for item in parsed["select"][1] if item[0] != 0)
        + sum(1 for unit in parsed["where"][::2] if unit[0])
        + sum(1 for col in parsed["groupBy"] if col[0] != 0)
        + sum(1 for val in order_units for col in val[1:] if col and col[0] != 0)
        + sum(1 for element in parsed["having"] if element[0] != 0)
    )
    others = sum(
        (
            aggregations > 1,
            len(parsed["select"][1]) > 1,
            len(parsed["where"]) > 1,
            len(parsed["groupBy"]) > 1,
        )
    )
    return c1, nested, others


@pytest.fixture(scope="module")
def dev(spider_dir: Path) -> list[dict[str, Any]]:
    return json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))


@pytest.mark.spider
def test_reproduces_the_official_split_of_spider_dev(dev: list[dict[str, Any]]) -> None:
    split = Counter(spider_hardness(item["query"]).value for item in dev)
    assert split == {"easy": 248, "medium": 446, "hard": 174, "extra": 166}


@pytest.mark.spider
def test_counts_equal_the_official_counts_for_every_dev_question(
    dev: list[dict[str, Any]],
) -> None:
    mismatches = [
        (item["query"], counts(item["query"]), official_counts(item["sql"]))
        for item in dev
        if counts(item["query"]) != official_counts(item["sql"])
    ]
    assert mismatches == []
