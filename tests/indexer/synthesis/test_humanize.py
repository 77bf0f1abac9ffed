"""Schema names as words people use."""

from __future__ import annotations

import pytest

from schemagraph.humanize import (
    article,
    entity,
    humanize,
    join_words,
    plural,
    possessive,
    singular,
    split_words,
)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("StuID", "student ID"),
        ("AirportCode", "airport code"),
        ("LName", "last name"),
        ("Fname", "first name"),
        ("FlightNo", "flight number"),
        ("dept_store_chain_name", "department store chain name"),
        ("total_amt", "total amount"),
        ("order_qty", "order quantity"),
        ("emp_dob", "employee date of birth"),
        ("Song_release_year", "song release year"),
        ("abandoned_yn", "abandoned"),
        ("MPG", "MPG"),
        ("GEOGRAPHIC", "geographic"),
        ("Home Town", "home town"),
        ("num_of_employees", "number of employees"),
        ("cust_sgmt_cd", "customer segment code"),
    ],
)
def test_humanize_splits_and_expands(name: str, words: str) -> None:
    assert humanize(name) == words


def test_a_one_letter_word_has_no_plural() -> None:
    assert plural(humanize("Class_A")) == "class a"


def test_split_words_keeps_acronyms_whole() -> None:
    assert split_words("CountryAbbrev") == ["Country", "Abbrev"]
    assert split_words("HTMLParser_id") == ["HTML", "Parser", "id"]


@pytest.mark.parametrize(
    ("table", "nouns"),
    [
        ("Dogs", ("dog", "dogs")),
        ("singer", ("singer", "singers")),
        ("cars_data", ("car", "cars")),
        ("model_list", ("model", "models")),
        ("Has_Pet", ("pet", "pets")),
        ("singer_in_concert", ("singer in concert", "singers in concert")),
        ("Staff", ("staff", "staff")),
        ("Addresses", ("address", "addresses")),
        ("countries", ("country", "countries")),
        ("Sizes", ("size", "sizes")),
        ("people", ("person", "people")),
        ("Student_Enrolment_Courses", ("student enrolment course", "student enrolment courses")),
    ],
)
def test_entity_nouns(table: str, nouns: tuple[str, str]) -> None:
    assert entity(table) == nouns


def test_inflection_round_trips_common_nouns() -> None:
    for word in ("match", "box", "city", "class", "status", "movie", "person", "key"):
        assert singular(plural(word)) == word


def test_articles_possessives_and_lists() -> None:
    assert article("owner") == "an"
    assert article("university") == "a"
    assert article("MPG") == "an"
    assert possessive("singer") == "singer's"
    assert possessive("students") == "students'"
    assert join_words(["name", "age", "country"]) == "name, age and country"
    assert join_words(["a", "b"], "or") == "a or b"
