"""Validation of synthesized SQL against the catalog and the real database."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from indexer.validate import validate_sql
from schemagraph import Database, load_spider


@pytest.fixture(scope="module")
def pets(sample_dir: Path) -> Database:
    return load_spider(sample_dir).database("pets_1")


def test_valid_join_reports_its_tables_in_catalog_spelling(pets: Database) -> None:
    result = validate_sql(
        pets,
        "SELECT count(*) FROM student AS T1 JOIN has_pet AS T2 ON T1.stuid = T2.stuid "
        "WHERE T1.age > 20",
    )
    assert result.ok, result.reason
    assert result.tables == ("Student", "Has_Pet")


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT name FROM Dogs", "unknown table 'Dogs'"),
        ("SELECT nickname FROM Pets", "no such column: nickname"),
        ("SELECT PetType FROM Pets WHERE", "parse"),
        ("DELETE FROM Pets", "refused"),
        ("SELECT 1", "uses no table"),
        ("SELECT PetType FROM Pets WHERE pet_age > 'x' GROUP BY PetID HAVING sum(", "parse"),
    ],
)
def test_invalid_sql_is_rejected_with_a_reason(pets: Database, sql: str, reason: str) -> None:
    result = validate_sql(pets, sql)
    assert not result.ok
    assert reason in result.reason


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT nickname FROM Pets",
        "SELECT T1.pettype FROM Pets AS T1 JOIN Has_Pet AS T2 ON T1.petid = T2.nickname",
        'SELECT PetType FROM Pets WHERE "nickname" = 1',  # SQLite: a string, where no column
        "SELECT PetType FROM Pets ORDER BY `nick name`",
    ],
)
@pytest.mark.parametrize("with_data", [True, False])
def test_unknown_columns_are_rejected_with_or_without_data(
    pets: Database, sql: str, with_data: bool
) -> None:
    db = pets if with_data else replace(pets, path=None)
    result = validate_sql(db, sql)
    assert not result.ok
    assert "nickname" in result.reason or "nick name" in result.reason, result.reason


def test_quoted_names_that_exist_are_valid(pets: Database) -> None:
    assert validate_sql(pets, 'SELECT "PetType" FROM "Pets" WHERE `weight` > 1').ok


def test_sql_that_fails_at_run_time_is_rejected(pets: Database) -> None:
    # valid against the schema, but SQLite has no such function
    result = validate_sql(pets, "SELECT median(weight) FROM Pets")
    assert not result.ok and "fails to run" in result.reason


def test_without_data_only_the_schema_is_checked(pets: Database) -> None:
    schema_only = replace(pets, path=None)
    assert validate_sql(schema_only, "SELECT median(weight) FROM Pets").ok


def test_ctes_are_not_mistaken_for_tables(pets: Database) -> None:
    sql = "WITH old AS (SELECT * FROM Pets WHERE pet_age > 2) SELECT count(*) FROM old"
    result = validate_sql(pets, sql)
    assert result.ok, result.reason
    assert result.tables == ("Pets",)


def test_the_synthesized_records_reward_is_the_reward_of_their_sql(sample_dir: Path) -> None:
    """The ICRL loop scores each attempt from the tree validation parsed (one parse per
    attempt): the same reward as parsing the SQL anew, for every record of a real build."""
    from indexer import make_chain_runner, make_feedback, make_synthesizer
    from indexer.synthesis.reward import reward
    from schemagraph import build_graph, enumerate_traversals, load_catalog, sample_database

    catalog = load_catalog([f"spider:{sample_dir}"])
    run = make_chain_runner(
        make_synthesizer("template", None), make_feedback("rule", None), chains=3, iterations=2
    )
    checked = 0
    for traversal in enumerate_traversals(build_graph(catalog))[:40]:
        db = catalog.database(traversal.db_id)
        for record in run(db, traversal, sample_database(db, seed=0), 0):
            if record.get("question"):
                assert record["reward"] == reward(record["sql"]).total
                assert record["rewards"][record["iteration"]] == record["reward"]
                checked += 1
    assert checked > 60
