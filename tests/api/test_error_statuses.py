"""One table answers the errors every route lets through (`schemarag.api.error_statuses`): the
status and code by the error's class, the message naming what failed for that route."""

from __future__ import annotations

from pathlib import Path

import httpx

from generator import Models
from providers import LLMRequest, ProviderCallError, ScriptedLLM
from schemagraph import Catalog
from schemarag.api import Generation
from tests.api.conftest import FailingSource, Serve, assert_error, source_for

QUESTION = "How many singers are from France?"


def down(request: LLMRequest) -> str:
    raise ProviderCallError("connection refused", provider="scripted")


def test_a_provider_error_names_what_the_route_calls(
    serve: Serve, built_store: Path, catalog: Catalog
) -> None:
    generation = Generation(catalog, Models((ScriptedLLM(down),)))
    with serve(built_store, pool_llm=ScriptedLLM(down), generation=generation) as client:
        pooled = client.post("/v1/retrieve", json={"question": QUESTION, "pool": True})
        body = {"question": QUESTION, "db_id": "concert_singer", "strategy": "single"}
        generated = client.post("/v1/generate", json=body)
    assert assert_error(pooled, 502, "upstream_error")["message"].startswith("model provider: ")
    assert assert_error(generated, 502, "upstream_error")["message"].startswith("language model: ")


def test_an_unreachable_vector_store_is_503(serve: Serve, built_store: Path) -> None:
    with serve(
        built_store,
        source=FailingSource(
            source_for(built_store), "store down", httpx.ConnectError("connection refused")
        ),
    ) as client:
        response = client.post("/v1/retrieve", json={"question": "store down"})
        assert client.post("/v1/retrieve", json={"question": QUESTION}).status_code == 200
    error = assert_error(response, 503, "store_unavailable")
    assert error["message"] == "vector store: connection refused"
