"""Semantic linking (question words to schema names by embedding) on the bundled Spider sample.

A hashing embedder with a synonym table stands in for MiniLM: it embeds "vocalists" exactly as
"singer", which is what a sentence encoder does approximately."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from providers import HashingEmbedder
from providers.embedding import Vectors
from retriever import Retriever, entries_from_catalog
from retriever.semantic import SemanticLinker, humanize, units
from retriever.tables import embed_entries
from schemagraph import Catalog

SYNONYMS = {"vocalists": "singer", "nation": "country", "melody title": "song name"}


class SynonymEmbedder:
    """`HashingEmbedder(256)` that reads a few words as their schema synonyms; counts texts."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(256)
        self.embedded: list[str] = []

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.embedded.extend(texts)
        return self._inner.embed_documents([SYNONYMS.get(t, t) for t in texts])

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)


@pytest.fixture()
def linked(sample_catalog: Catalog) -> tuple[Retriever, SynonymEmbedder]:
    embedder = SynonymEmbedder()
    entries = entries_from_catalog(sample_catalog)
    return Retriever(entries, embed_entries(entries, embedder), embedder), embedder


def test_units_are_content_words_and_adjacent_pairs() -> None:
    assert humanize("Song_release_year") == "song release year"
    assert units("How many vocalists from the nation France are older than 30?") == [
        "vocalists",
        "nation",
        "france",
        "older",
        "nation france",
    ]
    assert units("How many are there?") == []


def test_a_synonym_links_to_the_table_and_database_it_names(
    linked: tuple[Retriever, SynonymEmbedder],
) -> None:
    retriever, _ = linked
    assert retriever.semantic is not None
    links = retriever.semantic.link("How many vocalists are there for each nation?")
    best_table = retriever.entries[int(np.argmax(links.tables))]
    assert (best_table.db_id, best_table.table) == ("concert_singer", "singer")
    assert retriever.db_ids[int(np.argmax(links.databases))] == "concert_singer"
    assert links.units == ("vocalists", "nation")


def test_the_signal_ranks_a_question_in_synonyms_only(
    linked: tuple[Retriever, SynonymEmbedder],
) -> None:
    retriever, _ = linked
    result = retriever.retrieve("How many vocalists are there for each nation?")
    assert result.databases[0].db_id == "concert_singer"
    assert result.databases[0].chosen_tables[0] == "singer"
    assert "semantic_ms" in result.timings
    signals, _, _ = retriever.signals("vocalists")
    assert set(signals.database) == {"semantic"}


def test_schema_words_and_remembered_units_cost_no_model_call(
    linked: tuple[Retriever, SynonymEmbedder],
) -> None:
    retriever, embedder = linked
    assert retriever.semantic is not None
    embedder.embedded.clear()
    retriever.semantic.link("singer country")  # schema names: vectors known from the open
    assert embedder.embedded == ["singer country"]  # the pair alone is new
    embedder.embedded.clear()
    retriever.semantic.link("singer country")
    retriever.semantic.link("Singers' country")
    assert embedder.embedded == ["singers", "singers country"]


def test_can_be_turned_off(sample_catalog: Catalog) -> None:
    embedder = HashingEmbedder(256)
    entries = entries_from_catalog(sample_catalog, with_values=False)
    retriever = Retriever(entries, embed_entries(entries, embedder), embedder, semantic=False)
    assert retriever.semantic is None
    signals, _, _ = retriever.signals("How many singers are there?")
    assert signals.database == {} and "semantic" not in signals.table


def test_validates_its_arguments(sample_catalog: Catalog) -> None:
    embedder = HashingEmbedder(64)
    entries = entries_from_catalog(sample_catalog, with_values=False)
    db_of = np.zeros(len(entries), dtype=np.int64)
    with pytest.raises(ValueError, match="threshold"):
        SemanticLinker(entries, db_of, 1, embedder, threshold=1.0)
    with pytest.raises(ValueError, match="memo"):
        SemanticLinker(entries, db_of, 1, embedder, memo=-1)
    with pytest.raises(ValueError, match="db_of"):
        SemanticLinker(entries, db_of[:1], 1, embedder)


def test_prepare_embeds_questions_and_their_new_words_in_one_call(
    linked: tuple[Retriever, SynonymEmbedder],
) -> None:
    retriever, embedder = linked
    embedder.symmetric = True  # type: ignore[attr-defined]  # queries embedded as documents
    questions = ["How many vocalists are there for each nation?", "Which nation has most singers?"]
    embedder.embedded.clear()
    prepared = retriever.prepare(questions)

    # one call: both questions, then each new word or pair once ("nation" is in both)
    assert embedder.embedded[:2] == questions
    words = embedder.embedded[2:]
    assert "vocalists" in words and words.count("nation") == 1
    embedder.embedded.clear()
    batched = [retriever.signals(q, ready)[0] for q, ready in zip(questions, prepared, strict=True)]
    assert embedder.embedded == []  # nothing left to embed
    fresh = Retriever(retriever.entries, retriever.vectors, embedder)  # no memo
    for question, signals in zip(questions, batched, strict=True):
        alone = fresh.signals(question)[0]
        np.testing.assert_allclose(signals.table["semantic"], alone.table["semantic"], rtol=1e-5)
        np.testing.assert_allclose(
            signals.database["semantic"], alone.database["semantic"], rtol=1e-5
        )
