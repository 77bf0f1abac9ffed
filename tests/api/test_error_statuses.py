"""One table answers the errors every route lets through (`schemarag.api.error_statuses`): the
status and code by the error's class, the message naming what failed for that route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from generator import Models
from providers import LLMRequest, ProviderCallError, ScriptedLLM
from retriever import RetrievalResult, Retriever
from schemagraph import Catalog
from schemarag.api import Generation, StoreSource
from tests.api.conftest import Serve, assert_error, source_for

QUESTION = "How many singers are from France?"


def down(request: LLMRequest) -> str:
    raise ProviderCallError("connection refused", provider="scripted")


class StoreDownSource:
    """A real store whose Qdrant server stops answering on one question."""

    def __init__(self, inner: StoreSource) -> None:
        self.inner = inner
        self.where = inner.where

    def probe(self) -> str | None:
        return self.inner.probe()

    def latest_build(self) -> str | None:
        return self.inner.latest_build()

    def close(self) -> None:
        self.inner.close()

    def open(self) -> Retriever:
        retriever = self.inner.open()
        real = retriever.retrieve

        def retrieve(question: str, *args: Any, **kwargs: Any) -> RetrievalResult:
            if question == "store down":
                raise httpx.ConnectError("connection refused")
            return real(question, *args, **kwargs)

        retriever.retrieve = retrieve  # type: ignore[method-assign]
        return retriever


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
    with serve(built_store, source=StoreDownSource(source_for(built_store))) as client:
        response = client.post("/v1/retrieve", json={"question": "store down"})
        assert client.post("/v1/retrieve", json={"question": QUESTION}).status_code == 200
    error = assert_error(response, 503, "store_unavailable")
    assert error["message"] == "vector store: connection refused"
