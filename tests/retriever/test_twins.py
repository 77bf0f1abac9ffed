"""Twin databases at query time: the one the question names goes first, and says why; when
nothing tells them apart, the result says so and the confidence drops."""

from __future__ import annotations

import dataclasses

import pytest

from providers import HashingEmbedder
from retriever import Retriever, RetrieverConfig
from retriever.tables import TableEntry, embed_entries, entries_from_catalog
from retriever.twins import TwinSeparator
from schemagraph import Catalog


def _copy(entries: list[TableEntry], db_id: str, db_from: str = "pets_1") -> list[TableEntry]:
    return [dataclasses.replace(e, db_id=db_id) for e in entries if e.db_id == db_from]


def _with_column(entries: list[TableEntry], table: str, column: str) -> list[TableEntry]:
    return [
        dataclasses.replace(e, columns=(*e.columns, column), text=f"{e.text} {column}")
        if e.table == table
        else e
        for e in entries
    ]


@pytest.fixture(scope="module")
def base(sample_catalog: Catalog) -> list[TableEntry]:
    return entries_from_catalog(sample_catalog)


def _retriever(entries: list[TableEntry]) -> Retriever:
    embedder = HashingEmbedder(256)
    return Retriever(
        entries, embed_entries(entries, embedder), embedder, config=RetrieverConfig(semantic=False)
    )


def test_a_column_only_one_twin_has_puts_it_first(base: list[TableEntry]) -> None:
    copy = _with_column(_copy(base, "pets_2024"), "Pets", "microchip")
    retriever = _retriever([*base, *copy])
    result = retriever.retrieve("How many pets have a microchip?")
    assert result.databases[0].db_id == "pets_2024"
    assert result.twins is not None
    assert result.twins.members == ("pets_2024", "pets_1")
    assert result.twins.told_apart_by == "only it has pets.microchip"
    assert result.as_dict()["twins"]["members"] == ["pets_2024", "pets_1"]


def test_a_value_only_one_twin_holds_puts_it_first(base: list[TableEntry]) -> None:
    copy = [
        dataclasses.replace(e, values={**e.values, "PetType": ("hamster",)})
        if e.table == "Pets"
        else e
        for e in _copy(base, "pets_eu")
    ]
    result = _retriever([*base, *copy]).retrieve("How many pets of type hamster are there?")
    assert result.databases[0].db_id == "pets_eu"
    assert result.twins is not None and result.twins.told_apart_by == (
        "only it holds the value 'hamster'"
    )


def test_when_nothing_tells_twins_apart_it_says_so_and_confidence_drops(
    base: list[TableEntry],
) -> None:
    retriever = _retriever([*base, *_copy(base, "pets_copy")])
    question = "What is the average weight of the pets?"
    result = retriever.retrieve(question)
    assert result.twins is not None and result.twins.told_apart_by is None
    assert set(result.twins.members) == {"pets_1", "pets_copy"}
    signals, hits, _ = retriever.signals(question)
    first = retriever.db_ids.index(result.databases[0].db_id)
    assert result.confidence == pytest.approx(
        retriever.ranker.confidence(signals, hits, first) / 2, 1e-3
    )


def test_databases_without_twins_get_no_note(base: list[TableEntry]) -> None:
    result = _retriever(base).retrieve("What is the average weight of the pets?")
    assert result.twins is None and result.as_dict()["twins"] is None


def _extended(entries: list[TableEntry], db_id: str) -> list[TableEntry]:
    """A Snowflake-style extended copy of pets_1: upper-case names and one table more."""
    copy = [
        dataclasses.replace(
            e, db_id=db_id, table=e.table.upper(), columns=tuple(c.upper() for c in e.columns)
        )
        for e in _copy(entries, db_id)
    ]
    extra = TableEntry(
        db_id, "VACCINATIONS", "vaccinations petid vaccine date", ("PETID", "VACCINE")
    )
    return [*copy, extra]


def test_an_extended_copy_is_ranked_right_after_the_best_and_named(
    base: list[TableEntry],
) -> None:
    retriever = _retriever([*base, *_extended(base, "PETS_PLUS_SF")])
    result = retriever.retrieve("What is the average weight of the pets?")
    first, second = (d.db_id for d in result.databases[:2])
    assert {first, second} == {"pets_1", "PETS_PLUS_SF"}
    (also,) = result.also_in
    assert also.db_id == second
    if first == "pets_1":
        assert also.adds == ("vaccinations",) and also.adds_count == 1
        assert also.describe() == "also answerable in PETS_PLUS_SF, which adds tables vaccinations"
    assert result.as_dict()["also_in"] == [also.as_dict()]
    assert retriever.ranker.twins.relations.containment[0].copies == ("pets_plus_sf",)


def test_related_databases_holding_the_chosen_tables_move_up_to_the_best() -> None:
    pets = TableEntry("pets_1", "Pets", "pets", ("PetID", "weight"))
    student = TableEntry("pets_1", "Student", "student", ("StuID", "name"))
    entries = [
        pets,
        student,
        dataclasses.replace(pets, db_id="pets_plus", table="PETS"),
        dataclasses.replace(student, db_id="pets_plus", table="STUDENT"),
        TableEntry("pets_plus", "toys", "toys", ("ToyID",)),
        TableEntry("singers", "singer", "singer", ("Singer_ID", "Name")),
        TableEntry("flights", "flights", "flights", ("FlightNo",)),
        # a table of the same name, another table: no relation, so no group
        TableEntry("other_pets", "Pets", "pets", ("PetID", "owner", "breed", "colour")),
    ]
    separator = TwinSeparator(entries)
    ranked = ["pets_1", "singers", "other_pets", "flights", "pets_plus"]
    order, also = separator.group(ranked, ("Pets",))
    assert order == [0, 4, 1, 2, 3]
    assert [(a.db_id, a.adds) for a in also] == [("pets_plus", ("toys",))]
    # the copy ranked first: the base holds the chosen table too, and adds nothing
    order, also = separator.group(["pets_plus", "singers", "pets_1"], ("PETS",))
    assert order == [0, 2, 1] and also[0].describe() == (
        "also answerable in pets_1, which adds no table"
    )
    # a table the related database lacks: no group
    assert separator.group(["pets_plus", "singers", "pets_1"], ("toys",)) == ([0, 1, 2], ())
