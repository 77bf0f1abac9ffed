"""CohereEmbedder: the real cohere SDK client (ClientV2) against httpx.MockTransport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import numpy as np
import pytest

from providers import COHERE_MAX_TEXTS, CohereEmbedder, ConfigurationError, ProviderCallError, Usage

DIM = 1024  # embed-english-v3.0


def _embed_response(body: dict[str, Any], vectors: list[list[float]], tokens: int = 11) -> Any:
    return httpx.Response(
        200,
        json={
            "id": "da6e531f-54c6-4a73-bf92-f60566d8d753",
            "response_type": "embeddings_by_type",
            "embeddings": {"float": vectors},
            "texts": body["texts"],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": tokens}},
        },
    )


def _one_hot_server(request: Any, n: int) -> Any:
    """Answers text ``"t{k}"`` with 3 * the k-th basis vector (so order and scaling show)."""
    body = json.loads(request.content)
    vectors = []
    for text in body["texts"]:
        vector = [0.0] * DIM
        vector[int(text[1:]) % DIM] = 3.0
        vectors.append(vector)
    return _embed_response(body, vectors, tokens=len(body["texts"]))


def test_document_request_body_names_model_input_type_and_float_embeddings(make_cohere, recorder):
    record = recorder(_one_hot_server)
    embedder = make_cohere(record)

    embedder.embed_documents(["t0", "t1"])

    (request,) = record.requests
    assert request.method == "POST"
    assert request.url.path == "/v2/embed"
    assert request.headers["authorization"] == "Bearer test-cohere-key"
    assert record.bodies[0] == {
        "model": "embed-english-v3.0",
        "input_type": "search_document",
        "embedding_types": ["float"],
        "texts": ["t0", "t1"],
    }


def test_query_uses_search_query_input_type_and_returns_one_row(make_cohere, recorder):
    record = recorder(_one_hot_server)
    embedder = make_cohere(record)

    vector = embedder.embed_query("t5")

    assert record.bodies[0]["input_type"] == "search_query"
    assert record.bodies[0]["texts"] == ["t5"]
    assert vector.shape == (DIM,)
    assert vector.dtype == np.float32


def test_200_texts_go_out_as_96_96_8_and_come_back_in_order_normalized(make_cohere, recorder):
    record = recorder(_one_hot_server)
    embedder = make_cohere(record)
    texts = [f"t{k}" for k in range(200)]

    vectors = embedder.embed_documents(texts)

    assert [len(body["texts"]) for body in record.bodies] == [96, 96, 8]
    assert [t for body in record.bodies for t in body["texts"]] == texts
    assert vectors.shape == (200, DIM)
    assert vectors.dtype == np.float32
    assert list(np.argmax(vectors, axis=1)) == list(range(200))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    assert embedder.usage == Usage(input_tokens=200)


def test_smaller_batch_size_is_respected(make_cohere, recorder):
    record = recorder(_one_hot_server)
    embedder = make_cohere(record, batch_size=10)

    embedder.embed_documents([f"t{k}" for k in range(25)])

    assert [len(body["texts"]) for body in record.bodies] == [10, 10, 5]


def test_no_texts_means_no_request(make_cohere, recorder):
    record = recorder(_one_hot_server)
    embedder = make_cohere(record)

    vectors = embedder.embed_documents([])

    assert vectors.shape == (0, DIM)
    assert record.count == 0


def test_rate_limit_is_retried_by_the_sdk_then_succeeds(make_cohere, recorder):
    def respond(request: Any, n: int) -> Any:
        if n == 0:
            return httpx.Response(
                429, json={"message": "You are using a Trial key"}, headers={"retry-after-ms": "1"}
            )
        return _one_hot_server(request, n)

    record = recorder(respond)
    embedder = make_cohere(record, max_retries=2)

    vectors = embedder.embed_documents(["t3"])

    assert record.count == 2
    assert int(np.argmax(vectors[0])) == 3


def test_bad_request_is_not_retried_and_the_error_shows_status_and_message(make_cohere, recorder):
    record = recorder(
        lambda request, n: httpx.Response(400, json={"message": "invalid request: texts is empty"})
    )
    embedder = make_cohere(record)

    with pytest.raises(ProviderCallError) as caught:
        embedder.embed_documents(["t1"])

    assert record.count == 1
    assert caught.value.status_code == 400
    assert caught.value.provider == "cohere"
    assert "HTTP 400" in str(caught.value)
    assert "invalid request: texts is empty" in str(caught.value)


def test_malformed_json_response_is_a_clear_provider_call_error(make_cohere):
    embedder = make_cohere(
        lambda request: httpx.Response(
            200,
            content=b'{"id": "x", "embeddings": {',
            headers={"content-type": "application/json"},
        )
    )

    with pytest.raises(ProviderCallError, match="unparsable response"):
        embedder.embed_documents(["t1"])


def test_wrong_vector_count_or_dimension_is_an_error(make_cohere):
    def respond(request: Any) -> Any:
        body = json.loads(request.content)
        return _embed_response(body, [[1.0, 0.0]] * len(body["texts"]))

    embedder = make_cohere(respond)

    with pytest.raises(ProviderCallError, match=r"shape \(1, 2\)"):
        embedder.embed_documents(["t1"])


def test_unreachable_api_is_a_provider_call_error(make_cohere):
    def refuse(request: Any) -> Any:
        raise httpx.ConnectError("connection refused", request=request)

    embedder = make_cohere(refuse, max_retries=0)

    with pytest.raises(ProviderCallError, match="could not reach the Cohere API"):
        embedder.embed_documents(["t1"])


def test_missing_api_key_names_the_environment_variable():
    with pytest.raises(ConfigurationError, match="CO_API_KEY"):
        CohereEmbedder(api_key=None)


@pytest.mark.parametrize(
    ("options", "argument"),
    [
        ({"batch_size": COHERE_MAX_TEXTS + 1}, "batch_size"),
        ({"batch_size": 0}, "batch_size"),
        ({"model": "embed-custom-v9"}, "dim is required"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_invalid_constructor_arguments_are_named(options, argument):
    with pytest.raises(ConfigurationError, match=argument):
        CohereEmbedder(api_key="k", **options)


def test_known_models_have_their_dimension_and_name():
    embedder = CohereEmbedder("embed-english-light-v3.0", api_key="k")

    assert embedder.dim == 384
    assert embedder.name == "cohere:embed-english-light-v3.0"
