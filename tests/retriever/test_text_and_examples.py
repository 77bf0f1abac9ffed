"""Words, skeletons and few-shot selection."""

from __future__ import annotations

import numpy as np

from retriever.examples import ExamplePicker, select_examples
from retriever.knowledge import QuestionHit
from retriever.lexical import SchemaLinker
from retriever.tables import TableEntry
from retriever.text import normalize_question, skeleton, stem, terms
from store.records import ROUTING


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


def test_a_routing_key_is_never_an_example_even_the_nearest() -> None:
    """`ExamplePicker.pick` over hits of the best database: the routing key (SQLite's SQL on a
    warehouse) is left out, from the hits and from the search of the database alike."""
    entries = [TableEntry("shop", "orders", "orders", ("id", "total"))]
    picker = ExamplePicker(entries, [np.array([0])])
    key = QuestionHit(1.0, "shop", ("orders",), "How many orders?", 'SELECT COUNT(*) FROM "orders"')
    key = key._replace(origin=ROUTING)
    shown = [
        QuestionHit(0.5 - i / 100, "shop", ("orders",), f"List {i} orders.", f"SELECT {i}")
        for i in range(6)
    ]

    class OneDatabase:
        def search_questions(self, vector: object, limit: int, db_id: str) -> list[QuestionHit]:
            return [key, *shown][:limit]

    vector = np.zeros(4, dtype=np.float32)
    for hits in ([key, *shown], [key, shown[0]]):  # enough hits; too few: the search is read
        picked = picker.pick("How many orders?", vector, hits, 0, OneDatabase(), 2)
        assert picked and all(e.origin != ROUTING for e in picked)
