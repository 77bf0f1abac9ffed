"""The words of schema names, as the table documents, the synthesizer, the Spider source and the
prompt split them (`schemagraph.name_words`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from schemagraph.name_words import name_parts, plain_words, spaced_words

NAMES = st.text(alphabet=st.sampled_from(list("aAbBzZeEiIxX019_- ./ßÉ名")), max_size=24)


def test_spaced_words_split_snake_kebab_and_camel_case_keeping_acronyms() -> None:
    assert spaced_words("StuID") == "stu id"
    assert spaced_words("cars_data") == "cars data"
    assert spaced_words("HTMLParser-id") == "html parser id"
    assert spaced_words("Address2Line") == "address2 line"
    assert spaced_words("  T_bil  ") == "t bil"


def test_name_parts_keep_case_and_put_digits_apart() -> None:
    assert name_parts("HomeTeam2") == ["Home", "Team", "2"]
    assert name_parts("FTHGames") == ["FTH", "Games"]
    assert name_parts("CountryAbbrev") == ["Country", "Abbrev"]
    assert name_parts("Größe_名前") == ["Gr", "e"]
    assert name_parts("Größe_名前", other_letters=True) == ["Gr", "öße", "名前"]


def test_plain_words_split_only_where_lower_case_meets_upper_case() -> None:
    assert plain_words("HomeTeam") == ["Home", "Team"]
    assert plain_words("FTHG2") == ["FTHG2"]
    assert plain_words("home_team.id") == ["home", "team", "id"]


@given(NAMES)
def test_spaced_words_are_lower_case_words_without_separators(name: str) -> None:
    text = spaced_words(name)
    assert text == text.lower()
    assert not re.search(r"[_\-\s]{2}|^\s|\s$|[_-]", text)
    assert spaced_words(text) == text


@given(NAMES)
def test_name_parts_hold_every_ascii_letter_and_digit_in_order(name: str) -> None:
    kept = "".join(name_parts(name))
    assert kept == re.sub(r"[^A-Za-z0-9]", "", name)
    assert "".join(name_parts(name, other_letters=True)) == re.sub(r"[\W_]", "", name)
