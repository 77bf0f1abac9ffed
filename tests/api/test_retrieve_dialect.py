"""Retrieval restricted to one dialect: a caller connected to one engine of a mixed estate (a
BigQuery export, a Snowflake export and SQLite files) gets only that engine's databases, from
the Python API, the CLI, `POST /v1/retrieve`, `POST /v1/generate` and the MCP tool; a dialect
no database has is one line naming the estate's dialects."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import Models
from providers import ScriptedLLM
from retriever import Retriever, RetrieverError
from schemagraph import Catalog, load_catalog
from schemarag.api import Generation
from schemarag.cli import main
from tests.api.conftest import EMBEDDER, Serve, assert_error, build_store

WAREHOUSE = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse"
QUESTION = "How many orders were shipped per product category?"


@pytest.fixture(scope="module")
def mixed_catalog(sample_dir: Path) -> Catalog:
    return load_catalog(
        [
            f"infoschema:{WAREHOUSE / 'bigquery'}",
            f"infoschema:{WAREHOUSE / 'snowflake'}",
            f"spider:{sample_dir}",
        ]
    )


@pytest.fixture(scope="module")
def mixed_store(tmp_path_factory: pytest.TempPathFactory, mixed_catalog: Catalog) -> Path:
    store = tmp_path_factory.mktemp("dialects") / "kb"
    build_store(store, mixed_catalog)
    return store


def dialects_of(store: Path) -> dict[str, str]:
    with Retriever.open(store, EMBEDDER) as retriever:
        return dict(retriever.ranker.dialects)


def test_only_the_databases_of_the_dialect_are_ranked(mixed_store: Path) -> None:
    dialects = dialects_of(mixed_store)
    assert sorted(set(dialects.values())) == ["bigquery", "snowflake", "sqlite"]
    with Retriever.open(mixed_store, EMBEDDER) as retriever:
        everything = retriever.retrieve(QUESTION, top_databases=20)
        assert {dialects[d.db_id] for d in everything.databases} == {
            "bigquery",
            "snowflake",
            "sqlite",
        }
        for dialect in ("snowflake", "BigQuery", "sqlite"):
            result = retriever.retrieve(QUESTION, top_databases=20, dialect=dialect)
            wanted = dialect.lower()
            expected = [d.db_id for d in everything.databases if dialects[d.db_id] == wanted]
            assert sorted(d.db_id for d in result.databases) == sorted(expected)
            assert {dialects[db] for db, _ in result.tables} == {wanted}
        only = retriever.retrieve(QUESTION, top_databases=5, dialect="snowflake")
        assert [d.db_id for d in only.databases] == ["SHOP_DB"]
        with pytest.raises(RetrieverError, match="this estate has: bigquery, snowflake, sqlite"):
            retriever.retrieve(QUESTION, dialect="oracle")


def test_the_cli_takes_a_dialect(mixed_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["retrieve", QUESTION, "--store", str(mixed_store), "--json"]
    assert main([*argv, "--dialect", "snowflake"]) == 0
    assert '"db_id": "SHOP_DB"' in capsys.readouterr().out
    assert main([*argv, "--dialect", "oracle"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no database of dialect 'oracle'" in err[0], err


def test_post_retrieve_takes_a_dialect(serve: Serve, mixed_store: Path) -> None:
    with serve(mixed_store) as client:
        found = client.post("/v1/retrieve", json={"question": QUESTION, "dialect": "snowflake"})
        assert found.status_code == 200, found.text
        assert [d["db_id"] for d in found.json()["databases"]] == ["SHOP_DB"]
        unknown = client.post("/v1/retrieve", json={"question": QUESTION, "dialect": "oracle"})
        body = assert_error(unknown, 422, "invalid_request")
        assert "this estate has: bigquery, snowflake, sqlite" in body["message"]


def test_post_generate_retrieves_among_the_dialects_databases(
    serve: Serve, mixed_store: Path, mixed_catalog: Catalog
) -> None:
    llm = ScriptedLLM("```sql\nSELECT 1\n```")
    generation = Generation(mixed_catalog, Models((llm,)))
    body = {"question": QUESTION, "strategy": "single", "top_databases": 5}
    with serve(mixed_store, generation=generation) as client:
        for dialect, expected in (("snowflake", ["SHOP_DB"]), ("bigquery", ["acme-retail-prod"])):
            found = client.post("/v1/generate", json={**body, "dialect": dialect})
            assert found.status_code == 200, found.text
            ranked = [d["db_id"] for d in found.json()["retrieval"]["databases"]]
            assert ranked == expected
