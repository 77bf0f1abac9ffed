"""Words, skeletons and few-shot selection."""

from __future__ import annotations

from retriever.examples import select_examples
from retriever.knowledge import QuestionHit
from retriever.lexical import SchemaLinker
from retriever.tables import TableEntry
from retriever.text import normalize_question, skeleton, stem, terms


def test_terms_drop_function_words_and_match_plurals() -> None:
    assert terms("What are the names of all the Cities?") == ["name", "city"]
    assert stem("classes") == "class" and stem("status") == "status"


def test_normalized_questions_ignore_case_punctuation_and_spacing() -> None:
    assert normalize_question("How many  singers?") == normalize_question("how many singers")


def test_skeleton_masks_schema_words_values_and_numbers() -> None:
    schema = {"pet", "pets", "age", "student"}
    assert skeleton("How many pets are older than 3?", schema) == "how many _ are older than _"
    assert skeleton("Students from New York", schema, {"new york"}) == "_ from _"
    assert skeleton("Name the 'Blue Note' students", schema) == "name the _"


def test_examples_prefer_the_same_question_shape() -> None:
    hits = [
        QuestionHit(0.9, "d", ("pets",), "Show the names of all pets.", "SELECT name FROM pets"),
        QuestionHit(0.5, "d", ("pets",), "How many pets are older than 7?", "SELECT count(*)"),
    ]
    chosen = select_examples("How many pets are heavier than 10?", hits, {"pets", "pet"}, (), 1)
    assert [e.question for e in chosen] == ["How many pets are older than 7?"]


def test_value_matches_weigh_rare_values_more() -> None:
    entries = [
        TableEntry("a", "people", "people", values={"city": ("Ottawa", "Paris")}),
        TableEntry("b", "trips", "trips", values={"to": ("Paris",)}),
    ]
    links = SchemaLinker(entries).link("who went to paris from ottawa")
    assert links.values[0] > links.values[1] > 0
    assert {m.text for m in links.value_matches} == {"paris", "ottawa"}
