"""POST /v1/examples: behind the API key, validates each pair (rejected ones come back with their
index and reason), publishes a build that this server then serves, and keeps its limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemagraph import Catalog
from schemarag.api import ApiOptions
from schemarag.api.examples import ExampleIntake
from store import StoreLocation
from store.location import build_lock
from tests.api.conftest import API_KEY, EMBEDDER, Serve, assert_error, wait_until

GOOD = {
    "question": "Which crooners hail from the Hexagon?",
    "sql": "SELECT Name FROM singer WHERE Country = 'France'",
    "db_id": "concert_singer",
}
BAD = {"question": "Broken.", "sql": "SELECT nope FROM singer", "db_id": "concert_singer"}


def intake(store: Path, catalog: Catalog) -> ExampleIntake:
    return ExampleIntake(catalog, StoreLocation.parse(store), lambda spec: EMBEDDER)


def test_examples_need_the_key_and_are_served_once_added(
    serve: Serve, store_copy: Path, catalog: Catalog
) -> None:
    body = {"examples": [BAD, GOOD], "source": "crm-log"}
    with serve(store_copy, api_key=API_KEY, examples=intake(store_copy, catalog)) as client:
        before = client.get("/v1/index").json()["build_id"]
        denied = client.post("/v1/examples", json=body, headers={"Authorization": ""})
        assert_error(denied, 401, "unauthorized")
        assert StoreLocation.parse(store_copy).current() == before  # nothing happened

        response = client.post("/v1/examples", json=body)
        assert response.status_code == 200, response.text
        report = response.json()
        assert (report["accepted"], report["unchanged"], report["total"]) == (1, 0, 1)
        [rejected] = report["rejected"]
        assert rejected["where"] == "examples[0]" and "bad column" in rejected["reason"]
        assert report["build_id"] != before

        # the server picks the new build up as after any build, and routes by the example
        wait_until(lambda: client.get("/v1/index").json()["build_id"] == report["build_id"])
        assert client.get("/v1/index").json()["user_examples"] == 1
        answer = client.post(
            "/v1/retrieve", json={"question": "Which crooners come from the Hexagon?"}
        )
        assert answer.headers["X-Schemarag-Build"] == report["build_id"]
        first = answer.json()["examples"][0]
        assert (first["origin"], first["sql"]) == ("user", GOOD["sql"])

        again = client.post("/v1/examples", json=body).json()
        assert (again["accepted"], again["unchanged"], again["build_id"]) == (
            0,
            1,
            report["build_id"],
        )


def test_without_the_catalog_the_route_is_501_naming_the_option(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store) as client:
        error = assert_error(
            client.post("/v1/examples", json={"examples": [GOOD]}), 501, "not_configured"
        )
    assert "--source" in error["message"]


def test_a_running_build_is_409_with_retry_after(
    serve: Serve, store_copy: Path, catalog: Catalog
) -> None:
    with serve(store_copy, examples=intake(store_copy, catalog)) as client:
        with build_lock(StoreLocation.parse(store_copy)):
            response = client.post("/v1/examples", json={"examples": [GOOD]})
        error = assert_error(response, 409, "busy")
    assert "another build is running" in error["message"]
    assert response.headers["retry-after"] == "5"


def test_limits_on_count_fields_and_body_size(
    serve: Serve, store_copy: Path, catalog: Catalog
) -> None:
    options = ApiOptions(reload_interval_s=0.05, max_examples_body_bytes=4096)
    cases: list[tuple[dict[str, Any], str]] = [
        ({"examples": []}, "examples"),
        ({"examples": [GOOD, {**GOOD, "sql": "  "}]}, "examples[1].sql"),
        ({"examples": [{**GOOD, "extra": 1}]}, "examples[0].extra"),
        ({"examples": [GOOD, GOOD, {**GOOD, "question": "\x85"}]}, "examples[2].question"),
        ({"examples": [GOOD], "source": "has space"}, "source"),
        ({"examples": [{"question": "q", "db_id": "d"}]}, "examples[0].sql"),
    ]
    with serve(store_copy, examples=intake(store_copy, catalog), options=options) as client:
        for body, field in cases:
            assert_error(client.post("/v1/examples", json=body), 422, "invalid_request", field)
        big = {"examples": [GOOD] * 40}  # ~5 KB: over this route's limit
        error = assert_error(client.post("/v1/examples", json=big), 413, "body_too_large", "body")
        assert "4096" in error["message"]
        # the route's own limit is not the other routes' (32 KiB by default)
        long_question = {"question": "How many singers are there? " * 200}
        assert client.post("/v1/retrieve", json=long_question).status_code == 422
        assert (
            client.post("/v1/retrieve", json={"question": "How many singers?"}).status_code == 200
        )
