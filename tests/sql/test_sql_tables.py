"""Tables read by a query, and the column names it uses, from the syntax tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemagraph.sql import SqlParseError, columns_in_sql, tables_in_sql


@pytest.mark.parametrize(
    ("sql", "tables"),
    [
        ("SELECT name FROM singer", {"singer"}),
        (
            "SELECT T1.a FROM Singer AS T1 JOIN concert AS T2 ON T1.id = T2.id",
            {"singer", "concert"},
        ),
        (
            "SELECT a FROM t WHERE b IN (SELECT b FROM u WHERE c > (SELECT 1 FROM v))",
            {"t", "u", "v"},
        ),
        ("SELECT a FROM t UNION SELECT a FROM u", {"t", "u"}),
        ("WITH x AS (SELECT a FROM t) SELECT a FROM x JOIN u", {"t", "u"}),
        ("WITH t AS (SELECT a FROM t) SELECT a FROM t", {"t"}),
        ("SELECT s.a FROM (SELECT a FROM t) AS s", {"t"}),
        ('SELECT a FROM main."Order Items"', {"order items"}),
        ("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.k = t.k)", {"t", "u"}),
        ("SELECT order_date FROM orders", {"orders"}),
        ("SELECT 1", set()),
    ],
)
def test_tables_in_sql(sql: str, tables: set[str]) -> None:
    assert tables_in_sql(sql) == frozenset(tables)


def test_unparsable_sql_is_a_user_error() -> None:
    with pytest.raises(SqlParseError):
        tables_in_sql("SELECT FROM WHERE (")


@pytest.mark.parametrize(
    ("sql", "columns"),
    [
        ("SELECT count(*) FROM singer", set()),
        (
            "SELECT T1.Name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid",
            {"name", "id", "sid"},
        ),
        (
            'WITH c AS (SELECT a FROM t) SELECT c.a, "Net Sales" FROM c '
            "WHERE x IN (SELECT y FROM u)",
            {"a", "net sales", "x", "y"},
        ),
        ("SELECT a FROM t GROUP BY b HAVING max(c) > 1 ORDER BY d", {"a", "b", "c", "d"}),
    ],
)
def test_columns_in_sql(sql: str, columns: set[str]) -> None:
    assert columns_in_sql(sql) == frozenset(columns)
    with pytest.raises(SqlParseError):
        columns_in_sql("SELECT FROM WHERE (")


NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_ ]{0,12}", fullmatch=True)


@given(st.lists(NAMES, min_size=1, max_size=6), st.sampled_from(["", "t.", "T1."]))
def test_every_quoted_column_name_is_found(names: list[str], prefix: str) -> None:
    quoted = [prefix + '"' + name + '"' for name in names]
    sql = f"SELECT {', '.join(quoted)} FROM t AS T1 WHERE {quoted[0]} IS NOT NULL"
    assert columns_in_sql(sql) == {name.lower() for name in names}


def _official_tables(parsed: dict[str, Any], names: list[str]) -> set[str]:
    """Tables in a Spider `sql` field: table units, nested conditions and set operations."""
    found: set[str] = set()
    for kind, value in parsed["from"]["table_units"]:
        found |= {names[value]} if kind == "table_unit" else _official_tables(value, names)
    conditions = parsed["from"]["conds"][::2] + parsed["where"][::2] + parsed["having"][::2]
    for unit in conditions:
        for value in (unit[3], unit[4]):
            if isinstance(value, dict):
                found |= _official_tables(value, names)
    for op in ("intersect", "union", "except"):
        if parsed[op]:
            found |= _official_tables(parsed[op], names)
    return found


@pytest.mark.spider
def test_matches_the_tables_of_spider_dev_parses(spider_dir: Path) -> None:
    dev = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    schemas = json.loads((spider_dir / "tables.json").read_text(encoding="utf-8"))
    names = {s["db_id"]: [n.lower() for n in s["table_names_original"]] for s in schemas}
    mismatches = [
        item["query"]
        for item in dev
        if tables_in_sql(item["query"]) != _official_tables(item["sql"], names[item["db_id"]])
    ]
    assert mismatches == []
