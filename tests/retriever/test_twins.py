"""Twin databases at query time: the one the question names goes first, and says why; when
nothing tells them apart, the result says so and the confidence drops."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from providers import HashingEmbedder
from retriever import Retriever, RetrieverConfig, twins
from retriever.tables import TableEntry, embed_entries, entries_from_catalog
from retriever.twins import TwinSeparator
from schemagraph import Catalog
from schemagraph.containment import EstateRelations
from schemarag.cli import main
from store import StoreLocation


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


def _relations(relations: EstateRelations) -> tuple[object, ...]:
    """What ranking reads of `relations`, comparable."""
    groups = sorted(
        (sorted(g.members), sorted((m, tuple(n)) for m, n in g.only.items() if n))
        for g in relations.twins
    )
    copies = sorted((g.base, sorted(g.copies)) for g in relations.containment)
    return groups, copies, {db: set(r) for db, r in relations.related.items()}


def test_an_open_reads_twins_and_copies_from_the_build(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    tables = json.loads((sample_dir / "tables.json").read_text())
    (pets,) = [t for t in tables if t["db_id"] == "pets_1"]
    (singers,) = [t for t in tables if t["db_id"] == "concert_singer"]
    plus = {
        **pets,
        "db_id": "PETS_PLUS",
        "table_names_original": [*pets["table_names_original"], "toys"],
        "table_names": [*pets["table_names"], "toys"],
        "column_names_original": [*pets["column_names_original"], [3, "toy_id"]],
        "column_names": [*pets["column_names"], [3, "toy id"]],
        "column_types": [*pets["column_types"], "number"],
    }
    folder = tmp_path / "estate"
    folder.mkdir()
    estate = [pets, {**pets, "db_id": "Pets_Staging"}, plus, singers]
    (folder / "tables.json").write_text(json.dumps(estate))
    store = tmp_path / "store"
    argv = ["index", "build", f"spider:{folder}", "--store", str(store), "--no-cache"]
    assert main([*argv, "--embedder", "hashing:64", "--chains", "1"]) == 0

    def not_again(*args: object, **kwargs: object) -> EstateRelations:
        raise AssertionError("twins found again at open")

    embedder = HashingEmbedder(64)
    with monkeypatch.context() as patched:
        patched.setattr(twins, "relations_of", not_again)
        with Retriever.open(store, embedder) as retriever:
            read = retriever.ranker.twins.relations
            schemas = retriever.ranker.twins.schemas
    assert _relations(read) == _relations(twins.relations_of(schemas))
    assert read.related["pets_1"] == {"pets_staging", "pets_plus"}
    # a build written before it recorded them: found at open, the same
    location = StoreLocation.parse(store)
    manifest_file = location.build_dir(location.current() or "") / "manifest.json"
    written = json.loads(manifest_file.read_text())
    manifest_file.write_text(json.dumps({k: v for k, v in written.items() if k != "related"}))
    with Retriever.open(store, embedder) as retriever:
        assert _relations(retriever.ranker.twins.relations) == _relations(read)
    # the next build, though nothing changed, records them
    assert main([*argv, "--embedder", "hashing:64", "--chains", "1"]) == 0
    assert json.loads(manifest_file.read_text())["related"] == written["related"]
