"""Fixtures: a small knowledge base on disk, in the layout the indexer writes, over the bundled
Spider sample, embedded with the dependency-free `HashingEmbedder` (fast and deterministic)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from providers import HashingEmbedder
from schemagraph import Catalog, load_spider, sample_database
from store.table_documents import table_document

#: Synthetic records: (db_id, question, sql, tables). What an indexer might have written.
RECORDS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("pets_1", "How many pets are older than 3 years?", "SELECT count(*) FROM Pets WHERE pet_age > 3", ("Pets",)),  # noqa: E501
    ("pets_1", "What is the average weight of dogs?", "SELECT avg(weight) FROM Pets WHERE PetType = 'dog'", ("Pets",)),  # noqa: E501
    ("pets_1", "Show the first names of students who own a cat.", "SELECT T1.Fname FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID JOIN Pets AS T3 ON T2.PetID = T3.PetID WHERE T3.PetType = 'cat'", ("Student", "Has_Pet", "Pets")),  # noqa: E501
    ("pets_1", "List the majors of students older than 20.", "SELECT Major FROM Student WHERE Age > 20", ("Student",)),  # noqa: E501
    ("concert_singer", "How many singers are from France?", "SELECT count(*) FROM singer WHERE Country = 'France'", ("singer",)),  # noqa: E501
    ("concert_singer", "What are the names of stadiums with a capacity above 5000?", "SELECT Name FROM stadium WHERE Capacity > 5000", ("stadium",)),  # noqa: E501
    ("concert_singer", "Show the names of concerts held in 2014.", "SELECT concert_Name FROM concert WHERE Year = 2014", ("concert",)),  # noqa: E501
    ("car_1", "What is the maximum horsepower of cars made in 1970?", "SELECT max(Horsepower) FROM cars_data WHERE Year = 1970", ("cars_data",)),  # noqa: E501
    ("car_1", "List the names of car makers from Japan.", "SELECT T1.Maker FROM car_makers AS T1 JOIN countries AS T2 ON T1.Country = T2.CountryId WHERE T2.CountryName = 'japan'", ("car_makers", "countries")),  # noqa: E501
    ("flight_2", "How many flights depart from airport APG?", "SELECT count(*) FROM flights WHERE SourceAirport = 'APG'", ("flights",)),  # noqa: E501
    ("flight_2", "Which airline has abbreviation UAL?", "SELECT Airline FROM airlines WHERE Abbreviation = 'UAL'", ("airlines",)),  # noqa: E501
    ("dog_kennels", "What are the names of the dogs treated by professionals?", "SELECT T1.name FROM Dogs AS T1 JOIN Treatments AS T2 ON T1.dog_id = T2.dog_id", ("Dogs", "Treatments")),  # noqa: E501
    ("employee_hire_evaluation", "Which shops hired employees full time?", "SELECT T1.Name FROM shop AS T1 JOIN hiring AS T2 ON T1.Shop_ID = T2.Shop_ID WHERE T2.Is_full_time = 'T'", ("shop", "hiring")),  # noqa: E501
)  # fmt: skip

NAMESPACE = uuid.UUID("2b0f3c4e-1b1a-4f43-9a43-0d8c5e8b7a11")


@pytest.fixture(scope="session")
def sample_catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture(scope="session")
def embedder() -> HashingEmbedder:
    return HashingEmbedder(256)


def write_store(
    root: Path,
    catalog: Catalog,
    embedder: HashingEmbedder,
    records: Sequence[tuple[str, str, str, tuple[str, ...]]],
    build_id: str = "20261121T000000000000Z-test",
    synthesizer: str = "template",
) -> Path:
    """A served embedded build at `root` holding `records` and every table of `catalog`."""
    build = root / "builds" / build_id
    (build / "qdrant").mkdir(parents=True)
    client = QdrantClient(path=str(build / "qdrant"))
    try:
        params = models.VectorParams(size=embedder.dim, distance=models.Distance.COSINE)
        client.create_collection("schemarag_questions", vectors_config=params)
        client.create_collection("schemarag_tables", vectors_config=params)
        if records:
            vectors = embedder.embed_documents([r[1] for r in records])
            client.upsert(
                "schemarag_questions",
                points=models.Batch(
                    ids=[str(uuid.uuid5(NAMESPACE, r[1])) for r in records],
                    vectors=vectors.tolist(),
                    payloads=[
                        {
                            "db_id": db,
                            "question": q,
                            "sql": sql,
                            "tables": list(tables),
                            "synthesizer": synthesizer,
                        }
                        for db, q, sql, tables in records
                    ],
                ),
            )
        docs = [
            table_document(db, t, sample)
            for db in catalog
            for sample in [sample_database(db)]
            for t in db.tables
        ]
        client.upsert(
            "schemarag_tables",
            points=models.Batch(
                ids=[str(uuid.uuid5(NAMESPACE, f"{d['db_id']}.{d['table']}")) for d in docs],
                vectors=embedder.embed_documents([d["text"] for d in docs]).tolist(),
                payloads=docs,
            ),
        )
    finally:
        client.close()
    manifest = {
        "build_id": build_id,
        "embedder": embedder.name,
        "dim": embedder.dim,
        "collections": {"questions": "schemarag_questions", "tables": "schemarag_tables"},
    }
    (build / "manifest.json").write_text(json.dumps(manifest))
    (root / "CURRENT").write_text(build_id)
    return root


@pytest.fixture(scope="session")
def store(
    tmp_path_factory: pytest.TempPathFactory, sample_catalog: Catalog, embedder: HashingEmbedder
) -> Path:
    return write_store(tmp_path_factory.mktemp("kb") / "store", sample_catalog, embedder, RECORDS)
