"""POST /v1/retrieve answers what `schemarag retrieve --json` prints; GET /v1/index describes
the served build; both name the build that answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer import index_status
from providers import LLMRequest, ProviderCallError, ScriptedLLM
from schemarag.api.models import IndexInfo, RetrieveResponse
from schemarag.cli import main
from store import StoreLocation
from tests.api.conftest import Serve, assert_error

QUESTIONS = [
    "How many singers are from France?",
    "What is the average weight of pets owned by students?",
    "List car makers from Japan",
]


def without_timings(result: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in result.items() if k != "timings"}


@pytest.mark.parametrize("question", QUESTIONS)
def test_retrieve_equals_the_cli_json(
    serve: Serve, built_store: Path, question: str, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {"question": question, "top_databases": 3, "top_tables": 4}
    with serve(built_store) as client:
        response = client.post("/v1/retrieve", json=body)
        build = StoreLocation.parse(built_store).current()
        assert response.status_code == 200
        assert response.headers["x-schemarag-build"] == build
    # After the server let go of the folder lock: the CLI on the same store.
    argv = ["retrieve", question, "--store", str(built_store), "--json"]
    assert main([*argv, "--top-databases", "3", "--top-tables", "4"]) == 0
    cli = json.loads(capsys.readouterr().out)
    api = response.json()
    assert without_timings(api) == without_timings(cli)
    assert set(api["timings"]) == set(cli["timings"])
    RetrieveResponse.model_validate(api)  # the published schema matches the library result
    assert len(api["databases"]) == 3
    assert all(1 <= len(db["tables"]) <= 4 for db in api["databases"])
    assert all(t["bridge"] and t["joins"] for db in api["databases"] for t in db["bridges"])


def test_index_describes_the_served_build(serve: Serve, built_store: Path) -> None:
    status = index_status(StoreLocation.parse(built_store))
    with serve(built_store) as client:
        info = client.get("/v1/index").json()
    IndexInfo.model_validate(info)
    assert info["build_id"] == status["build_id"] == info["latest_build"]
    assert info["created_at"] == status["created_at"]
    for key in ("databases", "tables", "traversals", "questions", "embedder", "dim", "containment"):
        assert info[key] == status[key], key
    assert info["store"] == str(built_store)
    assert info["databases"] == 8 and info["embedder"] == "hashing:256"
    assert info["reloads"] == 1 and info["loaded_at"]


def test_openapi_and_docs_are_served(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        schema = client.get("/openapi.json").json()
        docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    paths = schema["paths"]
    for path in ("/v1/retrieve", "/v1/generate", "/v1/index", "/healthz", "/readyz", "/metrics"):
        assert path in paths
    question = schema["components"]["schemas"]["RetrieveRequest"]["properties"]["question"]
    assert question["maxLength"] == 2000 and question["minLength"] == 1
    assert "401" in paths["/v1/retrieve"]["post"]["responses"]
    # the statuses a body can get, as HTTP means them, declared on every route that takes one
    for path in ("/v1/retrieve", "/v1/generate", "/v1/examples"):
        responses = paths[path]["post"]["responses"]
        assert {"400", "413", "422"} <= set(responses), path
        assert "JSON" in responses["400"]["description"]
        assert "size limit" in responses["413"]["description"]
        assert responses["422"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorBody"
        }
    bridges = schema["components"]["schemas"]["RankedDatabaseOut"]["properties"]["bridges"]
    assert bridges["items"] == {"$ref": "#/components/schemas/RankedTableOut"}


def test_pool_true_uses_the_server_llm(serve: Serve, built_store: Path) -> None:
    llm = ScriptedLLM('{"databases": [{"db_id": "car_1", "tables": ["car_makers"]}]}')
    with serve(built_store, pool_llm=llm) as client:
        pooled = client.post("/v1/retrieve", json={"question": QUESTIONS[0], "pool": True})
        plain = client.post("/v1/retrieve", json={"question": QUESTIONS[0]})
    assert pooled.status_code == 200 and pooled.json()["pooled"] is True
    assert pooled.json()["databases"][0]["db_id"] == "car_1"  # the LLM's choice comes first
    assert plain.json()["pooled"] is False and plain.json()["databases"][0]["db_id"] != "car_1"
    assert len(llm.calls) == 1


def test_an_unusable_pooling_reply_keeps_the_ranking_and_says_why(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store, pool_llm=ScriptedLLM("no JSON here")) as client:
        pooled = client.post("/v1/retrieve", json={"question": QUESTIONS[0], "pool": True})
        plain = client.post("/v1/retrieve", json={"question": QUESTIONS[0]})
    assert pooled.status_code == 200
    body = pooled.json()
    assert body["pooled"] is False and "unusable reply" in body["pooling_error"]
    assert body["databases"] == plain.json()["databases"]
    assert plain.json()["pooling_error"] is None


def test_an_unreachable_pooling_llm_is_502(serve: Serve, built_store: Path) -> None:
    def down(request: LLMRequest) -> str:
        raise ProviderCallError("connection refused", provider="scripted")

    with serve(built_store, pool_llm=ScriptedLLM(down)) as client:
        response = client.post("/v1/retrieve", json={"question": QUESTIONS[0], "pool": True})
    assert_error(response, 502, "upstream_error")
