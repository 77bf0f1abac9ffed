"""The check that a synthetic question says what its SQL does: the issue's bad pairs fail, their
honest rewordings pass, each part of a query left out of its question is named, and the
template synthesizer's questions pass it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.synthesis.faithful import says_what_sql_does
from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import (
    Catalog,
    Column,
    Database,
    Table,
    build_graph,
    enumerate_traversals,
    load_spider,
    sample_database,
)


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture(scope="module")
def concerts(catalog: Catalog) -> Database:
    return catalog.database("concert_singer")


def _fails(question: str, sql: str, db: Database) -> list[str]:
    verdict = says_what_sql_does(question, sql, db)
    assert not verdict.ok, f"{question!r} should not pass for {sql}"
    return list(verdict.missing)


def _passes(question: str, sql: str, db: Database) -> None:
    verdict = says_what_sql_does(question, sql, db)
    assert verdict.ok, verdict.missing


# --- the pairs ------------------------------------------------------------------------

LOWEST_AGE = (
    "SELECT Country, AVG(Age) FROM singer "
    "WHERE Song_release_year = (SELECT MIN(Song_release_year) FROM singer) "
    "GROUP BY Country ORDER BY AVG(Age) ASC LIMIT 1"
)


def test_a_filter_the_question_leaves_out_fails_and_is_named(concerts: Database) -> None:
    missing = _fails(
        "What is the country whose singers have the lowest average age?", LOWEST_AGE, concerts
    )
    assert any(m.startswith("WHERE Song_release_year = (SELECT MIN") for m in missing), missing


def test_the_same_query_said_in_full_passes(concerts: Database) -> None:
    _passes(
        "What is the country whose singers have the lowest average age among singers whose "
        "song release year is the earliest?",
        LOWEST_AGE,
        concerts,
    )


STADIUM = (
    "SELECT T2.Name, COUNT(*) FROM concert AS T1 JOIN stadium AS T2 "
    "ON T1.Stadium_ID = T2.Stadium_ID {where}GROUP BY T1.Stadium_ID ORDER BY COUNT(*) DESC LIMIT 1"
)


def test_which_stadium_hosted_the_most_concerts(concerts: Database) -> None:
    question = "Which stadium hosted the most concerts?"
    _passes(question, STADIUM.format(where=""), concerts)
    where = "WHERE T1.Year = (SELECT MIN(Year) FROM concert) "
    missing = _fails(question, STADIUM.format(where=where), concerts)
    assert [m.split(":")[0] for m in missing] == [
        "WHERE T1.Year = (SELECT MIN(Year) FROM concert)"
    ] * len(missing)


def test_a_column_with_a_description_is_said_by_it_not_by_its_cryptic_name() -> None:
    db = Database(
        "shop",
        (
            Table(
                "customers",
                (
                    Column("id", "integer", primary_key=True),
                    Column("cust_sgmt_cd", "text", description="Customer segment code"),
                ),
            ),
        ),
    )
    sql = "SELECT COUNT(*) FROM customers WHERE cust_sgmt_cd = 'RETAIL'"
    _fails("How many customers have sgmt cd RETAIL?", sql, db)
    _passes("How many customers have customer segment code RETAIL?", sql, db)
    distinct = "SELECT DISTINCT cust_sgmt_cd FROM customers"
    _fails("What are the different sgmt cds of customers?", distinct, db)
    _passes("What are the different customer segment codes of customers?", distinct, db)


# --- each part of a query ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "sql", "part"),
    [
        ("How many singers are there?", "SELECT COUNT(*) FROM singer WHERE Age > 30", "WHERE"),
        (
            "How many singers are older than 30?",
            "SELECT COUNT(*) FROM singer WHERE Age < 30",
            "WHERE",
        ),
        ("List the names of singers.", "SELECT AVG(Age) FROM singer", "AGGREGATE"),
        ("What is the age of singers?", "SELECT MAX(Age) FROM singer", "AGGREGATE"),
        (
            "List the countries of singers and their average age.",
            "SELECT Country, AVG(Age) FROM singer GROUP BY Country",
            "GROUP",
        ),
        (
            "Which countries have singers?",
            "SELECT Country FROM singer GROUP BY Country HAVING COUNT(*) > 2",
            "HAVING",
        ),
        (
            "What are the names of the 3 singers with the lowest age?",
            "SELECT Name FROM singer ORDER BY Age DESC LIMIT 3",
            "ORDER",
        ),
        (
            "What are the names of the singers with the highest age?",
            "SELECT Name FROM singer ORDER BY Age DESC LIMIT 3",
            "LIMIT",
        ),
        ("List the names of singers.", "SELECT Name FROM singer ORDER BY Age", "ORDER"),
        (
            "List the names of singers in order of age.",
            "SELECT Name FROM singer ORDER BY Age DESC",
            "ORDER",
        ),
        ("List the countries of singers.", "SELECT DISTINCT Country FROM singer", "DISTINCT"),
        (
            "What are the names of singers from France or Spain?",
            "SELECT Name FROM singer WHERE Country NOT IN ('France', 'Spain')",
            "WHERE",
        ),
        (
            "What are the names of singers whose name contains 'Jo'?",
            "SELECT Name FROM singer WHERE Name NOT LIKE '%Jo%'",
            "WHERE",
        ),
        (
            "What are the names of singers with age between 20 and 30?",
            "SELECT Name FROM singer WHERE Age BETWEEN 20 AND 40",
            "WHERE",
        ),
        (
            "What are the names of singers?",
            "SELECT Name FROM singer WHERE Age > (SELECT AVG(Age) FROM singer)",
            "WHERE",
        ),
        (
            "What are the names of singers?",
            "SELECT Name FROM singer WHERE Singer_ID NOT IN (SELECT Singer_ID FROM "
            "singer_in_concert)",
            "SUBQUERY",
        ),
        (
            "What are the names of singers that have no concerts in 2014?",
            "SELECT Name FROM singer WHERE Singer_ID NOT IN (SELECT T1.Singer_ID FROM "
            "singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_ID = T2.concert_ID "
            "WHERE T2.Year = 2015)",
            "SUBQUERY",
        ),
    ],
)
def test_the_part_left_out_is_named(concerts: Database, question: str, sql: str, part: str) -> None:
    missing = _fails(question, sql, concerts)
    assert any(m.startswith(part) for m in missing), missing


@pytest.mark.parametrize(
    ("question", "sql"),
    [
        ("How many singers are older than 30?", "SELECT COUNT(*) FROM singer WHERE Age > 30"),
        (
            "What is the average age of singers from France?",
            "SELECT AVG(Age) FROM singer WHERE Country = 'France'",
        ),
        (
            "Show each country and the number of singers.",
            "SELECT Country, COUNT(*) FROM singer GROUP BY Country",
        ),
        (
            "Which countries have more than 2 singers?",
            "SELECT Country FROM singer GROUP BY Country HAVING COUNT(*) > 2",
        ),
        (
            "What are the names of the 3 oldest singers?",
            "SELECT Name FROM singer ORDER BY Age DESC LIMIT 3",
        ),
        (
            "List the names of singers in descending order of age.",
            "SELECT Name FROM singer ORDER BY Age DESC",
        ),
        (
            "What are the names of singers that are not from France or Spain?",
            "SELECT Name FROM singer WHERE Country NOT IN ('France', 'Spain')",
        ),
        (
            "What are the names of singers with above-average age?",
            "SELECT Name FROM singer WHERE Age > (SELECT AVG(Age) FROM singer)",
        ),
        (
            "What are the names of singers that have no concerts in 2015?",
            "SELECT Name FROM singer WHERE Singer_ID NOT IN (SELECT T1.Singer_ID FROM "
            "singer_in_concert AS T1 JOIN concert AS T2 ON T1.concert_ID = T2.concert_ID "
            "WHERE T2.Year = 2015)",
        ),
        (
            "List the different countries of male singers.",
            "SELECT DISTINCT Country FROM singer WHERE Is_male = 'T'",
        ),
    ],
)
def test_a_question_that_says_it_all_passes(concerts: Database, question: str, sql: str) -> None:
    _passes(question, sql, concerts)


def test_each_word_must_qualify_its_own_part_of_the_query(concerts: Database) -> None:
    """A superlative, comparison or aggregate word elsewhere in the question does not say this
    part: "lowest average age" does not say ORDER BY AVG(Age) DESC because "highest" is said
    of the release year."""
    sql = (
        "SELECT Country, AVG(Age) FROM singer "
        "WHERE Song_release_year = (SELECT MAX(Song_release_year) FROM singer) "
        "GROUP BY Country HAVING COUNT(*) > 2 ORDER BY AVG(Age) {direction} LIMIT 1"
    )
    question = (
        "Among the countries with more than 2 singers, which country has the {which} average "
        "age among singers with the highest song release year?"
    )
    _passes(question.format(which="highest"), sql.format(direction="DESC"), concerts)
    missing = _fails(question.format(which="lowest"), sql.format(direction="DESC"), concerts)
    assert any(m.startswith("ORDER AVG(Age) DESC") for m in missing), missing


def test_sql_that_is_not_one_select_fails(concerts: Database) -> None:
    assert not says_what_sql_does("How many singers?", "SELECT COUNT(*) FROM", concerts).ok
    union = "SELECT Name FROM singer UNION SELECT Name FROM stadium"
    assert not says_what_sql_does("List the names.", union, concerts).ok


# --- properties ---------------------------------------------------------------------------------

_OPS = {">": "greater than", "<": "less than", ">=": "at least", "<=": "at most"}


@settings(max_examples=60, deadline=None)
@given(
    column=st.sampled_from(["Capacity", "Highest", "Lowest", "Average"]),
    op=st.sampled_from(sorted(_OPS)),
    value=st.integers(min_value=0, max_value=100_000),
    drop=st.sampled_from(["column", "comparison", "value", "nothing"]),
)
def test_a_comparison_needs_its_column_its_words_and_its_value(
    concerts: Database, column: str, op: str, value: int, drop: str
) -> None:
    parts = {"column": column.lower(), "comparison": _OPS[op], "value": str(value)}
    if drop != "nothing":
        parts[drop] = ""
    question = f"How many stadiums have a {parts['column']} {parts['comparison']} {parts['value']}?"
    sql = f"SELECT COUNT(*) FROM stadium WHERE {column} {op} {value}"
    assert says_what_sql_does(question, sql, concerts).ok == (drop == "nothing")


@settings(max_examples=40, deadline=None)
@given(question=st.text(max_size=200), sql=st.text(max_size=200))
def test_any_text_gets_a_verdict_not_an_exception(
    concerts: Database, question: str, sql: str
) -> None:
    says_what_sql_does(question, sql, concerts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000), index=st.integers(min_value=0))
def test_template_questions_say_what_their_sql_does(
    catalog: Catalog, seed: int, index: int
) -> None:
    """Nearly every question the template synthesizer writes passes (it rephrases the rest,
    and the build drops what is left); and deleting a value the SQL filters on from a question
    that passes makes it fail."""
    traversals = _traversals(catalog)
    traversal = traversals[index % len(traversals)]
    db = catalog.database(traversal.db_id)
    request = SynthesisRequest(db, traversal, _sample(catalog, db.id), count=4, seed=seed)
    pairs = TemplateSynthesizer().synthesize(request)
    verdicts = [says_what_sql_does(p.question, p.sql, db) for p in pairs]
    assert sum(not v.ok for v in verdicts) <= 1, [
        (p, v.missing) for p, v in zip(pairs, verdicts, strict=True)
    ]
    for pair, verdict in zip(pairs, verdicts, strict=True):
        quoted = re.findall(r"= '([A-Za-z]{4,})'", pair.sql)
        if verdict.ok and quoted and quoted[0] in pair.question:
            cut = pair.question.replace(f"'{quoted[0]}'", "").replace(quoted[0], "")
            assert not says_what_sql_does(cut, pair.sql, db).ok, (cut, pair.sql)


_TRAVERSALS: dict[int, list] = {}
_SAMPLES: dict[str, object] = {}


def _traversals(catalog: Catalog) -> list:
    if id(catalog) not in _TRAVERSALS:
        _TRAVERSALS[id(catalog)] = enumerate_traversals(build_graph(catalog))
    return _TRAVERSALS[id(catalog)]


def _sample(catalog: Catalog, db_id: str):  # type: ignore[no-untyped-def]
    if db_id not in _SAMPLES:
        _SAMPLES[db_id] = sample_database(catalog.database(db_id))
    return _SAMPLES[db_id]
