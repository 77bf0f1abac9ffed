"""Descriptions where the retriever reads names: table documents (BM25 and dense), the semantic
linker's vocabulary, and `bench recall --docs`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluation.baselines import BM25TableBaseline, DenseTableBaseline
from providers import HashingEmbedder
from retriever import Retriever
from retriever.lexical import SchemaLinker
from retriever.semantic import SemanticLinker
from retriever.tables import TableEntry, embed_entries, entries_from_catalog, group_by_database
from schemagraph import Catalog, load_catalog
from schemagraph.sources import apply_overlay
from schemarag.cli import main
from store.table_documents import table_document

NOTES = {
    "clinic.Laboratory.T-BIL": "total bilirubin, in mg/dL",
    "clinic.Laboratory.GOT": "AST glutamic oxaloacetic transaminase",
    "clinic.Laboratory": "Results of laboratory examinations",
    "clinic.Patient.SEX": "The 'SEX' column of the 'Patient' table: 'F', 'M' or 'unknown' "
    "(tests in 'Laboratory', such as 'T-BIL', are by sex)",
    "shop.orders.placed": "Date the order was placed, such as '2024-01-31'",
}
QUESTION = "What is the highest total bilirubin measured?"


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    folder = tmp_path_factory.mktemp("ddl")
    (folder / "clinic.sql").write_text(
        "CREATE TABLE Patient (ID INT PRIMARY KEY, SEX TEXT, Birthday DATE);\n"
        'CREATE TABLE Laboratory (ID INT REFERENCES Patient(ID), "Date" DATE, "T-BIL" REAL,'
        " GOT REAL);\n"
    )
    (folder / "shop.sql").write_text(
        "CREATE TABLE orders (id INT PRIMARY KEY, amount REAL, placed DATE);\n"
        "CREATE TABLE items (id INT PRIMARY KEY, weight REAL, price REAL);\n"
    )
    return load_catalog([f"ddl:{folder}"])


@pytest.fixture(scope="module")
def described(plain: Catalog, tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    notes = tmp_path_factory.mktemp("notes") / "notes.json"
    notes.write_text(json.dumps(NOTES))
    return apply_overlay(plain, "docs", notes)


def _lab(entries: list[TableEntry]) -> int:
    return next(i for i, e in enumerate(entries) if e.table == "Laboratory")


def test_table_documents_carry_descriptions(described: Catalog) -> None:
    db = described.database("clinic")
    doc = table_document(db, db.table("Laboratory"))
    # embedded text: names with the descriptions' short phrases (a sentence is not one)
    assert doc["text"] == (
        "laboratory (results of laboratory examinations): id, date, t bil (total bilirubin), "
        "got (AST glutamic oxaloacetic transaminase). linked to patient"
    )
    # BM25 text: all of it
    assert doc["lexical"] == (
        doc["text"] + ". laboratory: Results of laboratory examinations. t bil: total bilirubin, "
        "in mg/dL. got: AST glutamic oxaloacetic transaminase"
    )
    assert doc["descriptions"] == {
        "T-BIL": "total bilirubin, in mg/dL",
        "GOT": "AST glutamic oxaloacetic transaminase",
    }
    entry = TableEntry.from_payload(doc)
    assert entry.lexical_text == doc["lexical"]
    assert entry.description == "Results of laboratory examinations"
    assert entry.descriptions["T-BIL"] == "total bilirubin, in mg/dL"


def test_bm25_finds_a_table_by_its_description(plain: Catalog, described: Catalog) -> None:
    question = "Which examination results are the highest?"  # words of a description only
    entries = entries_from_catalog(plain, with_values=False)
    assert BM25TableBaseline(entries).bm25.scores(question)[_lab(entries)] == 0.0
    entries = entries_from_catalog(described, with_values=False)
    assert BM25TableBaseline(entries).rank(question).tables[0] == ("clinic", "Laboratory")
    entries = entries_from_catalog(plain, with_values=False)
    assert BM25TableBaseline(entries).bm25.scores(QUESTION)[_lab(entries)] == 0.0
    entries = entries_from_catalog(described, with_values=False)
    assert BM25TableBaseline(entries).rank(QUESTION).tables[0] == ("clinic", "Laboratory")


def test_dense_documents_embed_the_descriptions(plain: Catalog, described: Catalog) -> None:
    embedder = HashingEmbedder(256)
    query = np.asarray(embedder.embed_query(QUESTION))
    cosines = []
    for catalog in (plain, described):
        entries = entries_from_catalog(catalog, with_values=False)
        vectors = embed_entries(entries, embedder)
        cosines.append(float(vectors[_lab(entries)] @ query))
        ranking = DenseTableBaseline(entries, vectors, embedder).rank(QUESTION)
    assert cosines[1] > cosines[0] + 0.1
    assert ranking.tables[0] == ("clinic", "Laboratory")


def test_values_a_description_quotes_link_like_sampled_values(
    plain: Catalog, described: Catalog
) -> None:
    question = "How many patients of unknown sex had T-BIL tests in the laboratory on 2024-01-31?"
    matched = []
    for catalog in (plain, described):
        entries = entries_from_catalog(catalog, with_values=False)
        links = SchemaLinker(entries).link(question)
        matched.append({(entries[m.entry].table, m.column, m.text) for m in links.value_matches})
    assert matched[0] == set()
    # quoted names of the database ('SEX', 'Laboratory', 'T-BIL') are not values, and one letter
    # ('F') is too short to match
    assert matched[1] == {("Patient", "SEX", "unknown"), ("orders", "placed", "2024 01 31")}


def test_semantic_linker_links_question_words_to_described_columns(
    plain: Catalog, described: Catalog
) -> None:
    scores = []
    for catalog in (plain, described):
        entries = entries_from_catalog(catalog, with_values=False)
        groups = group_by_database(entries)
        db_of = np.zeros(len(entries), dtype=np.int64)
        for position, members in enumerate(groups.values()):
            db_of[members] = position
        linker = SemanticLinker(entries, db_of, len(groups), HashingEmbedder(256))
        scores.append(float(linker.link(QUESTION).tables[_lab(entries)]))
        if catalog is described:
            assert {"total bilirubin", "ast glutamic oxaloacetic transaminase"} <= set(linker.names)
    assert scores[0] == 0.0 < scores[1]


def test_bench_recall_docs_builds_the_index_with_the_descriptions(
    tmp_path: Path, fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bird = fixtures / "docs" / "bird"
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps(
            [
                {
                    "db_id": "clinic",
                    "question": QUESTION,
                    "SQL": 'SELECT max("T-BIL") FROM Laboratory',
                }
            ]
        )
    )
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"clinic.Examination.KCT": "Kaolin clotting time", "x.y": "?"}))
    cache = tmp_path / "cache"
    args = ["bench", "recall", "--tables", str(bird / "tables.json"), "--questions", str(questions),
            "--embedder", "hashing", "--cache-dir", str(cache)]  # fmt: skip
    assert main([*args, "--docs", str(notes)]) == 0
    assert "1 description matches no database" in capsys.readouterr().err
    (folder,) = cache.iterdir()
    with Retriever.open(str(folder), HashingEmbedder(512)) as retriever:
        kct = next(e for e in retriever.entries if e.table == "Examination")
    assert kct.descriptions == {"KCT": "Kaolin clotting time"}
    assert "kct (kaolin clotting time)" in kct.text
    assert kct.lexical_text.endswith("kct: Kaolin clotting time")
    assert main([*args, "--docs", str(notes), "--store", str(folder)]) == 2
    assert "--docs describes the pool" in capsys.readouterr().err
