"""One error shape everywhere: `{"error": {"code", "message", "field"}}`, for routing errors,
validation, refusals, unconfigured features, an index not loaded yet and unexpected crashes."""

from __future__ import annotations

from pathlib import Path

from tests.api.conftest import FailingSource, Serve, assert_error, source_for, wait_until

QUESTION = {"question": "How many singers are from France?"}


def test_routing_errors_have_the_shape(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        assert "/nowhere" in assert_error(client.get("/nowhere"), 404, "not_found")["message"]
        error = assert_error(client.get("/v1/retrieve"), 405, "method_not_allowed")
        assert "GET" in error["message"]
        assert_error(client.put("/healthz"), 405, "method_not_allowed")


def test_unexpected_errors_are_500_without_details(serve: Serve, built_store: Path) -> None:
    source = FailingSource(source_for(built_store), "crash", RuntimeError("secret internal detail"))
    with serve(built_store, source=source, raise_server_exceptions=False) as client:
        response = client.post("/v1/retrieve", json={"question": "crash"})
        error = assert_error(response, 500, "internal_error")
        assert "secret" not in response.text
        assert response.headers["x-request-id"]
        assert error["message"] == "internal server error"
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200  # still serving


def test_pooling_without_an_llm_is_501_naming_pool(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        response = client.post("/v1/retrieve", json={**QUESTION, "pool": True})
        error = assert_error(response, 501, "not_configured", "pool")
        assert "--pool" in error["message"]


def test_generate_without_catalog_or_llm_is_501_naming_both(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store) as client:
        for body in (QUESTION, {**QUESTION, "db_id": "concert_singer"}):
            error = assert_error(client.post("/v1/generate", json=body), 501, "not_configured")
            assert "--source" in error["message"] and "SCHEMARAG_LLM" in error["message"]


def test_not_ready_is_503_with_retry_after(serve: Serve, tmp_path: Path) -> None:
    with serve(tmp_path / "empty", ready=False) as client:
        wait_until(lambda: "has no build" in client.get("/readyz").text)  # checked the store
        for response in (
            client.post("/v1/retrieve", json=QUESTION),
            client.get("/v1/index"),
            client.get("/readyz"),
        ):
            error = assert_error(response, 503, "not_ready")
            assert "schemarag index build" in error["message"]
            assert response.headers["retry-after"] == "2"
