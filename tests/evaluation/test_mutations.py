"""Realistic mutations of a gold query, made on the syntax tree."""

from __future__ import annotations

import random

import sqlglot

from evaluation.mutations import KINDS, mutations
from schemagraph import Database
from schemagraph.sql import execute


def _by_kind(sql: str, db: Database, seed: int = 0) -> dict[str, str]:
    return {m.kind: m.sql for m in mutations(sql, db, random.Random(seed))}


def test_each_kind_changes_what_it_says(concert: Database) -> None:
    found = _by_kind(
        "SELECT DISTINCT T1.Name, max(T1.Age) FROM singer AS T1 JOIN singer_in_concert AS T2 "
        "ON T1.Singer_ID = T2.Singer_ID WHERE T1.Age > 20 AND T1.Country = 'France' "
        "GROUP BY T1.Name ORDER BY T1.Name ASC",
        concert,
    )
    assert set(found) == set(KINDS)
    assert (
        "T1.Age > 20" not in found["dropped condition"]
        or "'France'" not in found["dropped condition"]
    )
    assert "MIN(T1.Age)" in found["wrong aggregate"]
    assert "ON T1.Singer_ID = T2.Singer_ID" not in found["wrong join column"]
    assert "DISTINCT" not in found["missing distinct"]
    assert "DESC" in found["wrong order"]
    assert "_x" in found["unknown column"]
    for sql in found.values():
        sqlglot.parse_one(sql, read="sqlite")


def test_single_condition_is_dropped_with_its_clause(concert: Database) -> None:
    found = _by_kind("SELECT Name FROM singer WHERE Age > 30", concert)
    assert found["dropped condition"] == "SELECT Name FROM singer"
    assert "wrong join column" not in found and "wrong order" not in found


def test_count_distinct_loses_distinct_and_count_column_becomes_sum(concert: Database) -> None:
    found = _by_kind("SELECT count(DISTINCT Country) FROM singer", concert)
    assert found["missing distinct"] == "SELECT COUNT(Country) FROM singer"
    assert "wrong aggregate" not in found  # COUNT(DISTINCT x) is left alone
    found = _by_kind("SELECT count(Country) FROM singer", concert)
    assert found["wrong aggregate"] == "SELECT SUM(Country) FROM singer"


def test_mutations_run_except_the_unknown_column(concert: Database) -> None:
    assert concert.path is not None
    found = _by_kind("SELECT Name FROM singer WHERE Age > 30 ORDER BY Age DESC", concert)
    for kind, sql in found.items():
        assert execute(concert.path, sql).ok is (kind != "unknown column"), kind


def test_unparsable_sql_has_no_mutations(concert: Database) -> None:
    assert mutations("SELEC FROM (", concert, random.Random(0)) == []
