"""A signal of one's own (`retriever.signal`): one class and one line of `RetrieverConfig`, its
raw scores in `Retriever.signals()` and its weight in the fusion."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt
import pytest

from providers import HashingEmbedder
from retriever import Retriever, RetrieverConfig, RetrieverError, SignalSpec, entries_from_catalog
from retriever.tables import embed_entries
from schemagraph import Catalog

QUESTION = "How many singers are from France?"


class Favourite:
    """A toy table signal: 1 for every table of one database (`car_1`), 0 elsewhere."""

    name = "favourite"
    level: Literal["table", "database"] = "table"
    database = "car_1"

    def __init__(self, retriever: Retriever) -> None:
        self.values = np.array(
            [1.0 if e.db_id == self.database else 0.0 for e in retriever.entries]
        )
        self.questions: list[str] = []

    def score(
        self, question: str, vector: npt.NDArray[np.float32] | None
    ) -> npt.NDArray[np.float64]:
        self.questions.append(question)
        return self.values


class FavouriteDatabase(Favourite):
    name = "favourite_db"
    level: Literal["table", "database"] = "database"

    def __init__(self, retriever: Retriever) -> None:
        self.values = np.array([1.0 if d == self.database else 0.0 for d in retriever.db_ids])
        self.questions = []


def make(catalog: Catalog, *signals: SignalSpec) -> Retriever:
    embedder = HashingEmbedder(256)
    entries = entries_from_catalog(catalog)
    config = RetrieverConfig(signals=signals, examples=0)
    return Retriever(entries, embed_entries(entries, embedder), embedder, config=config)


def test_a_toy_table_signal_is_in_the_signals_and_in_the_fusion(sample_catalog: Catalog) -> None:
    plain = make(sample_catalog)
    assert plain.retrieve(QUESTION).databases[0].db_id == "concert_singer"
    toy = make(sample_catalog, SignalSpec(Favourite, table=1.0, database=5.0))
    signals, _, timings = toy.signals(QUESTION)
    np.testing.assert_array_equal(signals.table["favourite"], toy.extra_signals[0].values)
    assert "signals_ms" in timings
    result = toy.retrieve(QUESTION)
    assert result.databases[0].db_id == "car_1"
    assert toy.extra_signals[0].questions[-1] == QUESTION
    # weighted 0, it is scored and changes nothing
    idle = make(sample_catalog, SignalSpec(Favourite))
    assert [d.db_id for d in idle.retrieve(QUESTION).databases] == [
        d.db_id for d in plain.retrieve(QUESTION).databases
    ]


def test_a_toy_database_signal_weighs_in_the_database_scores(sample_catalog: Catalog) -> None:
    toy = make(sample_catalog, SignalSpec(FavouriteDatabase, database=5.0))
    signals, _, _ = toy.signals(QUESTION)
    assert "favourite_db" in signals.database
    assert toy.retrieve(QUESTION).databases[0].db_id == "car_1"


def test_a_bad_signal_is_one_line(sample_catalog: Catalog) -> None:
    class Taken(Favourite):
        name = "bm25"

    with pytest.raises(RetrieverError, match="'bm25' is taken"):
        make(sample_catalog, SignalSpec(Taken, table=1.0))
    with pytest.raises(RetrieverError, match="no table weight"):
        make(sample_catalog, SignalSpec(FavouriteDatabase, table=1.0))

    class Short(Favourite):
        def score(
            self, question: str, vector: npt.NDArray[np.float32] | None
        ) -> npt.NDArray[np.float64]:
            return np.zeros(2)

    short = make(sample_catalog, SignalSpec(Short, table=1.0))
    with pytest.raises(RetrieverError, match="not one number per table"):
        short.retrieve(QUESTION)
