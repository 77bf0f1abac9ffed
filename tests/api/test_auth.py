"""The API key: every route but the health checks and the documentation needs
`Authorization: Bearer KEY` when a key is configured, compared in constant time; without a key
configured, nothing is asked. The documentation pages load offline, from the package."""

from __future__ import annotations

import hmac
import re
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import API_KEY, Serve, assert_error

QUESTION = {"question": "How many singers are from France?"}
PROTECTED = [
    ("POST", "/v1/retrieve", QUESTION),
    ("POST", "/v1/generate", QUESTION),
    ("GET", "/v1/index", None),
    ("GET", "/metrics", None),
    ("GET", "/no/such/route", None),
    ("GET", "/docs/nothing", None),
]


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_missing_key_is_401_on_every_protected_route(
    serve: Serve, built_store: Path, method: str, path: str, body: Any
) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        response = client.request(method, path, json=body, headers={"Authorization": ""})
        error = assert_error(response, 401, "unauthorized")
    assert "missing API key" in error["message"]
    assert response.headers["www-authenticate"] == "Bearer"


def test_wrong_and_malformed_keys_are_401(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        for header, words in [
            (f"Bearer {API_KEY}x", "invalid API key"),
            ("Bearer wrong", "invalid API key"),
            (f"Basic {API_KEY}", "malformed"),
            ("Bearer ", "malformed"),
            (API_KEY, "malformed"),
        ]:
            response = client.post("/v1/retrieve", json=QUESTION, headers={"Authorization": header})
            assert words in assert_error(response, 401, "unauthorized")["message"]


def test_right_key_is_served(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:  # the client sends the key
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200
        assert client.get("/v1/index").status_code == 200
        assert client.get("/metrics").status_code == 200
        lower = client.get("/v1/index", headers={"Authorization": f"bearer {API_KEY}"})
        assert lower.status_code == 200


def test_health_checks_need_no_key(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        for path in ("/healthz", "/readyz"):
            assert client.get(path, headers={"Authorization": ""}).status_code == 200


def test_key_is_compared_in_constant_time(
    serve: Serve, built_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    with serve(built_store, api_key=API_KEY) as client:
        client.get("/v1/index", headers={"Authorization": "Bearer nope"})
    assert (b"nope", API_KEY.encode()) in calls


def test_without_a_configured_key_nothing_is_asked(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200
        response = client.get("/v1/index", headers={"Authorization": "Bearer anything"})
        assert response.status_code == 200


def test_documentation_needs_no_key_and_loads_nothing_from_elsewhere(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        bare = {"Authorization": ""}
        assert client.get("/openapi.json", headers=bare).json()["info"]["title"] == "schemarag"
        for page in ("/docs", "/redoc"):
            response = client.get(page, headers=bare)
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/html")
            # every script, style sheet and icon the page loads, and the schema it reads
            links = re.findall(r'(?:src|href|spec-url)="([^"]+)"|\burl: \'([^\']+)', response.text)
            urls = {tag or script for tag, script in links}
            assert urls, page
            for url in urls:
                assert url.startswith("/"), (page, url)  # this server, no CDN
                assert client.get(url, headers=bare).status_code == 200, url
        assert client.get("/docs/oauth2-redirect", headers=bare).status_code == 200
        # the key still guards the data
        assert client.get("/v1/index", headers=bare).status_code == 401


def test_the_schema_declares_the_key_so_swagger_ui_can_send_it(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        schema = client.get("/openapi.json").json()
    scheme = schema["components"]["securitySchemes"]["apiKey"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    secured = {
        f"{method.upper()} {path}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if operation.get("security") == [{"apiKey": []}]
    }
    assert secured == {
        "POST /v1/retrieve",
        "POST /v1/generate",
        "POST /v1/examples",
        "POST /v1/sql/check",
        "GET /v1/index",
        "GET /metrics",
    }


def test_without_a_key_the_schema_declares_none(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        schema = client.get("/openapi.json").json()
    assert "securitySchemes" not in schema.get("components", {})
