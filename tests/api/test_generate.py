"""POST /v1/generate wired to `generator.generate`: with a named database, through retrieval,
and the errors a client can cause (unknown database) or cannot (model down, no index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import Models
from providers import LLMRequest, ProviderCallError, ScriptedLLM
from schemagraph import Catalog
from schemarag.api import Generation
from schemarag.api.models import GenerateResponse
from tests.api.conftest import Serve, assert_error

SQL = "SELECT count(*) FROM singer WHERE Country = 'France'"


@pytest.fixture
def generation(catalog: Catalog) -> Generation:
    return Generation(catalog, Models((ScriptedLLM(f"```sql\n{SQL}\n```"),)))


def test_generate_for_a_named_database(
    serve: Serve, built_store: Path, generation: Generation
) -> None:
    body = {
        "question": "How many singers are from France?",
        "db_id": "concert_singer",
        "strategy": "single",
        "execute": True,
        "max_rows": 5,
    }
    with serve(built_store, generation=generation) as client:
        response = client.post("/v1/generate", json=body)
    assert response.status_code == 200, response.text
    result = GenerateResponse.model_validate(response.json())
    assert result.sql == SQL and result.db_id == "concert_singer" and not result.abstained
    assert result.execution is not None and result.execution["ok"]
    assert result.retrieval is None


def test_generate_through_retrieval(
    serve: Serve, built_store: Path, generation: Generation
) -> None:
    body = {"question": "How many singers are from France?", "strategy": "presql"}
    with serve(built_store, generation=generation) as client:
        response = client.post("/v1/generate", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["retrieval"]["databases"][0]["db_id"] == "concert_singer"
    assert data["sql"] == SQL


def test_unknown_database_is_422_naming_db_id(
    serve: Serve, built_store: Path, generation: Generation
) -> None:
    with serve(built_store, generation=generation) as client:
        response = client.post("/v1/generate", json={"question": "x?", "db_id": "nope"})
    assert "nope" in assert_error(response, 422, "invalid_request", "db_id")["message"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"db_id": "concert_singer", "tables": ["singer", "../../x"]}, "has no table '../../x'"),
        ({"db_id": "concert_singer", "tables": ["Singer", "stadium"]}, None),  # case-insensitive
        ({"tables": ["../../x"]}, "no database in the catalog has a table '../../x'"),
    ],
)
def test_unknown_tables_are_422_naming_tables(
    serve: Serve,
    built_store: Path,
    generation: Generation,
    body: dict[str, object],
    words: str | None,
) -> None:
    with serve(built_store, generation=generation) as client:
        response = client.post(
            "/v1/generate", json={"question": "x?", "strategy": "single", **body}
        )
    if words is None:
        assert response.status_code == 200, response.text
    else:
        assert words in assert_error(response, 422, "invalid_request", "tables")["message"]


def test_a_failing_model_is_502(serve: Serve, built_store: Path, catalog: Catalog) -> None:
    def down(request: LLMRequest) -> str:
        raise ProviderCallError("overloaded", provider="scripted", status_code=529)

    generation = Generation(catalog, Models((ScriptedLLM(down),)))
    with serve(built_store, generation=generation) as client:
        body = {"question": "x?", "db_id": "concert_singer", "strategy": "single"}
        response = client.post("/v1/generate", json=body)
    assert "overloaded" in assert_error(response, 502, "upstream_error")["message"]


def test_retrieval_needed_before_an_index_exists_is_503(
    serve: Serve, tmp_path: Path, generation: Generation
) -> None:
    with serve(tmp_path / "empty", ready=False, generation=generation) as client:
        assert_error(client.post("/v1/generate", json={"question": "x?"}), 503, "not_ready")
        named = {"question": "x?", "db_id": "concert_singer", "strategy": "single"}
        assert client.post("/v1/generate", json=named).status_code == 200
