"""The readability check: the issue's three warehouse questions fail it, each for what is wrong
with it; questions people write pass."""

from __future__ import annotations

import pytest

from indexer.synthesis.readability import (
    CODE,
    GRAMMAR,
    MAX_WORDS,
    PLACEHOLDER,
    REPEATED,
    RUN_ON,
    TIME,
    readability_problems,
    readable,
)

ISSUE = {
    "Among the functional statuses with more than 2 GEO US census places places wisconsins, "
    "which 3 functional statuses have the fewest with a given state fips code?": {
        PLACEHOLDER,
        REPEATED,
    },
    "Among the types with an average created at below 10, what is the type whose month 202306 "
    "have the largest mean created at?": {CODE, TIME},
    "Among the where the session cames from with at least 2 web analytics ga sessions, what is "
    "the total?": {GRAMMAR},
}


@pytest.mark.parametrize("question", sorted(ISSUE))
def test_the_issues_questions_fail_for_what_is_wrong(question: str) -> None:
    assert ISSUE[question] <= set(readability_problems(question))


@pytest.mark.parametrize(
    "question",
    [
        "What is the total revenue of products in July 2017?",
        "Which of the singers is older than 30?",
        "How many sessions came from each traffic source in 2017?",
        "List the top 3 products by total product revenue in the 2nd quarter.",
        "Find the names of stadiums named 'Hampden_Park' with a capacity above 100000.",
        "What is the average time on site of sessions between 2016-08-01 and 2016-08-31?",
        "Show the IDs and names of the 5 oldest singers.",
    ],
)
def test_questions_people_write_pass(question: str) -> None:
    assert readability_problems(question) == ()
    assert readable(question)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Show the MONTH___202306 of each type.", CODE),
        ("What is the B01001_003E of the census tracts?", CODE),
        ("List the hits.product of every session.", CODE),
        ("What is the highest productRevenue?", CODE),
        ("Find the average date of orders.", TIME),
        ("Show the name of the the singers.", REPEATED),
        ("What are the places places of Wisconsin?", REPEATED),
        ("Which venues have the with the most concerts?", GRAMMAR),
        ("How many singers with a given country are there?", PLACEHOLDER),
    ],
)
def test_each_kind_is_named(question: str, kind: str) -> None:
    assert kind in readability_problems(question)


def test_run_on_is_longer_than_the_limit() -> None:
    clauses = ["the name", "the age", "the country", "the city", "the height", "the weight"]
    clauses += ["the rank", "the team", "the song", "the year", "the stadium", "the capacity"]
    short = "What are " + ", ".join(clauses[:5]) + " of singers?"
    long = "What are " + ", ".join(clauses) + " of the singers who sang here in 2014 or in 2015?"
    assert len(short.split()) <= MAX_WORDS < len(long.split())
    assert RUN_ON not in readability_problems(short)
    assert RUN_ON in readability_problems(long)
